/* eslint-disable @n8n/community-nodes/no-restricted-globals -- tool code, never ships */
// `npm run simulate -- --seeds N --start S`: runs N seeds of the seeded simulation (test/simulation/harness.ts) from
// seed S, prints one line per failing seed with the command that replays it, and a summary. Exit code 1 when a seed
// failed. The harness lives beside the tests (it runs the node through n8n-core like them); this tool is its
// command line, and the one tool that imports from test/.
//
// Replay: a seed replays exactly. The executions run in process on a virtual clock (the harness), so the same seed gives
// the same workload, faults, interleaving and requests, in the same order, on any machine: the replay command printed
// for a failing seed shows the same failure.
import { Arg, fail, readArgs, type FlagKind } from '../cli/args';
import { startSimulator } from '../simulator/simulator';
import { CI_FAMILIES, KNOWN_FAILING_FAMILIES } from '../../test/simulation/families';
import type { SeedResult } from '../../test/simulation/harness';
import { runSeed } from '../../test/simulation/harness';
import { runBurst, type BurstOptions } from '../../test/simulation/burst';
import { describeWorkload, FAMILIES, type Family } from '../../test/simulation/workload';

const USAGE = `Usage: npm run simulate -- [options]
  --seeds N           seeds to run (default 100)
  --start S           first seed (default 1)
  --max-execs K       executions per seed at most, 1 to 300 (default 60)
  --max-items N       items per execution at most, 1 to 200 (default 20)
  --all-faults        draw from every fault family, the known-failing ones too (default: the CI families)
  --families A,B      draw from these families only (${FAMILIES.length} in all: --list-families)
  --list-families     print the families and which are known to fail, and exit
  --verbose           print every seed's line, and each failing seed's workload
  --stop              stop at the first failing seed
  --log               print each failing seed's requests, one line each (ms from the phase's start)

Or, instead of seeds, the benchmark's main usage in process (test/simulation/burst.ts): N one-ticket executions of
Create or Update on one credential at 60 requests a minute, batch limit 50; prints the requests and the drain time.
  --burst N           executions (1 to 10000)
  --burst-bunch B     executions started together (default: all N)
  --burst-gap-ms G    between bunches (default 0)
  --burst-latency-ms L
                      each request's latency (default 20)
  --burst-real-clock  the real clock and real HTTP (n8n-core's own work takes time, as in real n8n)
  --burst-log         print every request
`;

const FLAGS: Record<string, FlagKind> = {
	'--seeds': 'value',
	'--start': 'value',
	'--max-execs': 'value',
	'--max-items': 'value',
	'--all-faults': 'switch',
	'--families': 'value',
	'--list-families': 'switch',
	'--verbose': 'switch',
	'--stop': 'switch',
	'--log': 'switch',
	'--burst': 'value',
	'--burst-bunch': 'value',
	'--burst-gap-ms': 'value',
	'--burst-latency-ms': 'value',
	'--burst-real-clock': 'switch',
	'--burst-log': 'switch',
};

interface Options {
	seeds: number;
	start: number;
	maxExecs: number;
	maxItems: number;
	families: Family[];
	/** The flags that chose the families, repeated in the replay command. */
	familyFlags: string;
	verbose: boolean;
	stop: boolean;
	keepLog: boolean;
	burst?: BurstOptions & { log: boolean };
}

function parse(argv: string[]): Options {
	const options: Options = {
		seeds: 100,
		start: 1,
		maxExecs: 60,
		maxItems: 20,
		families: CI_FAMILIES,
		familyFlags: '',
		verbose: false,
		stop: false,
		keepLog: false,
	};
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg: Arg) => {
		if (arg.flag === '--seeds') options.seeds = arg.int(1, 10_000_000);
		else if (arg.flag === '--start') options.start = arg.int(0, 2 ** 32 - 1);
		else if (arg.flag === '--max-execs') options.maxExecs = arg.int(1, 300);
		else if (arg.flag === '--max-items') options.maxItems = arg.int(1, 200);
		else if (arg.flag === '--all-faults') {
			options.families = [...FAMILIES];
			options.familyFlags = ' --all-faults';
		} else if (arg.flag === '--families') {
			const names = arg.list();
			const unknown = names.filter((name) => !(FAMILIES as readonly string[]).includes(name));
			if (unknown.length) fail(`Unknown families: ${unknown.join(', ')}`, USAGE);
			options.families = names as Family[];
			options.familyFlags = ` --families ${names.join(',')}`;
		} else if (arg.flag === '--list-families') {
			for (const family of FAMILIES)
				process.stdout.write(
					`${family.padEnd(44)} ${KNOWN_FAILING_FAMILIES[family] ? `KNOWN FAILING: ${KNOWN_FAILING_FAMILIES[family]}` : 'in CI'}\n`,
				);
			process.exit(0);
		} else if (arg.flag === '--verbose') options.verbose = true;
		else if (arg.flag === '--stop') options.stop = true;
		else if (arg.flag === '--log') options.keepLog = true;
		else if (arg.flag.startsWith('--burst')) burstFlag(arg, (options.burst ??= newBurst()));
	});
	if (options.burst && options.burst.events === 0) fail('--burst N is missing', USAGE);
	return options;
}

