/**
 * Changes callers make with an old `updated_at` (issue 32, item 4). Spec 2.2 accepts `updated_at` in task bodies, so
 * a caller may write its ticket's own time, hours old; `internal_updated_at` ("date-time or null") is not accepted in
 * bodies. Where the service fills internal_updated_at, the Poll Trigger keys on it and such a change is emitted;
 * where it is null, the trigger asks on updated_at alone, and a change dated before the window is not emitted (what
 * the README says). Each reading is set on both profiles; the trigger polls through n8n's PollContext over HTTP.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { startSimulator, type Simulator, type Task } from '../../tools/simulator/simulator';
import { TaskBacklogPollTrigger } from '../../nodes/TaskBacklogPollTrigger/TaskBacklogPollTrigger.node';
import { activePoller, pollTrigger, serviceApi, type Poller } from './harness';

const TOKEN = 'test-token';
const LONG_AGO = '2020-01-01T00:00:00.000Z';

/** Every leaf condition of a query body, groups flattened. */
function leaves(condition: unknown): IDataObject[] {
	if (!condition || typeof condition !== 'object') return [];
	const c = condition as IDataObject;
	if (Array.isArray(c.conditions)) return (c.conditions as unknown[]).flatMap(leaves);
	return [c];
}

describe.each(['lenient', 'strict'] as const)('on the %s profile', (profile) => {
	let sim: Simulator;
	afterEach(async () => await sim?.stop());

	const start = async (options: Parameters<typeof startSimulator>[0]) => {
		sim = await startSimulator({ tokens: [TOKEN], profile, ...options });
	};
	const poller = (parameters: INodeParameters): Poller => pollTrigger(sim, TOKEN, parameters);
	const api = serviceApi(() => sim.url, TOKEN);
	const patch = (uid: string, body: IDataObject) => api('PATCH', `/tasks/${uid}`, body);
	const uids = (output: INodeExecutionData[][] | null) =>
		(output?.[0] ?? []).map((item) => (item.json as unknown as Task).uid);
	const queries = () => sim.requests.filter((r) => r.path === '/tasks/query');
	const askedOn = (field: string) =>
		queries().some((r) =>
			leaves((r.body as IDataObject)?.condition).some((c) => c.field === field),
		);

	describe('where the service fills internal_updated_at (and keeps the updated_at a caller writes)', () => {
		const readings = { updatedAtFrom: 'body', internalStamps: 'filled' } as const;

		it('Updated Task emits a change saved with an updated_at from years ago, once, and the next one with the same updated_at too', async () => {
			await start({ readings });
			const [task] = sim.seedTasks(3);
			const p = poller({ event: 'updatedTask' });
			expect(await p.poll()).toBeNull();
			expect(await p.poll()).toBeNull();

			const saved = await patch(task.uid, {
				fields: { title: 'Mirrored from the ticket' },
				updated_at: LONG_AGO,
			});
			expect(saved.updated_at).toBe(LONG_AGO);
			expect(uids(await p.poll())).toEqual([task.uid]);
			expect(await p.poll()).toBeNull();

			// Another change, dated the same by the caller: another change all the same.
			await patch(task.uid, { fields: { title: 'Mirrored again' }, updated_at: LONG_AGO });
			expect(uids(await p.poll())).toEqual([task.uid]);
			expect(await p.poll()).toBeNull();
			expect(askedOn('internal_updated_at')).toBe(true);
		});

		it('New Task emits a task created with a created_at and updated_at from years ago', async () => {
			await start({ readings });
			sim.seedTasks(2);
			const p = poller({ event: 'newTask' });
			expect(await p.poll()).toBeNull();
			const task = await api('POST', '/tasks', {
				fields: { title: 'Imported ticket' },
				created_at: LONG_AGO,
				updated_at: LONG_AGO,
			});
			expect(uids(await p.poll())).toEqual([task.uid]);
			expect(await p.poll()).toBeNull();
		});

		it('Closed Task emits a task closed with an old updated_at and done_at, once', async () => {
			await start({ readings });
			const [task] = sim.seedTasks(2);
			const p = poller({ event: 'closedTask' });
			expect(await p.poll()).toBeNull();
			await patch(task.uid, { status: 'DONE', done_at: LONG_AGO, updated_at: LONG_AGO });
			expect(uids(await p.poll())).toEqual([task.uid]);
			await patch(task.uid, { fields: { title: 'Edited after closing' }, updated_at: LONG_AGO });
			expect(await p.poll()).toBeNull();
		});

		it('after a quiet hour (nothing in the first window), a few tasks read tell, and the first change dated long ago is emitted', async () => {
			await start({ readings });
			const seeded = sim.seedTasks(3);
			const hoursAgo = new Date(Date.now() - 3 * 3600_000).toISOString();
			for (const task of seeded)
				Object.assign(sim.tasks.get(task.uid)!, {
					updated_at: hoursAgo,
					internal_updated_at: hoursAgo,
				});
			const p = poller({ event: 'updatedTask' });
			expect(await p.poll()).toBeNull();
			const probes = sim.requests.filter((r) => r.method === 'GET' && r.path === '/tasks');
			expect(probes).toHaveLength(1);

			await patch(seeded[1].uid, {
				fields: { title: 'Changed, dated by the ticket' },
				updated_at: LONG_AGO,
			});
			expect(uids(await p.poll())).toEqual([seeded[1].uid]);
			// Decided once: no more reads to tell.
			expect(sim.requests.filter((r) => r.method === 'GET' && r.path === '/tasks')).toHaveLength(1);
		});

		it('a trigger started on an empty backlog: the first tasks read tell, and a change dated long ago in that same window is emitted by the next poll, each once', async () => {
			await start({ readings });
			// No lookback: only the window read again finds the dated change, saved before the newest one read.
			const p = poller({ event: 'updatedTask', options: { lookbackSeconds: 0 } });
			expect(await p.poll()).toBeNull();
			const [dated] = sim.seedTasks(1);
			await patch(dated.uid, { fields: { title: 'Dated by the ticket' }, updated_at: LONG_AGO });
			const [now] = sim.seedTasks(1);
			// This window asked on updated_at alone.
			expect(uids(await p.poll())).toEqual([now.uid]);
			expect(uids(await p.poll())).toEqual([dated.uid]);
			expect(await p.poll()).toBeNull();
		});

		it('a service whose query knows no internal_updated_at: one refused query, then updated_at alone, and changes with a current updated_at are emitted once', async () => {
			await start({ readings, queryUnknownFields: ['internal_updated_at'] });
			const [a, b] = sim.seedTasks(2);
			const p = poller({ event: 'updatedTask' });
			expect(await p.poll()).toBeNull();
			await patch(a.uid, { fields: { title: 'Changed now' } });
			expect(uids(await p.poll())).toEqual([a.uid]);
			expect(queries().filter((r) => r.status === 422)).toHaveLength(1);

			await patch(b.uid, { fields: { title: 'Changed now too' } });
			expect(uids(await p.poll())).toEqual([b.uid]);
			expect(await p.poll()).toBeNull();
			expect(queries().filter((r) => r.status === 422)).toHaveLength(1);
			// What it cannot see there: a change dated before the window.
			await patch(b.uid, { fields: { title: 'Dated by the ticket' }, updated_at: LONG_AGO });
			expect(await p.poll()).toBeNull();
		});
		it("a state saved by version 0.1.0 (each emission's updated_at in `seen`) emits no change again after the upgrade, and the next change once", async () => {
			await start({ readings });
			const [task] = sim.seedTasks(1);
			// A change dated a few seconds back by the caller, which 0.1.0 emitted, remembering its updated_at.
			const dated = new Date(Date.now() - 5_000).toISOString();
			const saved = await patch(task.uid, {
				fields: { title: 'From the ticket' },
				updated_at: dated,
			});
			expect(Date.parse(saved.internal_updated_at!)).toBeGreaterThan(Date.parse(dated));
			const p = activePoller({
				nodeType: new TaskBacklogPollTrigger(),
				parameters: { event: 'updatedTask' },
				credentials: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 100000 },
				staticData: {
					state: { event: 'updatedTask', position: dated, seen: { [task.uid]: dated } },
				},
			});
			expect(await p.poll()).toBeNull();
			expect(await p.poll()).toBeNull();
			await patch(task.uid, { fields: { title: 'Changed after the upgrade' } });
			expect(uids(await p.poll())).toEqual([task.uid]);
			expect(await p.poll()).toBeNull();
		});
	});

	describe('where the service leaves internal_updated_at null', () => {
		const readings = { updatedAtFrom: 'body', internalStamps: 'null' } as const;

		it('the window asks on updated_at alone (a condition on a null field would match nothing): every change with a current updated_at is emitted once; one dated before the window is not, as the README says', async () => {
			await start({ readings });
			const [a, b] = sim.seedTasks(2);
			expect(sim.tasks.get(a.uid)!.internal_updated_at).toBeNull();
			const p = poller({ event: 'updatedTask' });
			expect(await p.poll()).toBeNull();
			await patch(a.uid, { fields: { title: 'Changed now' } });
			expect(uids(await p.poll())).toEqual([a.uid]);
			expect(await p.poll()).toBeNull();

			await patch(b.uid, { fields: { title: 'Dated by the ticket' }, updated_at: LONG_AGO });
			expect(await p.poll()).toBeNull();
			await patch(b.uid, { fields: { title: 'Changed now, after' } });
			expect(uids(await p.poll())).toEqual([b.uid]);
			expect(askedOn('internal_updated_at')).toBe(false);
			expect(askedOn('updated_at')).toBe(true);
		});
	});
});
