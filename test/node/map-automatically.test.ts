// Input Data "Map Automatically" (parameter inputData = autoMap) for Create, Create or Update and Sync Backlog, and
// the rule that parameters which cannot vary per item are read once per execution (both kinds of input).
// Runs in jest projects unit (lenient simulator) and unit-strict (strict simulator).
import { ExecuteContext } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { ageTasks } from '../helpers/age';
import { runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';
import { resetCallers } from '../../nodes/shared/callers/registry';

let sim: Simulator;

useSimulator((started) => (sim = started), { maxPageSize: 100 });

const uidOf = (id: string, namespace = DEFAULT_EXTERNAL_ID_NAMESPACE) => uuidV5(id, namespace);
const autoMap = (operation: string, extra: IDataObject = {}) => ({
	resource: 'task',
	operation,
	inputData: 'autoMap',
	...extra,
});
const tickets = (n: number, extra: (i: number) => IDataObject = () => ({})) =>
	Array.from({ length: n }, (_, i) => ({
		id: `T-${i + 1}`,
		title: `Ticket ${i + 1}`,
		...extra(i),
	}));
const fieldsOf = (uid: string) => sim.tasks.get(uid)?.fields;

/** Calls of n8n's own parameter evaluation (ExecuteContext → NodeExecutionContext._getNodeParameter), by name. */
function countParameterReads() {
	const counts = new Map<string, number>();
	const prototype = ExecuteContext.prototype as unknown as Record<
		string,
		(...args: unknown[]) => unknown
	>;
	const original = prototype._getNodeParameter;
	const spy = jest.spyOn(prototype, '_getNodeParameter').mockImplementation(function (
		this: unknown,
		...args: unknown[]
	) {
		const name = String(args[0]);
		counts.set(name, (counts.get(name) ?? 0) + 1);
		return original.apply(this, args);
	});
	return {
		counts,
		total: () => [...counts.values()].reduce((a, b) => a + b, 0),
		restore: () => spy.mockRestore(),
	};
}

describe('Map Automatically > what each input item becomes', () => {
	it('Create: title, url and every other key become fields; the external ID key is stored in the External ID Field', async () => {
		const run = await runBacklog(sim, autoMap('create'), {
			items: [
				{
					id: 1042,
					title: '  Review KYC file  ',
					url: 'https://tickets.example.com/1042',
					priority: 2,
					vip: true,
					queue: 'kyc',
				},
			],
		});
		expect(run.error).toBeUndefined();
		const uid = String(run.json[0].uid);
		expect(fieldsOf(uid)).toEqual({
			title: 'Review KYC file',
			url: 'https://tickets.example.com/1042',
			ticket_id: '1042',
			priority: 2,
			vip: true,
			queue: 'kyc',
		});
	});

	it('Create: an item\'s "uid" is the task UID; without one, a repeat of the same execution finds the task it made', async () => {
		const uid = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
		const given = await runBacklog(sim, autoMap('create'), {
			items: [{ uid: uid.toUpperCase(), title: 'Given uid' }],
		});
		expect(given.error).toBeUndefined();
		expect(fieldsOf(uid)).toEqual({ title: 'Given uid' });

		const first = await runBacklog(sim, autoMap('create'), {
			items: [{ title: 'Derived' }],
			executionId: 'exec-42',
		});
		const repeat = await runBacklog(sim, autoMap('create'), {
			items: [{ title: 'Derived' }],
			executionId: 'exec-42',
		});
		expect(repeat.error).toBeUndefined();
		expect(repeat.json[0].uid).toBe(first.json[0].uid);
		expect(sim.tasks.size).toBe(2);
	});

	it('Create or Update: the uid is the UUID v5 of the "id" key, the same task Define Below writes', async () => {
		await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'upsert',
				externalId: '={{ $json.id }}',
				title: 'From Define Below',
			},
			{ items: [{ id: '1042' }] },
		);
		const run = await runBacklog(sim, autoMap('upsert'), {
			items: [{ id: '1042', title: 'From Map Automatically', team: 'kyc' }],
		});
		expect(run.error).toBeUndefined();
		expect([...sim.tasks.keys()]).toEqual([uidOf('1042')]);
		expect(fieldsOf(uidOf('1042'))).toEqual({
			title: 'From Map Automatically',
			ticket_id: '1042',
			team: 'kyc',
		});
	});

	it('Create or Update: an item\'s "uid" identifies the task; its external ID is still stored', async () => {
		const uid = '0b7d3c35-4a32-4c8e-9f52-0d8c8f1b2a10';
		const run = await runBacklog(sim, autoMap('upsert'), {
			items: [{ uid, id: 'T-9', title: 'By uid' }],
		});
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uid)).toEqual({ title: 'By uid', ticket_id: 'T-9' });
		expect(sim.tasks.has(uidOf('T-9'))).toBe(false);
	});

	it('External ID Key, External ID Field and UID Namespace are options', async () => {
		const namespace = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';
		const options = {
			autoMapOptions: { externalIdKey: 'ticketNumber', externalIdField: 'helpdesk_id', namespace },
		};
		const run = await runBacklog(sim, autoMap('upsert', options), {
			items: [{ ticketNumber: 77, title: 'Seventy-seven', id: 'kept as a custom field' }],
		});
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uidOf('77', namespace))).toEqual({
			title: 'Seventy-seven',
			helpdesk_id: '77',
			id: 'kept as a custom field',
		});
	});

	it('Keys to Ignore are not read at all, not even "uid"', async () => {
		const options = { autoMapOptions: { keysToIgnore: 'uid, internal_notes' } };
		const items = [
			{
				id: 'A-1',
				uid: '00000000-0000-4000-8000-000000000001',
				title: 'A',
				internal_notes: 'secret',
				team: 'ops',
			},
		];
		const run = await runBacklog(sim, autoMap('upsert', options), { items });
		expect(run.error).toBeUndefined();
		expect([...sim.tasks.keys()]).toEqual([uidOf('A-1')]);
		expect(fieldsOf(uidOf('A-1'))).toEqual({ title: 'A', ticket_id: 'A-1', team: 'ops' });
	});

	it('Only These Keys limits the custom fields; title, url, the external ID and uid are read anyway', async () => {
		const options = { autoMapOptions: { onlyKeys: 'priority' } };
		const items = [
			{
				id: 'B-1',
				title: 'B',
				url: 'https://x.example/b',
				priority: 1,
				team: 'ops',
				body: 'long text',
			},
		];
		const run = await runBacklog(sim, autoMap('upsert', options), { items });
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uidOf('B-1'))).toEqual({
			title: 'B',
			url: 'https://x.example/b',
			ticket_id: 'B-1',
			priority: 1,
		});
	});

	it('Allow Nested Values sends objects and arrays as JSON custom fields', async () => {
		const items = [
			{ id: 'C-1', title: 'C', customer: { name: 'Ada', tier: 2 }, tags: ['kyc', 'urgent'] },
		];
		const run = await runBacklog(
			sim,
			autoMap('upsert', { autoMapOptions: { allowNested: true } }),
			{ items },
		);
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uidOf('C-1'))).toEqual({
			title: 'C',
			ticket_id: 'C-1',
			customer: { name: 'Ada', tier: 2 },
			tags: ['kyc', 'urgent'],
		});
	});

	it('Additional Fields apply to every item (read once), an expression in them per item', async () => {
		const additionalFields = { status: 'STARTED', due_at: '={{ $json.due }}' };
		const items = [
			{ id: 'D-1', title: 'D1', due: '2030-01-01T00:00:00Z' },
			{ id: 'D-2', title: 'D2', due: '2031-06-01T00:00:00Z' },
		];
		const run = await runBacklog(sim, autoMap('upsert', { additionalFields }), { items });
		expect(run.error).toBeUndefined();
		const task = (id: string) => sim.tasks.get(uidOf(id))!;
		expect([task('D-1').status, task('D-2').status]).toEqual(['STARTED', 'STARTED']);
		expect(Date.parse(task('D-1').due_at)).toBe(Date.parse('2030-01-01T00:00:00Z'));
		expect(Date.parse(task('D-2').due_at)).toBe(Date.parse('2031-06-01T00:00:00Z'));
		// `due` was read for due_at by the expression, and as a key it is a custom field like any other
		expect(task('D-2').fields.due).toBe('2031-06-01T00:00:00Z');
	});

	it("the same external ID twice is one task with the later item's values; each item gets its row", async () => {
		const items = [
			{ id: 'E-1', title: 'First', a: 1 },
			{ id: 'E-2', title: 'Other' },
			{ id: 'E-1', title: 'Second', b: 2 },
		];
		const run = await runBacklog(sim, autoMap('upsert'), { items });
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(3);
		expect(sim.tasks.size).toBe(2);
		expect(fieldsOf(uidOf('E-1'))).toEqual({ title: 'Second', ticket_id: 'E-1', a: 1, b: 2 });
	});
});

