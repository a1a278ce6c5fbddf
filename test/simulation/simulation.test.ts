// The seeded simulation in CI (issue 44, item 2): a fixed set of seeds, each K executions of the node at once through
// n8n-core against the simulator, with the fault families today's code survives (families.ts). A failing seed names
// the command that runs it again: `npm run simulate -- --seeds 1 --start <seed> ...`.
//
// Not yet what the issue asks for, said plainly: the executions talk to the simulator over real HTTP on 127.0.0.1 on
// the real clock (harness.ts), so a seed replays its workload and faults but not its interleaving, and each request
// costs n8n-core's whole HTTP stack: 40 seeds of at most 10 executions of at most 4 items took about 90 s here
// (30 took 65 s on a loaded 2-core machine), not 500 under two minutes.
import type { Simulator } from '../../tools/simulator/simulator';
import { startSimulator } from '../../tools/simulator/simulator';
import { CI_FAMILIES, KNOWN_FAILING_FAMILIES } from './families';
import { runSeed } from './harness';
import { describeWorkload } from './workload';

/** The seeds CI runs: CI_START to CI_START + CI_SEEDS - 1. */
export const CI_START = 1;
export const CI_SEEDS = 40;
export const CI_MAX_EXECS = 10;
export const CI_MAX_ITEMS = 4;

let sim: Simulator;
beforeAll(async () => {
	sim = await startSimulator({ tokens: [] });
});
afterAll(async () => await sim?.stop());

const families = Object.keys(KNOWN_FAILING_FAMILIES).length ? ' (CI families)' : '';

describe(`The seeded simulation: seeds ${CI_START} to ${CI_START + CI_SEEDS - 1}${families}`, () => {
	it.each(Array.from({ length: CI_SEEDS }, (_, i) => CI_START + i))(
		'seed %i: every execution gets its own outcome, sees no other, writes once, within the limit',
		async (seed) => {
			const result = await runSeed(sim, seed, {
				families: CI_FAMILIES,
				maxExecs: CI_MAX_EXECS,
				maxItems: CI_MAX_ITEMS,
				seedTimeoutMs: 50_000,
			});
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
		},
		60_000,
	);
});
