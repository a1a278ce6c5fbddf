// Sync Backlog owns the tasks of its source and no other (issue 47, S6): a task whose Source Field holds another
// source's value is never written, whatever uid the input gives or derives. Runs in jest projects unit (lenient
// simulator) and unit-strict (strict simulator: PATCH and PUT replace, lists filter by custom field only).
import type { IDataObject } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, useSimulator, writesSent } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started), { maxPageSize: 100 });

/** A namespace of the helpdesk's own: its ticket 1042 is not billing's ticket 1042. */
const HELPDESK_NAMESPACE = '5b0f1a52-3d7e-4c1f-9a0e-2f4b6c8d0e11';
const uidOf = (id: string, namespace = DEFAULT_EXTERNAL_ID_NAMESPACE) => uuidV5(id, namespace);

const defineSync = (sourceValue: string, extra: IDataObject = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue,
	// Every row (one per ticket and per task closed, with its task), as versions 1 and 2 output by default.
	syncOutput: 'allRows',
	...extra,
});
const mappedSync = (sourceValue: string, extra: IDataObject = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	inputData: 'autoMap',
	sourceValue,
	syncOutput: 'allRows',
	...extra,
});
const tickets = (...ids: string[]) => ids.map((id) => ({ id, title: `Ticket ${id}` }));

/** A billing task, open, as billing's own sync left it. */
const BILLING_UID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
function seedBillingTask(extra: IDataObject = {}) {
	sim.seedTasks(1, () => ({
		uid: BILLING_UID,
		fields: { title: 'Invoice 77 disputed', ticket_id: 'B-77', source: 'billing' },
		...extra,
	}));
	return JSON.stringify(sim.tasks.get(BILLING_UID));
}
const billingTask = () => JSON.stringify(sim.tasks.get(BILLING_UID));

