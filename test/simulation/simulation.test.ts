// The seeded simulation in CI (issue 44, item 2): a fixed set of seeds, each K executions of the node at once through
// n8n-core against the simulator, in process and on a virtual clock (harness.ts), with the fault families today's code
// survives (families.ts). A failing seed names the command that runs it again, exactly:
// `npm run simulate -- --seeds 1 --start <seed> ...`.
//
// 500 seeds of at most 10 executions of at most 4 items, with the replay test: 72 s in jest on this 2-core machine at a
// load average of 5 (57 s of CPU), 133 s at a load average of 20-38; the CLI ran the 500 seeds in 89 s at a load of 22
// (about 7 seeds a second of CPU). Over real HTTP on the real clock, 40 seeds took 65-85 s.
import type { Simulator } from '../../tools/simulator/simulator';
import { startSimulator } from '../../tools/simulator/simulator';
import { CI_FAMILIES, KNOWN_FAILING_FAMILIES } from './families';
import { runSeed, type SimulationOptions } from './harness';
import { describeWorkload } from './workload';

/** The seeds CI runs: CI_START to CI_START + CI_SEEDS - 1. */
export const CI_START = 1;
export const CI_SEEDS = 500;
export const CI_MAX_EXECS = 10;
export const CI_MAX_ITEMS = 4;

/**
 * Seeds of the CI set that fail on today's main, each with what fails: they run as expected failures (it.failing), so
 * that a fix shows as a test to move back (a failing seed found in CI is a one-line reproduction, not noise).
 */
export const KNOWN_FAILING_SEEDS: Record<number, string> = {
	// None. Seeds 201 and 245 failed until a bulk read that failed with the caller's probe (a task another execution
	// wrote, asked for last to confirm the server applied the whole list) was asked again without it (tasks/send.ts).
};

let sim: Simulator;
beforeAll(async () => {
	sim = await startSimulator({ tokens: [] });
});
afterAll(async () => await sim?.stop());

const options: SimulationOptions = {
	families: CI_FAMILIES,
	maxExecs: CI_MAX_EXECS,
	maxItems: CI_MAX_ITEMS,
	seedTimeoutMs: 50_000,
};

const families = Object.keys(KNOWN_FAILING_FAMILIES).length ? ' (CI families)' : '';

describe(`The seeded simulation: seeds ${CI_START} to ${CI_START + CI_SEEDS - 1}${families}`, () => {
	const seeds = Array.from({ length: CI_SEEDS }, (_, i) => CI_START + i);
	const check = async (seed: number) => {
		const result = await runSeed(sim, seed, options);
		const report = result.failures.map(
			(failure) =>
				`[${failure.invariant}]${failure.exec !== undefined ? ` exec ${failure.exec}:` : ''} ${failure.message}`,
		);
		if (report.length)
			report.unshift(
				`replay: npm run simulate -- --seeds 1 --start ${seed} --max-execs ${CI_MAX_EXECS} --max-items ${CI_MAX_ITEMS}`,
				...describeWorkload(result.workload),
			);
		expect(report).toEqual([]);
	};
	const name =
		'seed %i: every execution gets its own outcome, sees no other, writes once, within the limit';
	it.each(seeds.filter((seed) => !(seed in KNOWN_FAILING_SEEDS)))(name, check, 30_000);
	const known = seeds.filter((seed) => seed in KNOWN_FAILING_SEEDS);
	if (known.length) it.failing.each(known)(`${name} (known failing)`, check, 30_000);
});

describe('The seeded simulation replays', () => {
	it('one seed replays exactly: two runs of seed S give the same requests in the same order', async () => {
		// Seed 3 at up to 60 executions: 35 of them, 5 cancelled, 9 with item faults, transient faults, a shared request.
		const replay: SimulationOptions = { families: CI_FAMILIES, maxExecs: 60, keepLog: true };
		const first = await runSeed(sim, 3, replay);
		const second = await runSeed(sim, 3, replay);
		expect(first.requestLog!.length).toBeGreaterThan(100);
		expect(second.requestLog).toEqual(first.requestLog);
	}, 60_000);
});
