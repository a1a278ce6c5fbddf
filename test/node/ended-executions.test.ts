/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// Waiting holds what a request needs, never a whole execution (issue 44): once the executions that shared a caller's
// lanes have ended, none of their execution contexts (n8n's helpers, their items, their credential) is reachable,
// though the caller's lanes are still there for the next execution.

import { runInNewContext } from 'vm';
import { setFlagsFromString } from 'v8';
import type { IExecuteFunctions } from 'n8n-workflow';

import { callerCount } from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, uidOf, upsertByTicket, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ticket = (i: number, title = `Event ${i}`) => ({ id: `E-${i}`, title });

/** Resolves once a request that mentions `text` (path or body) has reached the server and is not answered yet. */
async function underWay(text: string): Promise<void> {
	const mentions = (request: { path: string; body?: unknown; status: number }) =>
		request.status === 0 && `${request.path} ${JSON.stringify(request.body ?? '')}`.includes(text);
	const until = Date.now() + 10_000;
	while (!sim.requests.some(mentions)) {
		if (Date.now() > until) throw new Error(`No request mentioning ${text} went`);
		await pause(2);
	}
}

/** Contexts still reachable after a full GC, waiting up to `ms` for what an ended execution left under way to finish. */
async function stillReachable(refs: Array<WeakRef<object>>, ms: number): Promise<number> {
	const until = Date.now() + ms;
	for (;;) {
		// Twice, with a turn of the event loop between: a WeakRef is cleared only after the job that made it ends.
		await pause(10);
		gc();
		await pause(10);
		gc();
		const kept = refs.filter((ref) => ref.deref() !== undefined).length;
		if (kept === 0 || Date.now() >= until) return kept;
		await pause(100);
	}
}

describe('After executions that shared lanes end, nothing of them is reachable', () => {
	// A lane keeps of a waiting execution its entries, a number and its cancel signal, never its client: the cancelled
	// execution leaves the lane at once, and its frame (which holds its client) ends.
	it('an execution cancelled while it waits for a write turn is collected at once, while the turn before it is still under way', async () => {
		// The opener’s PUT takes 5 s; the other execution's read is answered at once, and its write then waits for the
		// next turn of the write lane, behind the opener's. n8n cancels it 300 ms after it started.
		const opener = uidOf('E-100');
		sim.configure({
			faults: {
				latencyMs: [5000, 5000],
				only: (req) => req.method === 'PUT' && req.path.includes(opener),
			},
		});
		const contexts: Array<WeakRef<IExecuteFunctions>> = [];
		const openerRun = runBacklog(sim, upsertByTicket, { items: [ticket(100)] });
		await underWay(opener);
		await runBacklog(sim, upsertByTicket, {
			items: [ticket(1)],
			cancelAfterMs: 300,
			onContext: (context) => contexts.push(new WeakRef(context)),
		});
		expect(contexts).toHaveLength(1);
		expect(await stillReachable(contexts, 2000)).toBe(0);
		// It was collected before the turn ahead of it ended, not once the lane moved on.
		expect(sim.requests.some((request) => request.status === 0)).toBe(true);
		expect((await openerRun).error).toBeUndefined();
		expect(sim.tasks.has(uidOf('E-1'))).toBe(false);
	}, 30_000);

	it('one cancelled while it sends a shared turn, one refused, the others written: every execution context is collected while the caller’s lanes remain', async () => {
		const SECRET = 'REFUSED-9031';
		// Every PUT takes 300 ms: the opener's is under way while the others wait for the next write turn together.
		sim.configure({
			refuseContent: [SECRET],
			faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' },
		});
		const contexts: Array<WeakRef<IExecuteFunctions>> = [];
		const onContext = (context: IExecuteFunctions) => contexts.push(new WeakRef(context));
		const outcomes = await (async () => {
			const opener = runBacklog(sim, upsertByTicket, { items: [ticket(100)], onContext });
			await underWay(uidOf('E-100'));
			// The first to wait sends the next turn, and is cancelled while that request is under way.
			const cancelledRun = runBacklog(sim, upsertByTicket, {
				items: [ticket(0)],
				cancelWhen: underWay(uidOf('E-0')),
				onContext,
			});
			await pause(20);
			const others = Array.from({ length: 6 }, (_, i) =>
				runBacklog(sim, upsertByTicket, {
					items: [ticket(i + 1, i === 2 ? `Invoice ${SECRET}` : `Event ${i + 1}`)],
					onContext,
				}),
			);
			const runs = await Promise.all([opener, cancelledRun, ...others]);
			return runs.map((run) => (run.error ? 'failed' : 'written'));
		})();
		// What the test is about happened: 8 executions, the refused one failed, the others (bar the cancelled) written.
		expect(contexts).toHaveLength(8);
		expect(outcomes[4]).toBe('failed');
		for (const i of [1, 2, 4, 5, 6])
			expect(sim.tasks.get(uidOf(`E-${i}`))?.fields.title).toBe(`Event ${i}`);
		expect(callerCount()).toBeGreaterThan(0);

		expect(await stillReachable(contexts, 3000)).toBe(0);
		// The lanes were not dropped to get there: the caller's state is still in the registry.
		expect(callerCount()).toBeGreaterThan(0);
	}, 30_000);
});
