// Sync Backlog closes what is missing from its input: what keeps an ordinary n8n mistake from closing a backlog.
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/tasks/identity';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, useSimulator, writesSent } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
const sync = (extra: Record<string, unknown> = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	...extra,
});
const tickets = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, i) => ({
		id: `T-${from + i}`,
		title: `Ticket ${from + i}`,
	}));
/** The source's open tasks, as an earlier sync of tickets T-1 ... T-n left them. */
const seedSource = (n: number) =>
	sim.seedTasks(n, (i) => ({
		uid: uidOf(`T-${i + 1}`),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
	}));
const closed = () => [...sim.tasks.values()].filter((task) => task.status === 'DONE').length;

describe('Sync Backlog: the mass-close guard', () => {
	it('an input cut to its first page (100 of 290 tickets) fails before any write, saying how many it would close and how to allow it', async () => {
		seedSource(290);
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: tickets(1, 100) });
		expect(run.error?.message).toMatch(
			/^Sync Backlog would close 190 of the 290 open tasks of source "helpdesk" \(66%\)/,
		);
		expect(run.error?.message).toMatch(/Some of them: external ID T-\d+, /);
		expect((run.error as { description?: string }).description).toMatch(/Max Share to Close/);
		expect(writesSent(sim)).toHaveLength(0);
		expect(closed()).toBe(0);
	});

	it('Dry Run shows the same: the plan, and on each row what the guard would say', async () => {
		seedSource(50);
		const run = await runBacklog(sim, sync({ dryRun: true }), { items: tickets(1, 10) });
		expect(run.error).toBeUndefined();
		expect(run.json.filter((json) => json.action === 'close')).toHaveLength(40);
		expect(
			run.json.every((json) =>
				/^Sync Backlog would close 40 of the 50 open tasks/.test(String(json.close_guard)),
			),
		).toBe(true);
		expect(writesSent(sim)).toHaveLength(0);
	});

	it('a normal run is not stopped: 20 of 290 tickets closed since the last sync (7%)', async () => {
		seedSource(290);
		const run = await runBacklog(sim, sync(), { items: tickets(21, 290) });
		expect(run.error).toBeUndefined();
		expect(closed()).toBe(20);
		expect(run.json.some((json) => 'close_guard' in json)).toBe(false);
	});

	it('a small source may always close up to 10 tasks, whatever their share', async () => {
		seedSource(12);
		const run = await runBacklog(sim, sync(), { items: tickets(11, 12) });
		expect(run.error).toBeUndefined();
		expect(closed()).toBe(10);
	});

	it('Max Share to Close 100 allows closing most of the source', async () => {
		seedSource(40);
		const run = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: 100 } }), {
			items: tickets(1, 2),
		});
		expect(run.error).toBeUndefined();
		expect(closed()).toBe(38);
	});

	it('a guard setting that is not a number from 0 to 100 is an error naming it', async () => {
		const run = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: '={{ "lots" }}' } }), {
			items: tickets(1, 2),
		});
		expect(run.error?.message).toMatch(/"Max Share to Close \(%\)" must be a number from 0 to 100/);
	});
});

describe('Sync Backlog with Execute Once is an error', () => {
	it('refuses before any request, instead of closing every other ticket', async () => {
		seedSource(3);
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: tickets(1, 3), executeOnce: true });
		expect(run.error?.message).toBe('Sync Backlog cannot run with Execute Once');
		expect(sim.requests).toHaveLength(0);
		expect(closed()).toBe(0);
	});
});

describe('Sync Backlog and archived tasks', () => {
	it('a ticket whose task is DONE and archived is found: the row says unarchive, and the task is open and unarchived', async () => {
		seedSource(3);
		sim.seedTasks(1, () => ({
			uid: uidOf('T-9'),
			status: 'DONE',
			archived: true,
			fields: { title: 'Ticket 9', ticket_id: 'T-9', source: 'helpdesk', note: 'kept' },
		}));
		const run = await runBacklog(sim, sync(), {
			items: [...tickets(1, 3), { id: 'T-9', title: 'Ticket 9' }],
		});
		expect(run.error).toBeUndefined();
		const row = run.json.find((json) => json.external_id === 'T-9')!;
		expect(row.action).toBe('unarchive');
		const task = sim.tasks.get(uidOf('T-9'))!;
		expect([task.status, task.archived]).toEqual(['TODO', false]);
		expect(task.fields.note).toBe('kept');
		expect(sim.tasks.size).toBe(4);
	});
});