const newBurst = () => ({
	events: 0,
	bunch: 0,
	bunchGapMs: 0,
	latencyMs: 20,
	realClock: false,
	log: false,
});

function burstFlag(arg: Arg, burst: BurstOptions & { log: boolean }) {
	if (arg.flag === '--burst') burst.events = arg.int(1, 10_000);
	else if (arg.flag === '--burst-bunch') burst.bunch = arg.int(1, 10_000);
	else if (arg.flag === '--burst-gap-ms') burst.bunchGapMs = arg.int(0, 600_000);
	else if (arg.flag === '--burst-latency-ms') burst.latencyMs = arg.int(0, 60_000);
	else if (arg.flag === '--burst-real-clock') burst.realClock = true;
	else if (arg.flag === '--burst-log') burst.log = true;
}

async function burst(options: BurstOptions & { log: boolean }) {
	const sim = await startSimulator({ tokens: [] });
	try {
		const result = await runBurst(sim, { ...options, bunch: options.bunch || options.events });
		if (options.log) process.stdout.write(`${result.log.join('\n')}\n`);
		process.stdout.write(
			`${options.events} executions, ${options.bunch || options.events} at a time ${options.bunchGapMs} ms apart` +
				` (${options.realClock ? 'real' : 'virtual'} clock): ${result.requests} requests,` +
				` drained in ${(result.drainMs / 1000).toFixed(1)} s, ${result.failed} failed, ${result.stored} stored\n`,
		);
	} finally {
		await sim.stop();
	}
	process.exit(0);
}

function replay(options: Options, seed: number): string {
	const execs = options.maxExecs === 60 ? '' : ` --max-execs ${options.maxExecs}`;
	const items = options.maxItems === 20 ? '' : ` --max-items ${options.maxItems}`;
	return `npm run simulate -- --seeds 1 --start ${seed}${execs}${items}${options.familyFlags}`;
}

async function main() {
	const options = parse(process.argv.slice(2));
	if (options.burst) return await burst(options.burst);
	const sim = await startSimulator({ tokens: [] });
	const started = Date.now();
	const failed: SeedResult[] = [];
	let passed = 0;
	try {
		for (let seed = options.start; seed < options.start + options.seeds; seed++) {
			const result = await runSeed(sim, seed, options);
			const line = `seed ${seed}: ${result.execs} execution(s), ${result.items} item(s), ${result.requests} request(s) (${result.sharedRequests} shared), ${(result.ms / 1000).toFixed(1)} s (${(result.virtualMs / 1000).toFixed(1)} s virtual)`;
			if (result.failures.length === 0) {
				passed++;
				if (options.verbose) process.stdout.write(`${line}: ok\n`);
				continue;
			}
			failed.push(result);
			const kinds = [...new Set(result.failures.map((failure) => failure.invariant))].join(', ');
			process.stdout.write(`${line}: FAILED (${kinds})\n  replay: ${replay(options, seed)}\n`);
			for (const failure of result.failures.slice(0, 12))
				process.stdout.write(
					`  [${failure.invariant}]${failure.exec !== undefined ? ` exec ${failure.exec}:` : ''} ${failure.message}\n`,
				);
			if (result.failures.length > 12)
				process.stdout.write(`  ... and ${result.failures.length - 12} more\n`);
			if (options.verbose)
				process.stdout.write(`${describeWorkload(result.workload).join('\n')}\n`);
			if (result.requestLog) process.stdout.write(`${result.requestLog.join('\n')}\n`);
			if (options.stop) break;
		}
	} finally {
		await sim.stop();
	}
	const seconds = ((Date.now() - started) / 1000).toFixed(1);
	process.stdout.write(
		`\n${passed + failed.length} seed(s) in ${seconds} s: ${passed} found nothing, ${failed.length} failed` +
			`${failed.length ? ` (${failed.map((result) => result.seed).join(', ')})` : ''}\n` +
			`families: ${options.families.length === FAMILIES.length ? 'all' : options.families.join(', ')}\n`,
	);
	// Executions given up on (a hang) may still hold timers: exit rather than wait for them.
	process.exit(failed.length ? 1 : 0);
}

main().catch((error: unknown) => {
	process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
	process.exit(2);
});