describe('Map Automatically > bad input is an error naming the item and the key, found before any request', () => {
	const bad: Array<[rule: string, operation: string, item: IDataObject, message: RegExp]> = [
		[
			'a missing title',
			'create',
			{ id: 'X', body: 'no title' },
			/^Item 1: "title" is missing or empty/,
		],
		['a blank title', 'upsert', { id: 'X', title: '   ' }, /^Item 1: "title" is missing or empty/],
		[
			'a title that is an object',
			'upsert',
			{ id: 'X', title: { text: 'T' } },
			/^Item 1: "title" must be text or a number, but the input item holds an object/,
		],
		[
			'an external ID that is an object',
			'upsert',
			{ id: { value: 7 }, title: 'T' },
			/^Item 1: "id" must be text or a number, but the input item holds an object/,
		],
		[
			'no external ID and no uid (Create or Update)',
			'upsert',
			{ title: 'T' },
			/^Item 1: "id" is missing or empty, and the item has no "uid"/,
		],
		[
			'a uid that is not a UUID',
			'create',
			{ uid: 'not-a-uuid', title: 'T' },
			/^Item 1: "uid" must be a UID/,
		],
		[
			'a nested object without Allow Nested Values',
			'upsert',
			{ id: 'X', title: 'T', customer: { name: 'Ada' } },
			/^Item 1: "customer" holds an object; custom fields take text/,
		],
		[
			'an array without Allow Nested Values',
			'create',
			{ title: 'T', tags: ['a'] },
			/^Item 1: "tags" holds an array/,
		],
		[
			'a value JSON cannot carry',
			'create',
			{ title: 'T', score: Number.NaN },
			/^Item 1: "score" holds NaN/,
		],
	];

	it.each(bad)('%s (%s)', async (_rule, operation, item, message) => {
		const run = await runBacklog(sim, autoMap(operation), {
			items: [{ id: 'OK-1', title: 'Fine' }, item, { id: 'OK-3', title: 'Fine too' }],
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(message);
		expect(sim.requests).toHaveLength(0);
		expect(sim.tasks.size).toBe(0);
	});

	it('a value over 1 MB is refused like under Define Below', async () => {
		const run = await runBacklog(sim, autoMap('upsert'), {
			items: [{ id: 'L', title: 'Large', body: 'x'.repeat(1024 * 1024 + 1) }],
		});
		expect(run.error!.message).toMatch(
			/^Item 0: "fields.body" is 1.0 MB; values over 1 MB are not sent/,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('an External ID Key of "title" is refused as a parameter', async () => {
		const run = await runBacklog(
			sim,
			autoMap('upsert', { autoMapOptions: { externalIdKey: 'title' } }),
			{ items: tickets(2) },
		);
		expect(run.error!.message).toMatch(/^Item 0: "External ID Key" cannot be "title"/);
		expect(sim.requests).toHaveLength(0);
	});

	it('with Continue On Fail, the bad item is an error row and every other item is written', async () => {
		const items = [
			...tickets(3),
			{ id: 'T-4', title: 'T', customer: { name: 'Ada' } },
			...tickets(6).slice(4),
		];
		const run = await runBacklog(sim, autoMap('upsert'), { items, continueOnFail: true });
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => (json.error ? 'error' : 'task'))).toEqual([
			'task',
			'task',
			'task',
			'error',
			'task',
			'task',
		]);
		expect(run.json[3].error).toMatch(/^Item 3: "customer" holds an object/);
		expect(run.items[3].pairedItem).toEqual({ item: 3 });
		expect(sim.tasks.size).toBe(5);
		expect(sim.tasks.has(uidOf('T-4'))).toBe(false);
	});
});

describe('Map Automatically > Sync Backlog', () => {
	const syncAuto = (extra: IDataObject = {}) =>
		autoMap('syncBacklog', { sourceValue: 'helpdesk', syncOutput: 'allRows', ...extra });

	it('plans and writes the same as Define Below: creates, updates, closes the missing, marks source and external ID', async () => {
		const define = {
			resource: 'task',
			operation: 'syncBacklog',
			externalId: '={{ $json.id }}',
			title: '={{ $json.title }}',
			sourceValue: 'helpdesk',
			syncOutput: 'allRows',
		};
		await runBacklog(sim, define, { items: tickets(4) });
		// That sync ran an hour ago (past the Close Grace Period): T-3, missing now, is closed.
		ageTasks(sim);
		const items = tickets(4)
			.filter((ticket) => ticket.id !== 'T-3')
			.map((ticket) =>
				ticket.id === 'T-2' ? { ...ticket, title: 'Renamed', team: 'ops' } : ticket,
			);
		const run = await runBacklog(sim, syncAuto(), {
			items: [...items, { id: 'T-9', title: 'New' }],
		});
		expect(run.error).toBeUndefined();
		const actions = Object.fromEntries(run.json.map((json) => [json.external_id, json.action]));
		// T-1 and T-4 were written by Define Below with the same fields: nothing to send for them.
		expect(actions).toEqual({
			'T-1': 'unchanged',
			'T-2': 'update',
			'T-4': 'unchanged',
			'T-9': 'create',
			'T-3': 'close',
		});
		expect(fieldsOf(uidOf('T-2'))).toEqual({
			title: 'Renamed',
			ticket_id: 'T-2',
			source: 'helpdesk',
			team: 'ops',
		});
		expect(fieldsOf(uidOf('T-9'))).toEqual({ title: 'New', ticket_id: 'T-9', source: 'helpdesk' });
		expect(sim.tasks.get(uidOf('T-3'))!.status).toBe('DONE');
	});

	it('Sync Options (External ID Field, Source Field) apply to mapped items too', async () => {
		const run = await runBacklog(
			sim,
			syncAuto({ syncOptions: { externalIdField: 'hd_id', sourceField: 'origin' } }),
			{ items: tickets(1) },
		);
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uidOf('T-1'))).toEqual({ title: 'Ticket 1', hd_id: 'T-1', origin: 'helpdesk' });
	});

	it('refuses an item without its external ID even with Continue On Fail, before any request', async () => {
		const items = [...tickets(2), { title: 'No id', uid: '3c90c3cc-0d44-4b50-8888-8dd25736052a' }];
		const run = await runBacklog(sim, syncAuto(), { items, continueOnFail: true });
		expect(run.error!.message).toMatch(
			/^Item 2: "id" is missing or empty; Sync Backlog knows each ticket by its external ID/,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('the same external ID twice: the later item is applied and the earlier row says so', async () => {
		const run = await runBacklog(sim, syncAuto(), {
			items: [
				{ id: 'D', title: 'Earlier' },
				{ id: 'D', title: 'Later' },
			],
		});
		expect(run.error).toBeUndefined();
		const duplicate = run.json.find((json) => json.action === 'duplicate')!;
		expect(duplicate.superseded_by_item).toBe(1);
		expect(run.items.find((item) => item.json.action === 'duplicate')!.pairedItem).toEqual({
			item: 0,
		});
		expect(fieldsOf(uidOf('D'))!.title).toBe('Later');
	});
});

describe('Parameters that cannot vary per item are read once per execution', () => {
	const N = 200;
	let reads: ReturnType<typeof countParameterReads>;
	beforeEach(() => {
		reads = countParameterReads();
	});
	afterEach(() => reads.restore());

	it.each(['create', 'upsert', 'syncBacklog'])(
		'Map Automatically (%s) reads a fixed number of parameters, whatever the item count',
		async (operation) => {
			const run = await runBacklog(
				sim,
				autoMap(operation, { sourceValue: 'helpdesk', additionalFields: { status: 'STARTED' } }),
				{ items: tickets(N) },
			);
			expect(run.error).toBeUndefined();
			expect(sim.tasks.size).toBe(N);
			expect(reads.total()).toBeLessThan(20);
		},
	);

	it('Define Below evaluates each expression once per item, and every parameter without one once', async () => {
		const parameters = {
			resource: 'task',
			operation: 'upsert',
			externalId: '={{ $json.id }}',
			title: '={{ $json.title }}',
			customFields: { field: [{ name: 'team', value: 'ops' }] },
			customFieldsJson: '{"priority": 2}',
			additionalFields: { status: 'STARTED' },
		};
		const run = await runBacklog(sim, parameters, { items: tickets(N) });
		expect(run.error).toBeUndefined();
		expect(fieldsOf(uidOf('T-7'))).toEqual({
			title: 'Ticket 7',
			ticket_id: 'T-7',
			team: 'ops',
			priority: 2,
		});
		expect(sim.tasks.get(uidOf('T-7'))!.status).toBe('STARTED');
		expect(reads.counts.get('externalId')).toBe(N);
		expect(reads.counts.get('title')).toBe(N);
		for (const name of [
			'identifyBy',
			'url',
			'additionalFields',
			'customFields.field',
			'customFieldsJson',
			'externalIdOptions',
		]) {
			expect([name, reads.counts.get(name)]).toEqual([name, 1]);
		}
	});

	it('Define Below still evaluates an expression in any parameter per item (custom fields, additional fields)', async () => {
		const parameters = {
			resource: 'task',
			operation: 'create',
			title: '={{ $json.title }}',
			customFieldsJson: '={{ JSON.stringify({ n: $json.n }) }}',
			additionalFields: { due_at: '={{ $json.due }}' },
		};
		const items = [
			{ title: 'A', n: 1, due: '2030-01-01T00:00:00Z' },
			{ title: 'B', n: 2, due: '2031-01-01T00:00:00Z' },
		];
		const run = await runBacklog(sim, parameters, { items });
		expect(run.error).toBeUndefined();
		const byTitle = new Map([...sim.tasks.values()].map((task) => [task.fields.title, task]));
		expect([byTitle.get('A')!.fields.n, byTitle.get('B')!.fields.n]).toEqual([1, 2]);
		expect(Date.parse(byTitle.get('B')!.due_at)).toBe(Date.parse('2031-01-01T00:00:00Z'));
	});
});

describe('Map Automatically > requests', () => {
	it('writes as few requests as Define Below for the same items', async () => {
		const items = tickets(250);
		await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'upsert',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
			},
			{ items },
		);
		const defineRequests = sim.requests.map((request) => `${request.method} ${request.path}`);
		sim.reset();
		// The second run starts as the first did, not with the batch size the first one learnt.
		resetCallers();
		const run = await runBacklog(sim, autoMap('upsert'), { items });
		expect(run.error).toBeUndefined();
		expect(sim.requests.map((request) => `${request.method} ${request.path}`)).toEqual(
			defineRequests,
		);
		expect(sent(sim, 'PUT', '/tasks/batch').length).toBeGreaterThan(0);
		expect(sim.tasks.size).toBe(250);
	});
});