describe('Sync Backlog never writes a task of another source', () => {
	it('Sync Backlog never moves a task of another source: a ticket whose uid names a billing task is reported, the task unchanged (without Continue On Fail: an error naming the item, nothing written)', async () => {
		const before = seedBillingTask();
		sim.clearRequests();
		const run = await runBacklog(sim, mappedSync('helpdesk'), {
			items: [...tickets('T-1', 'T-2'), { id: 'T-3', title: 'Hijack', uid: BILLING_UID }],
		});
		expect(run.error?.message).toMatch(
			/^Item 2: the task of ticket T-3 \(UID 3c90c3cc-0d44-4b50-8888-8dd25736052a\) belongs to source "billing", not "helpdesk"/,
		);
		expect((run.error as { description?: string }).description).toMatch(/Keys to Ignore/);
		expect(writesSent(sim)).toHaveLength(0);
		expect(billingTask()).toBe(before);
	});

	it('with Continue On Fail the billing task is an error row paired with its input item, the other tickets are synced, and the next run without the ticket does not close it', async () => {
		const before = seedBillingTask();
		const run = await runBacklog(sim, mappedSync('helpdesk'), {
			items: [
				...tickets('T-1'),
				{ id: 'T-3', title: 'Hijack', uid: BILLING_UID },
				...tickets('T-2'),
			],
			continueOnFail: true,
		});
		expect(run.error).toBeUndefined();
		const row = run.items.find((item) => item.json.external_id === 'T-3')!;
		expect(row.pairedItem).toEqual({ item: 1 });
		expect(row.json).toMatchObject({
			action: 'conflict',
			uid: BILLING_UID,
			task_source: 'billing',
		});
		expect(String(row.json.error)).toMatch(/ticket T-3 .*belongs to source "billing"/);
		expect(
			run.json.filter((json) => json.action === 'create').map((json) => json.external_id),
		).toEqual(['T-1', 'T-2']);
		expect(billingTask()).toBe(before);

		const next = await runBacklog(sim, mappedSync('helpdesk'), { items: tickets('T-1', 'T-2') });
		expect(next.error).toBeUndefined();
		expect(next.json.some((json) => json.action === 'close')).toBe(false);
		expect(billingTask()).toBe(before);
	});

	it.each([
		['closed (DONE): not reopened', { status: 'DONE' }],
		['archived: not restored', { status: 'DONE', archived: true }],
	])('a billing task %s, and not moved', async (_, state) => {
		const before = seedBillingTask(state);
		const run = await runBacklog(sim, mappedSync('helpdesk'), {
			items: [{ id: 'T-3', title: 'Hijack', uid: BILLING_UID }],
			continueOnFail: true,
		});
		expect(run.json.map((json) => [json.action, json.task_source])).toEqual([
			['conflict', 'billing'],
		]);
		expect(billingTask()).toBe(before);
	});

	it("two sources with coinciding ticket numbers and the default namespace: the second sync reports the collision and leaves the first source's task alone", async () => {
		const first = await runBacklog(sim, defineSync('billing'), { items: tickets('1042', '1043') });
		expect(first.error).toBeUndefined();
		const billing1042 = JSON.stringify(sim.tasks.get(uidOf('1042')));
		sim.clearRequests();

		const second = await runBacklog(sim, defineSync('helpdesk'), { items: tickets('7', '1042') });
		expect(second.error?.message).toMatch(
			/^Item 1: the task of ticket 1042 \(UID [0-9a-f-]{36}\) belongs to source "billing", not "helpdesk"/,
		);
		expect((second.error as { description?: string }).description).toMatch(/UID Namespace/);
		expect(writesSent(sim)).toHaveLength(0);
		expect(JSON.stringify(sim.tasks.get(uidOf('1042')))).toBe(billing1042);

		// Billing's next run finds its task as it left it: nothing to write, nothing to reopen.
		const billingAgain = await runBacklog(sim, defineSync('billing'), {
			items: tickets('1042', '1043'),
		});
		expect(billingAgain.json.map((json) => json.action)).toEqual(['unchanged', 'unchanged']);
	});

	it('with Continue On Fail the collision is an error row naming the ticket and the source, and Dry Run shows it too, writing nothing', async () => {
		await runBacklog(sim, defineSync('billing'), { items: tickets('1042') });
		const billing1042 = JSON.stringify(sim.tasks.get(uidOf('1042')));
		sim.clearRequests();
		const dry = await runBacklog(sim, defineSync('helpdesk', { dryRun: true }), {
			items: tickets('7', '1042'),
		});
		expect(dry.error).toBeUndefined();
		expect(dry.json.map((json) => [json.external_id, json.action])).toEqual([
			['7', 'create'],
			['1042', 'conflict'],
		]);
		expect(String(dry.json[1].error)).toMatch(/ticket 1042 .*belongs to source "billing"/);
		expect(writesSent(sim)).toHaveLength(0);

		const run = await runBacklog(sim, defineSync('helpdesk'), {
			items: tickets('7', '1042'),
			continueOnFail: true,
		});
		expect(run.json.map((json) => [json.external_id, json.action, json.task_source])).toEqual([
			['7', 'create', undefined],
			['1042', 'conflict', 'billing'],
		]);
		expect(run.items[1].pairedItem).toEqual({ item: 1 });
		expect(JSON.stringify(sim.tasks.get(uidOf('1042')))).toBe(billing1042);
	});

	it('a namespace per source keeps coinciding ticket numbers apart: both sources have their own task 1042', async () => {
		await runBacklog(sim, defineSync('billing'), { items: tickets('1042') });
		const run = await runBacklog(
			sim,
			defineSync('helpdesk', { syncOptions: { namespace: HELPDESK_NAMESPACE } }),
			{ items: tickets('1042') },
		);
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.action)).toEqual(['create']);
		expect(sim.tasks.get(uidOf('1042'))!.fields.source).toBe('billing');
		expect(sim.tasks.get(uidOf('1042', HELPDESK_NAMESPACE))!.fields).toEqual({
			title: 'Ticket 1042',
			ticket_id: '1042',
			source: 'helpdesk',
		});
	});
});

describe('what Sync Backlog still takes in, and what Create or Update does (documented boundaries)', () => {
	it('a task without a source (made by Create or Update by External ID) is taken into the sync: updated and marked with the source', async () => {
		sim.seedTasks(1, () => ({
			uid: uidOf('T-5'),
			fields: { title: 'Old title', ticket_id: 'T-5', note: 'kept' },
		}));
		const run = await runBacklog(sim, defineSync('helpdesk'), { items: tickets('T-5') });
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.action)).toEqual(['update']);
		expect(sim.tasks.get(uidOf('T-5'))!.fields).toEqual({
			title: 'Ticket T-5',
			ticket_id: 'T-5',
			note: 'kept',
			source: 'helpdesk',
		});
	});

	it('Create or Update by External ID writes the task its uid names whatever its source, and keeps the source field (the task stays in its source)', async () => {
		await runBacklog(sim, defineSync('billing'), { items: tickets('1042') });
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'upsert',
				identifyBy: 'externalId',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
			},
			{ items: [{ id: '1042', title: 'Helpdesk title' }] },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(uidOf('1042'))!.fields).toEqual({
			title: 'Helpdesk title',
			ticket_id: '1042',
			source: 'billing',
		});
	});
});
