// Runs the simulator as a standalone process: `npm run simulator -- --port 8080 --rpm 60`.
// Prints the base URL on stdout (first line, alone, so scripts can read it) and stops on SIGINT/SIGTERM.
import { PROFILES, READING_NAMES, READING_VALUES, parseReadingAssignment, type Profile, type Readings } from './readings';
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

function fail(msg: string): never {
	process.stderr.write(`${msg}\n\n${USAGE}`);
	process.exit(2);
}

function num(flag: string, v: string | undefined): number {
	const n = Number(v);
	if (v === undefined || v === '' || Number.isNaN(n)) fail(`${flag} needs a number`);
	return n;
}

function parseArgs(argv: string[]): { options: SimulatorOptions; seedTasks: number } {
	const options: SimulatorOptions = {};
	const faults: NonNullable<SimulatorOptions['faults']> = {};
	const tokens: string[] = [];
	const webhooks: WebhookTarget[] = [];
	const readings: Partial<Readings> = {};
	let secret: string | undefined;
	let signTimestamp = false;
	let seedTasks = 0;
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].startsWith('--') && argv[i].includes('=') ? argv[i].split(/=(.*)/s) : [argv[i], undefined];
		const value = (): string => {
			const v = inline ?? argv[++i];
			if (v === undefined) fail(`${flag} needs a value`);
			return v;
		};
		switch (flag) {
			case '--help':
			case '-h':
				process.stdout.write(USAGE);
				process.exit(0);
				break;
			case '--port':
				options.port = num(flag, value());
				break;
			case '--token':
				tokens.push(value());
				break;
			case '--rpm':
				options.requestsPerWindow = num(flag, value());
				break;
			case '--window-ms':
				options.windowMs = num(flag, value());
				break;
			case '--retry-after-on-limit':
				options.retryAfterOnLimit = true;
				break;
			case '--max-page-size':
				options.maxPageSize = num(flag, value());
				break;
			case '--max-batch-size':
				options.maxBatchSize = num(flag, value());
				break;
			case '--profile': {
				const p = value();
				if (!(PROFILES as readonly string[]).includes(p)) fail(`--profile must be one of ${PROFILES.join(', ')}`);
				options.profile = p as Profile;
				break;
			}
			case '--reading':
				try {
					Object.assign(readings, parseReadingAssignment(value()));
				} catch (e) {
					fail((e as Error).message);
				}
				break;
			case '--error-rate':
				faults.error5xxRate = num(flag, value());
				break;
			case '--rate-limit-rate':
				faults.rateLimitRate = num(flag, value());
				break;
			case '--retry-after-rate':
				faults.retryAfterRate = num(flag, value());
				break;
			case '--retry-after':
				faults.retryAfterSeconds = num(flag, value());
				break;
			case '--reset-rate':
				faults.resetRate = num(flag, value());
				break;
			case '--reset-after-effect-rate':
				faults.resetAfterEffectRate = num(flag, value());
				break;
			case '--latency': {
				const parts = value().split(',').map((p) => num(flag, p.trim()));
				faults.latencyMs = [parts[0], parts[1] ?? parts[0]];
				break;
			}
			case '--seed':
				options.seed = num(flag, value());
				break;
			case '--webhook':
				webhooks.push({ url: value() });
				break;
			case '--webhook-secret':
				secret = value();
				break;
			case '--sign-timestamp':
				signTimestamp = true;
				break;
			case '--persist':
				options.persistFile = value();
				break;
			case '--seed-tasks':
				seedTasks = num(flag, value());
				break;
			default:
				fail(`Unknown argument: ${argv[i]}`);
		}
	}
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
