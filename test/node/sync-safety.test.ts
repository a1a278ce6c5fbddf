// Sync Backlog closes what is missing from its input: what keeps an ordinary n8n mistake from closing a backlog.
import type { IDataObject } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
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
	// Every row (one per ticket and per task closed, with its task), as versions 1 and 2 output by default.
	syncOutput: 'allRows',
	...extra,
});
const tickets = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, i) => ({
		id: `T-${from + i}`,
		title: `Ticket ${from + i}`,
	}));
/** The source's open tasks, as an earlier sync of tickets T-1 ... T-n left them an hour ago (past the grace period). */
const seedSource = (n: number) => {
	const seeded = sim.seedTasks(n, (i) => ({
		uid: uidOf(`T-${i + 1}`),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
	}));
	const uids = new Set(seeded.map((task) => task.uid));
	ageTasks(sim, 60 * 60_000, (task) => uids.has(task.uid));
	return seeded;
};
const closed = () => [...sim.tasks.values()].filter((task) => task.status === 'DONE').length;
/** Seeds a source of `open` tasks and syncs `items` with these Sync Options: the run goes through; how many it closed. */
async function closedBy(open: number, items: IDataObject[], syncOptions: IDataObject = {}) {
	seedSource(open);
	const run = await runBacklog(sim, sync({ syncOptions }), { items });
	expect(run.error).toBeUndefined();
	return closed();
}

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

	it('a source of 20 may close 10 tasks (Always Allow Closing Up To), half of it, whatever the 20 % share', async () => {
		expect(await closedBy(20, tickets(11, 20))).toBe(10);
	});

	it('Max Share to Close 100 allows closing most of the source', async () => {
		expect(await closedBy(40, tickets(1, 2), { maxCloseShare: 100 })).toBe(38);
	});

	it('a guard setting that is not a number from 0 to 100 is an error naming it', async () => {
		const run = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: '={{ "lots" }}' } }), {
			items: tickets(1, 2),
		});
		expect(run.error?.message).toMatch(/"Max Share to Close \(%\)" must be a number from 0 to 100/);
	});
});

describe('Sync Backlog: the mass-close guard on a small source (never all of it, never more than half by default)', () => {
	const stillOpen = () => [...sim.tasks.values()].filter((task) => task.status !== 'DONE').length;

	it('a source with 10 open tasks is not closed entirely by a 1-ticket input', async () => {
		seedSource(10);
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: [{ id: 'T-99', title: 'New ticket' }] });
		expect(run.error?.message).toMatch(
			/^Sync Backlog would close 10 of the 10 open tasks of source "helpdesk" \(100%\), every one of them;/,
		);
		expect(writesSent(sim)).toHaveLength(0);
		expect(closed()).toBe(0);
		expect(sim.tasks.has(uidOf('T-99'))).toBe(false);
	});

	it('11 open tasks and a 1-ticket input: the guard refuses, saying how many, which, and which option allows it', async () => {
		seedSource(11);
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: tickets(1, 1) });
		const message = run.error?.message ?? '';
		expect(message).toMatch(
			/^Sync Backlog would close 10 of the 11 open tasks of source "helpdesk" \(91%\), more than half of them;/,
		);
		expect(message).toMatch(/Some of them: external ID T-\d+, /);
		expect(message).toMatch(/Max Share to Close \(%\) to 91 or more \(100 turns the guard off\)/);
		expect(message).toMatch(/Always Allow Closing Up To to 11 or more/);
		expect(writesSent(sim)).toHaveLength(0);
		expect(stillOpen()).toBe(11);
	});

	it('closing every open task of a 2-task source needs Max Share 100 (or Always Allow Closing Up To raised above 10)', async () => {
		seedSource(2);
		const items = [{ id: 'T-9', title: 'Ticket 9' }];
		const refused = await runBacklog(sim, sync(), { items });
		expect(refused.error?.message).toMatch(/would close 2 of the 2 open tasks .*every one of them/);
		expect(closed()).toBe(0);
		const at99 = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: 99 } }), { items });
		expect(at99.error?.message).toMatch(/would close 2 of the 2 open tasks/);
		expect(closed()).toBe(0);
		const allowed = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: 100 } }), { items });
		expect(allowed.error).toBeUndefined();
		expect(closed()).toBe(2);
	});

	it('a source of 10 where the input closes 5 is allowed, 6 refused', async () => {
		seedSource(10);
		const six = await runBacklog(sim, sync(), { items: tickets(7, 10) });
		expect(six.error?.message).toMatch(/^Sync Backlog would close 6 of the 10 open tasks/);
		expect(closed()).toBe(0);
		const five = await runBacklog(sim, sync(), { items: tickets(6, 10) });
		expect(five.error).toBeUndefined();
		expect(closed()).toBe(5);
		expect(stillOpen()).toBe(5);
	});

	it('Dry Run shows the refusal on every row, and writes nothing', async () => {
		seedSource(11);
		sim.clearRequests();
		const run = await runBacklog(sim, sync({ dryRun: true }), { items: tickets(1, 1) });
		expect(run.error).toBeUndefined();
		expect(run.json.filter((json) => json.action === 'close')).toHaveLength(10);
		expect(run.json).toHaveLength(11);
		expect(
			run.json.every((json) =>
				/^Sync Backlog would close 10 of the 11 open tasks of source "helpdesk" \(91%\), more than half/.test(
					String(json.close_guard),
				),
			),
		).toBe(true);
		expect(writesSent(sim)).toHaveLength(0);
		expect(closed()).toBe(0);
	});

	it('a Max Share to Close that covers it allows it: 6 of 10 at 60 %', async () => {
		expect(await closedBy(10, tickets(7, 10), { maxCloseShare: 60 })).toBe(6);
	});

	it('Always Allow Closing Up To raised above 10 keeps its meaning: any share up to that number, even all', async () => {
		const items = [{ id: 'T-99', title: 'New ticket' }];
		expect(await closedBy(11, items, { closeAllowance: 11 })).toBe(11);
	});

	it("a source's only open task may be closed (a ticket closed, another opened)", async () => {
		expect(await closedBy(1, [{ id: 'T-2', title: 'Ticket 2' }])).toBe(1);
		expect(stillOpen()).toBe(1);
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
