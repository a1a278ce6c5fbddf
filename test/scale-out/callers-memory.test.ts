/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * What the process remembers between executions stays bounded (issue 31): 10,000 executions of Create or Update by
 * External ID, one ticket each, over 1,000 tokens (10 per token, 20 at a time), through n8n-core against the
 * simulator over real HTTP. A caller still busy is kept past the cap (a limiter stays busy for a window after its last
 * request: the server still counts it), so the credentials' window is 1 s: once it has passed and one more execution
 * has touched the registry, it holds at most MAX_CALLERS callers, and after a GC the heap has grown by less than
 * MEMORY_BOUND_MB; the figures go to the log.
 *
 * Not a timed test: the bound is on memory. It runs with the end-to-end files (one at a time) for its length.
 */
import { runInNewContext } from 'vm';
import { setFlagsFromString } from 'v8';

import { callerCount, MAX_CALLERS, resetCallers } from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, uidOf, upsertByTicket, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const EXECUTIONS = Number(process.env.CALLERS_MEMORY_EXECUTIONS ?? 10_000);
const TOKENS = 1_000;
/** The credentials' rate window: their limiters are idle this long after their last request. */
const WINDOW_SECONDS = 1;
const AT_ONCE = 20;
/**
 * The heap may grow by at most this much once every execution has ended (a caller's limiter, lanes, recent writes and
 * read memory: a few KB each, 1,000 callers at most; before the registry, 500 callers kept 27.6 MB).
 */
const MEMORY_BOUND_MB = 16;

const log = (line: string) => process.stderr.write(`[callers-memory] ${line}\n`);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
	gc();
	gc();
	return process.memoryUsage().heapUsed / 2 ** 20;
};

test(`${EXECUTIONS.toLocaleString('en')} executions over ${TOKENS.toLocaleString('en')} tokens leave at most ${MAX_CALLERS} callers and less than ${MEMORY_BOUND_MB} MB of heap after GC`, async () => {
	const tokens = Array.from({ length: TOKENS }, (_, i) => `memory-token-${i}`);
	sim.configure({ tokens });
	// One execution first, so that what every run loads once (modules, n8n-core's caches) is in the baseline.
	await runBacklog(sim, upsertByTicket, { items: [{ id: 'WARM', title: 'Warm' }] });
	resetCallers();
	const before = heapMb();
	const started = Date.now();
	for (let next = 0; next < EXECUTIONS; next += AT_ONCE) {
		const runs = await Promise.all(
			Array.from({ length: AT_ONCE }, (_, offset) => {
				const i = next + offset;
				return runBacklog(sim, upsertByTicket, {
					items: [{ id: `M-${i}`, title: `Ticket ${i}` }],
					credentials: { token: tokens[i % TOKENS], rateLimitWindowSeconds: WINDOW_SECONDS },
				});
			}),
		);
		for (const [offset, run] of runs.entries()) {
			expect(run.error).toBeUndefined();
			expect(run.json[0].uid).toBe(uidOf(`M-${next + offset}`));
		}
		// The simulator's own store is not what is measured: it is emptied as it goes.
		sim.reset();
	}
	const seconds = (Date.now() - started) / 1000;
	const keptAtEnd = callerCount();
	// The last windows pass; the next execution's touch walks the registry (callers/registry.ts prune).
	await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 1500));
	const last = await runBacklog(sim, upsertByTicket, {
		items: [{ id: 'LAST', title: 'Last' }],
		credentials: { token: tokens[0], rateLimitWindowSeconds: WINDOW_SECONDS },
	});
	expect(last.error).toBeUndefined();
	const after = heapMb();
	log(
		`${EXECUTIONS} executions in ${seconds.toFixed(1)} s; callers at the end ${keptAtEnd} (busy ones past the cap), after one more execution ${callerCount()}; heap ${before.toFixed(1)} MB before, ${after.toFixed(1)} MB after GC (+${(after - before).toFixed(1)} MB)`,
	);
	expect(callerCount()).toBeLessThanOrEqual(MAX_CALLERS);
	expect(after - before).toBeLessThan(MEMORY_BOUND_MB);
}, 900_000);
