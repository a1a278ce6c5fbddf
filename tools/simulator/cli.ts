/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// Runs the simulator as a standalone process: `npm run simulator -- --port 8080 --rpm 60`.
// Prints the base URL on stdout (first line, alone, so scripts can read it) and stops on SIGINT/SIGTERM.
import { Arg, ArgsError, readArgs, type FlagKind } from '../cli/args';
import {
	PROFILES,
	READING_NAMES,
	READING_VALUES,
	parseReadingAssignment,
	type Profile,
	type Readings,
} from './readings';
import { startSimulator, type SimulatorOptions, type WebhookTarget } from './simulator';

const USAGE = `Usage: node .build/tools/simulator/cli.js [options]
  --port N               port on 127.0.0.1 (default 0 = free port)
  --token T              accepted bearer token, repeatable (default test-token)
  --rpm N                requests allowed per window per token (default: no limit)
  --window-ms N          rate-limit window length in ms (default 60000)
  --retry-after-on-limit send Retry-After with the window limiter's 429
  --max-page-size N      largest page size (default 100)
  --max-batch-size N     largest batch (default 1000; 50 under --profile strict)
  --profile P            how to read the spec's open points: lenient (default, the friendly reading of each)
                         or strict (the unfriendly one)
  --reading NAME=VALUE   set one reading, overriding the profile; repeatable. Readings and values:
${READING_NAMES.map((n) => {
	const v = READING_VALUES[n];
	return `                           ${n}: ${v === 'number' ? 'positive integer' : v.join(' | ')}`;
}).join('\n')}
                         (tools/simulator/README.md explains each and its spec text)
  --error-rate F         fraction of requests answered 500/502/503
  --rate-limit-rate F    fraction of requests answered 429
  --retry-after-rate F   fraction of injected 429/503 that carry Retry-After
  --retry-after S        Retry-After value in seconds (default 1)
  --reset-rate F         fraction of requests whose connection is reset
  --reset-after-effect-rate F  fraction whose work is done before the connection is reset
  --latency MIN,MAX      added latency range in ms
  --seed N               seed of the fault generator
  --webhook URL          deliver task events to URL, repeatable
  --webhook-secret S     HMAC secret for every --webhook
  --sign-timestamp       HMAC covers "<timestamp>.<body>" instead of the body
  --persist FILE         keep state in FILE across restarts
  --seed-tasks N         insert N tasks at start
`;

const FLAGS: Record<string, FlagKind> = {
	'--port': 'value',
	'--token': 'value',
	'--rpm': 'value',
	'--window-ms': 'value',
	'--retry-after-on-limit': 'switch',
	'--max-page-size': 'value',
	'--max-batch-size': 'value',
	'--profile': 'value',
	'--reading': 'value',
	'--error-rate': 'value',
	'--rate-limit-rate': 'value',
	'--retry-after-rate': 'value',
	'--retry-after': 'value',
	'--reset-rate': 'value',
	'--reset-after-effect-rate': 'value',
	'--latency': 'value',
	'--seed': 'value',
	'--webhook': 'value',
	'--webhook-secret': 'value',
	'--sign-timestamp': 'switch',
	'--persist': 'value',
	'--seed-tasks': 'value',
};

function parseArgs(argv: string[]): { options: SimulatorOptions; seedTasks: number } {
	const options: SimulatorOptions = {};
	const faults: NonNullable<SimulatorOptions['faults']> = {};
	const tokens: string[] = [];
	const webhooks: WebhookTarget[] = [];
	const readings: Partial<Readings> = {};
	let secret: string | undefined;
	let signTimestamp = false;
	let seedTasks = 0;
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--port':
				options.port = arg.number();
				break;
			case '--token':
				tokens.push(arg.text());
				break;
			case '--rpm':
				options.requestsPerWindow = arg.number();
				break;
			case '--window-ms':
				options.windowMs = arg.number();
				break;
			case '--retry-after-on-limit':
				options.retryAfterOnLimit = true;
				break;
			case '--max-page-size':
				options.maxPageSize = arg.number();
				break;
			case '--max-batch-size':
				options.maxBatchSize = arg.number();
				break;
			case '--profile':
				options.profile = arg.oneOf<Profile>(PROFILES);
				break;
			case '--reading':
				try {
					Object.assign(readings, parseReadingAssignment(arg.text()));
				} catch (e) {
					throw new ArgsError((e as Error).message);
				}
				break;
			case '--error-rate':
				faults.error5xxRate = arg.number();
				break;
			case '--rate-limit-rate':
				faults.rateLimitRate = arg.number();
				break;
			case '--retry-after-rate':
				faults.retryAfterRate = arg.number();
				break;
			case '--retry-after':
				faults.retryAfterSeconds = arg.number();
				break;
			case '--reset-rate':
				faults.resetRate = arg.number();
				break;
			case '--reset-after-effect-rate':
				faults.resetAfterEffectRate = arg.number();
				break;
			case '--latency': {
				const parts = arg
					.text()
					.split(',')
					.map((p) => new Arg(arg.flag, p.trim()).number());
				faults.latencyMs = [parts[0], parts[1] ?? parts[0]];
				break;
			}
			case '--seed':
				options.seed = arg.number();
				break;
			case '--webhook':
				webhooks.push({ url: arg.text() });
				break;
			case '--webhook-secret':
				secret = arg.text();
				break;
			case '--sign-timestamp':
				signTimestamp = true;
				break;
			case '--persist':
				options.persistFile = arg.text();
				break;
			case '--seed-tasks':
				seedTasks = arg.number();
				break;
		}
	});
	if (tokens.length) options.tokens = tokens;
	if (Object.keys(readings).length) options.readings = readings;
	if (Object.keys(faults).length) options.faults = faults;
	if (webhooks.length) options.webhooks = webhooks.map((w) => ({ ...w, secret, signTimestamp }));
	return { options, seedTasks };
}

async function main(): Promise<void> {
	const { options, seedTasks } = parseArgs(process.argv.slice(2));
	const sim = await startSimulator(options);
	if (seedTasks > 0) sim.seedTasks(seedTasks);
	process.stdout.write(`${sim.url}\n`);
	process.stderr.write(
		`Task Backlog simulator: ${sim.tasks.size} tasks, tokens ${(options.tokens ?? ['test-token']).length}, ` +
			`profile ${options.profile ?? 'lenient'}${options.readings ? ` with ${JSON.stringify(options.readings)}` : ''}, ` +
			`control at http://127.0.0.1:${sim.port}/_sim/state. Ctrl-C to stop.\n`,
	);
	let stopping = false;
	const stop = (): void => {
		if (stopping) return;
		stopping = true;
		sim.stop().then(
			() => process.exit(0),
			(e) => {
				process.stderr.write(`${String(e)}\n`);
				process.exit(1);
			},
		);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((e) => {
	process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
	process.exit(1);
});
