// What Sync Backlog outputs (issue 46, item 3): version 3 gives one item per task created, updated, reopened, restored
// or closed and a summary item; Summary Only gives the summary; Every Row gives what versions 1 and 2 give by default,
// a row per ticket and per task closed or kept open with its task. Pairing: a ticket's item with its input item, a
// closed task's item and the summary with input item 0. Runs on both profiles (unit, unit-strict).
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
import { runBacklog, uidOf, useSimulator, writesSent } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const sync = (extra: IDataObject = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	...extra,
});
const tickets = (ids: number[], title = (id: number) => `Ticket ${id}`) =>
	ids.map((id) => ({ id: `T-${id}`, title: title(id) }));
const status = (id: number) => sim.tasks.get(uidOf(`T-${id}`))?.status;

/** A backlog an earlier sync of T-1 ... T-6 left an hour ago, T-6's task since closed by an operator. */
async function earlierSync() {
	const first = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5, 6]) });
	expect(first.error).toBeUndefined();
	sim.tasks.get(uidOf('T-6'))!.status = 'DONE';
	ageTasks(sim);
	sim.clearRequests();
}

/** This run's input: T-1, T-2 renamed, T-4, T-6 (open again), T-7 (new); T-3 and T-5 are gone. */
const input = tickets([1, 2, 4, 6, 7], (id) => (id === 2 ? 'Ticket 2 (renamed)' : `Ticket ${id}`));

const summaryOf = (json: IDataObject[]) => json.find((row) => row.action === 'summary')!;

describe('Sync Backlog output (version 3 default: changes and summary)', () => {
	it('one item per task created, updated (with what changed), reopened or closed, then a summary; unchanged tasks are only counted', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync(), { items: input });
		expect(run.error).toBeUndefined();
		const changes = run.items.slice(0, -1).map((item) => ({
			action: item.json.action,
			external_id: item.json.external_id,
			pairedItem: item.pairedItem,
		}));
		expect(changes.slice(0, 3)).toEqual([
			{ action: 'update', external_id: 'T-2', pairedItem: { item: 1 } },
			{ action: 'reopen', external_id: 'T-6', pairedItem: { item: 3 } },
			{ action: 'create', external_id: 'T-7', pairedItem: { item: 4 } },
		]);
		// The closes, in the order the server listed them, each paired with input item 0 (a closed task has no item).
		expect(
			changes.slice(3).sort((a, b) => String(a.external_id).localeCompare(String(b.external_id))),
		).toEqual([
			{ action: 'close', external_id: 'T-3', pairedItem: { item: 0 } },
			{ action: 'close', external_id: 'T-5', pairedItem: { item: 0 } },
		]);
		const update = run.json[0];
		expect(update).toEqual({
			action: 'update',
			external_id: 'T-2',
			uid: uidOf('T-2'),
			title: 'Ticket 2 (renamed)',
			changes: { 'fields.title': { from: 'Ticket 2', to: 'Ticket 2 (renamed)' } },
			dry_run: false,
		});
		expect(run.json[1].changes).toEqual({ status: { from: 'DONE', to: 'TODO' } });
		expect(run.json.find((row) => row.external_id === 'T-3')!.changes).toEqual({
			status: { from: 'TODO', to: 'DONE' },
		});
		// No row carries a whole task.
		expect(run.json.some((row) => row.task !== undefined)).toBe(false);

		const last = run.items[run.items.length - 1];
		expect(last.pairedItem).toEqual({ item: 0 });
		expect(last.json).toEqual({
			action: 'summary',
			source: 'helpdesk',
			read: 'full',
			dry_run: false,
			counts: {
				create: 1,
				update: 1,
				reopen: 1,
				unarchive: 0,
				close: 2,
				kept_open: 0,
				unchanged: 2,
				duplicate: 0,
				conflict: 0,
				failed: 0,
			},
			close_guard: { verdict: 'allowed', closes: 2, open_tasks: 5 },
		});
		// What it says happened, happened.
		expect([1, 2, 3, 4, 5, 6, 7].map(status)).toEqual([
			'TODO',
			'TODO',
			'DONE',
			'TODO',
			'DONE',
			'TODO',
			'TODO',
		]);
		expect(sim.tasks.get(uidOf('T-2'))!.fields.title).toBe('Ticket 2 (renamed)');
	});

	it('a run that changes nothing outputs the summary alone', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5]) });
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(1);
		expect(run.json[0].counts).toMatchObject({ unchanged: 5, close: 0, create: 0 });
		expect(writesSent(sim)).toEqual([]);
	});

	it('Summary Only outputs one item, paired with input item 0, and writes the same', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync({ syncOutput: 'summary' }), { items: input });
		expect(run.error).toBeUndefined();
		expect(run.items).toHaveLength(1);
		expect(run.items[0].pairedItem).toEqual({ item: 0 });
		expect(run.json[0].counts).toMatchObject({
			create: 1,
			update: 1,
			reopen: 1,
			close: 2,
			unchanged: 2,
		});
		expect([3, 5, 6, 7].map(status)).toEqual(['DONE', 'DONE', 'TODO', 'TODO']);
	});

	it('Dry Run: the changes it would make and a summary with the guard refusing, nothing written', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync({ dryRun: true }), { items: tickets([1]) });
		expect(run.error).toBeUndefined();
		expect(run.json.filter((row) => row.action === 'close')).toHaveLength(4);
		expect(run.json.every((row) => row.dry_run === true)).toBe(true);
		const guard = summaryOf(run.json).close_guard as IDataObject;
		expect(guard).toMatchObject({ verdict: 'refused', closes: 4, open_tasks: 5 });
		expect(guard.message).toMatch(/^Sync Backlog would close 4 of the 5 open tasks/);
		expect(writesSent(sim)).toEqual([]);
	});

	it('Max Share to Close 100: the guard verdict says off', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync({ syncOptions: { maxCloseShare: 100 } }), {
			items: tickets([1]),
		});
		expect(run.error).toBeUndefined();
		expect(summaryOf(run.json).close_guard).toEqual({ verdict: 'off', closes: 4, open_tasks: 5 });
	});

	it('tasks kept open by the grace period, duplicates and conflicts are counted; a conflict with Continue On Fail is an item with its error', async () => {
		await earlierSync();
		// T-8 made by an event a minute ago, of this source; T-9's task belongs to another source.
		sim.seedTasks(1, () => ({
			uid: uidOf('T-8'),
			fields: { title: 'Ticket 8', ticket_id: 'T-8', source: 'helpdesk' },
		}));
		sim.seedTasks(1, () => ({
			uid: uidOf('T-9'),
			fields: { title: 'Billing', source: 'billing' },
		}));
		const items = [...tickets([1, 2, 3, 4, 5]), { id: 'T-1', title: 'Ticket 1' }, ...tickets([9])];
		const run = await runBacklog(sim, sync(), { items, continueOnFail: true });
		expect(run.error).toBeUndefined();
		const conflict = run.items.find((item) => item.json.action === 'conflict')!;
		expect(conflict.pairedItem).toEqual({ item: 6 });
		expect(conflict.json).toMatchObject({ external_id: 'T-9', task_source: 'billing' });
		expect(String(conflict.json.error)).toMatch(/belongs to source "billing"/);
		expect(summaryOf(run.json).counts).toMatchObject({
			kept_open: 1,
			duplicate: 1,
			conflict: 1,
			unchanged: 5,
		});
		expect(sim.tasks.get(uidOf('T-9'))!.fields.source).toBe('billing');
	});

	it('an Output given by an expression that is not one of the three is refused before any request', async () => {
		await earlierSync();
		const run = await runBacklog(sim, sync({ syncOutput: '={{ "everything" }}' }), {
			items: input,
		});
		expect(run.error?.message).toBe(
			'Item 0: "Output" must be one of "changes", "summary", "allRows", got "everything"',
		);
		expect(sim.requests).toEqual([]);
	});
});

