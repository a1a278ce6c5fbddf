/**
 * Poll Trigger leftovers (issue 18, "Measured" 11): a task closed with a done_at from the past is still a closing
 * (the window is on updated_at), and the saved position never moves past the start of the poll, so a stamp from a
 * clock ahead cannot hide the changes still to come. The trigger polls through n8n's PollContext against the
 * simulator over HTTP, on both profiles.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { type PollState, selectChanges } from '../../nodes/TaskBacklogPollTrigger/changes';

import { startSimulator, type Simulator, type Task } from '../../tools/simulator/simulator';
import { pollTrigger, serviceApi, type Poller } from './harness';

const TOKEN = 'test-token';

describe.each(['lenient', 'strict'] as const)('on the %s profile', (profile) => {
	let sim: Simulator;

	beforeEach(async () => {
		sim = await startSimulator({ tokens: [TOKEN], profile });
	});
	afterEach(async () => await sim.stop());

	const poller = (parameters: INodeParameters): Poller => pollTrigger(sim, TOKEN, parameters);
	const api = serviceApi(() => sim.url, TOKEN);
	const create = (title: string) => api('POST', '/tasks', { fields: { title } });
	const patch = (uid: string, body: IDataObject) => api('PATCH', `/tasks/${uid}`, body);
	const uids = (output: INodeExecutionData[][] | null) =>
		(output?.[0] ?? []).map((item) => (item.json as unknown as Task).uid);
	const position = (p: Poller) =>
		Date.parse(((p.staticData().state as IDataObject).position as string) ?? '');

	it('Closed Task emits a task closed with a back-dated done_at, once', async () => {
		const p = poller({ event: 'closedTask' });
		expect(await p.poll()).toBeNull();
		const task = await create('Closed elsewhere last year');
		expect(await p.poll()).toBeNull();

		const closed = await patch(task.uid, { status: 'DONE', done_at: '2024-06-01T08:00:00Z' });
		expect(Date.parse(closed.done_at!)).toBe(Date.parse('2024-06-01T08:00:00Z'));
		expect(uids(await p.poll())).toEqual([task.uid]);

		// Read again inside the lookback, then edited: the same closing, not emitted again.
		expect(await p.poll()).toBeNull();
		await patch(task.uid, { fields: { title: 'Closed elsewhere last year (edited)' } });
		expect(await p.poll()).toBeNull();
	});

	it('Closed Task still emits a task closed now, and a reopened task closed again', async () => {
		const p = poller({ event: 'closedTask' });
		await p.poll();
		const task = await create('To close');
		await patch(task.uid, { status: 'DONE' });
		expect(uids(await p.poll())).toEqual([task.uid]);
		await patch(task.uid, { status: 'TODO' });
		expect(await p.poll()).toBeNull();
		await patch(task.uid, { status: 'DONE', done_at: '2024-06-02T08:00:00Z' });
		expect(uids(await p.poll())).toEqual([task.uid]);
	});

	it('a task stamped minutes ahead of the clock does not move the position past the changes still to come', async () => {
		// A task already there tells the first poll how the service stamps writes (otherwise the first window that
		// shows it is read again, from the position before it).
		await create('Already there');
		const p = poller({ event: 'updatedTask' });
		await p.poll();
		const ahead = await create('Stamped by a clock 5 minutes ahead');
		// The service saved it with a stamp from a clock ahead of ours (within the 10 minutes the trigger accepts).
		const stamp = new Date(Date.now() + 5 * 60_000).toISOString();
		const stored = sim.tasks.get(ahead.uid)!;
		Object.assign(stored, {
			updated_at: stamp,
			internal_updated_at: stored.internal_updated_at === null ? null : stamp,
		});
		const pollStart = Date.now();
		expect(uids(await p.poll())).toEqual([ahead.uid]);
		expect(position(p)).toBeLessThanOrEqual(Date.now());
		expect(position(p)).toBeGreaterThanOrEqual(pollStart);

		// A change stamped by the right clock, after the poll: emitted by the next poll; the early one is not repeated.
		const later = await create('Saved after the poll');
		expect(uids(await p.poll())).toEqual([later.uid]);
		expect(await p.poll()).toBeNull();
	});
});

describe('Closed Task state saved by an earlier version', () => {
	it('a state whose seen map holds done_at values does not emit those closings again', () => {
		const now = Date.parse('2025-03-01T12:00:00Z');
		const task = {
			uid: 'a',
			status: 'DONE',
			done_at: '2025-03-01T11:59:00Z',
			updated_at: '2025-03-01T11:59:30Z',
		};
		const saved: PollState = {
			event: 'closedTask',
			position: '2025-03-01T11:59:30Z',
			seen: { a: '2025-03-01T11:59:00Z' },
		};
		const { emit, next } = selectChanges(saved, [task], () => true, 60_000, now);
		expect(emit).toEqual([]);
		expect(next.closed).toEqual({ a: '2025-03-01T11:59:00Z' });
		expect(next.seen).toEqual({ a: '2025-03-01T11:59:30Z' });
	});
});