describe('Sync Backlog output of workflows saved with versions 1 and 2: every row, as before', () => {
	it.each([1, 2])(
		'version %i outputs a row per ticket and per task closed, each with its task, unless another Output is picked',
		async (typeVersion) => {
			await earlierSync();
			const run = await runBacklog(sim, sync(), { items: input, typeVersion });
			expect(run.error).toBeUndefined();
			expect(run.json.map((row) => [row.external_id, row.action]).slice(0, 5)).toEqual([
				['T-1', 'unchanged'],
				['T-2', 'update'],
				['T-4', 'unchanged'],
				['T-6', 'reopen'],
				['T-7', 'create'],
			]);
			expect(run.json.slice(5).map((row) => row.action)).toEqual(['close', 'close']);
			expect(run.json.every((row) => typeof (row.task as IDataObject)?.uid === 'string')).toBe(
				true,
			);
			expect(run.items.map((item) => item.pairedItem)).toEqual([
				{ item: 0 },
				{ item: 1 },
				{ item: 2 },
				{ item: 3 },
				{ item: 4 },
				{ item: 0 },
				{ item: 0 },
			]);

			const summary = await runBacklog(sim, sync({ syncOutput: 'summary' }), {
				items: input,
				typeVersion,
			});
			expect(summary.json).toHaveLength(1);
			expect(summary.json[0].counts).toMatchObject({ unchanged: 5 });
		},
	);

	it('version 3 with Every Row outputs what version 2 does', async () => {
		await earlierSync();
		const v3 = await runBacklog(sim, sync({ syncOutput: 'allRows', dryRun: true }), {
			items: input,
		});
		const v2 = await runBacklog(sim, sync({ dryRun: true }), { items: input, typeVersion: 2 });
		expect(v3.items).toEqual(v2.items);
	});
});
