// The rules of issue "correct under every reading of the spec's open points", each checked on the simulator's
// observable state. This file runs in the jest projects unit (lenient simulator) and unit-strict (strict): every
// test must hold under both readings; tests that pin one reading set it themselves.
import { NodeOperationError } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../../nodes/shared/tasks/identity';
import { byId, readingsOf, runBacklog, sent, TOKEN, writesSent } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { startSimulator } from '../../../tools/simulator/simulator';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator({ tokens: [TOKEN] });
});
afterAll(async () => await sim.stop());
beforeEach(() => {
	sim.reset();
	sim.configure({ readings: undefined, maxBatchSize: undefined });
});

const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
const upsert = {
	resource: 'task',
	operation: 'upsert',
	identifyBy: 'externalId',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
};
const tickets = (n: number, title = (i: number) => `Ticket ${i}`) =>
	Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, title: title(i + 1) }));

/** Someone else (an operator, another system) adds a custom field to each task. */
function addForeignField(uids: string[]) {
	for (const uid of uids) {
		const task = sim.tasks.get(uid)!;
		sim.tasks.set(uid, { ...task, fields: { ...task.fields, owner_note: `kept ${uid.slice(0, 4)}` } });
	}
}

describe('PATCH fields merge or replace (spec 4.2 rule 9: not shown)', () => {
	it.each(['merge', 'replace'] as const)('Update of a title keeps every other custom field (PATCH %s)', async (patchFields) => {
		sim.configure({ readings: { patchFields } });
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Old', ticket_id: '9', source: 'helpdesk' } }));
		const run = await runBacklog(sim, { resource: 'task', operation: 'update', task: byId(task.uid), updateFields: { title: 'New' } });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(task.uid)!.fields).toEqual({ title: 'New', ticket_id: '9', source: 'helpdesk' });
	});

	it('Update of 120 tasks costs one bulk read (as many pages as its answer needs), not one read per task', async () => {
		const tasks = sim.seedTasks(120, (i) => ({ fields: { title: `Old ${i}`, ticket_id: String(i) } }));
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'update', task: byId('={{ $json.uid }}'), updateFields: { title: '={{ "New " + $itemIndex }}' } },
			{ items: tasks.map((task) => ({ uid: task.uid })) },
		);
		expect(run.error).toBeUndefined();
		expect(sent(sim, 'GET')).toHaveLength(0);
		expect(sent(sim, 'POST', '/tasks/query').length).toBeLessThanOrEqual(Math.ceil(120 / readingsOf(sim).queryMaxLimit) + 1);
		tasks.forEach((task, i) => expect(sim.tasks.get(task.uid)!.fields).toEqual({ title: `New ${i}`, ticket_id: String(i) }));
	});
});

describe('PUT on an existing uid: no-op or replace (spec 4.2 rule 1 vs 4.5 rule 1)', () => {
	it.each([2, 500])('Create or Update of %i items keeps a field set by someone else', async (n) => {
		await runBacklog(sim, upsert, { items: tickets(n) });
		const uids = tickets(n).map((ticket) => uidOf(ticket.id));
		addForeignField(uids);
		const run = await runBacklog(sim, upsert, { items: tickets(n, (i) => `Renamed ${i}`) });
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(n);
		uids.forEach((uid, i) =>
			expect(sim.tasks.get(uid)!.fields).toEqual({ title: `Renamed ${i + 1}`, ticket_id: `T-${i + 1}`, owner_note: `kept ${uid.slice(0, 4)}` }),
		);
	});

	it.each(['noop', 'replace'] as const)('Create or Update of one item gives the same task as of many (single PUT %s)', async (putExisting) => {
		sim.configure({ readings: { putExisting } });
		await runBacklog(sim, { ...upsert, requestOptions: { batching: false } }, { items: tickets(1) });
		addForeignField([uidOf('T-1')]);
		const run = await runBacklog(sim, { ...upsert, requestOptions: { batching: false } }, { items: tickets(1, () => 'Renamed') });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(uidOf('T-1'))!.fields).toMatchObject({ title: 'Renamed', ticket_id: 'T-1', owner_note: expect.any(String) });
	});

	it('Create or Update run twice with the same values writes nothing the second time', async () => {
		await runBacklog(sim, upsert, { items: tickets(5) });
		sim.clearRequests();
		const run = await runBacklog(sim, upsert, { items: tickets(5) });
		expect(run.error).toBeUndefined();
		expect(writesSent(sim)).toHaveLength(0);
	});
});

describe('Create with a uid that is taken (spec 4.2 rule 2: POST honours a client uid; a taken one: not shown)', () => {
	it.each(['conflict', 'replace'] as const)('Create on an existing uid fails that item and leaves the task as it was (POST %s)', async (postExisting) => {
		sim.configure({ readings: { postExisting } });
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Existing', ticket_id: '7' } }));
		const before = JSON.stringify(sim.tasks.get(task.uid));
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}', additionalFields: { uid: '={{ $json.uid }}' } },
			{ items: [{ title: 'Fresh', uid: '3c90c3cc-0d44-4b50-8888-8dd25736052a' }, { title: 'Intruder', uid: task.uid }], continueOnFail: true },
		);
		expect(run.error).toBeUndefined();
		expect(run.json[0].uid).toBe('3c90c3cc-0d44-4b50-8888-8dd25736052a');
		expect(String(run.json[1].error)).toMatch(/already exists/);
		expect(run.items[1].pairedItem).toEqual({ item: 1 });
		expect(JSON.stringify(sim.tasks.get(task.uid))).toBe(before);
		expect(sim.tasks.size).toBe(2);
	});

	it('without Continue On Fail, Create on a taken uid fails the node and writes nothing', async () => {
		const [task] = sim.seedTasks(1);
		const run = await runBacklog(sim, { resource: 'task', operation: 'create', title: 'x', additionalFields: { uid: task.uid } });
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/Item 0: a task with UID .* already exists/);
		expect(writesSent(sim)).toHaveLength(0);
	});

	it('Create repeated within the same execution (Retry On Fail) recognises its own task: one task, no error', async () => {
		const executionId = 'execution-42';
		const first = await runBacklog(sim, { resource: 'task', operation: 'create', title: '={{ $json.title }}' }, { items: tickets(3), executionId });
		const again = await runBacklog(sim, { resource: 'task', operation: 'create', title: '={{ $json.title }}' }, { items: tickets(3), executionId });
		expect(again.error).toBeUndefined();
		expect(again.json.map((json) => json.uid)).toEqual(first.json.map((json) => json.uid));
		expect(sim.tasks.size).toBe(3);
		// Another execution is another create.
		await runBacklog(sim, { resource: 'task', operation: 'create', title: '={{ $json.title }}' }, { items: tickets(3) });
		expect(sim.tasks.size).toBe(6);
	});
});

describe('The same uid twice in one input (duplicate uids in a batch: not shown)', () => {
	it.each(['inOrder', 'reject'] as const)('an input with a repeated external ID succeeds with the later values (batch duplicates %s)', async (duplicateUids) => {
		sim.configure({ readings: { duplicateUids } });
		const items = [
			{ id: 'A', title: 'First A' },
			{ id: 'B', title: 'Only B' },
			{ id: 'A', title: 'Second A' },
		];
		const run = await runBacklog(sim, upsert, { items });
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(3);
		expect(run.items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(sim.tasks.get(uidOf('A'))!.fields.title).toBe('Second A');
		expect(sim.tasks.size).toBe(2);
	});

	it('Sync Backlog with a repeated external ID applies the later item and says so in the earlier item’s row', async () => {
		const items = [
			{ id: '1', title: 'Old 1' },
			{ id: '2', title: 'Two' },
			{ id: '1', title: 'New 1' },
		];
		const run = await runBacklog(sim, { resource: 'task', operation: 'syncBacklog', externalId: '={{ $json.id }}', title: '={{ $json.title }}', sourceValue: 'helpdesk' }, { items });
		expect(run.error).toBeUndefined();
		const earlier = run.items.find((item) => item.json.action === 'duplicate')!;
		expect(earlier.pairedItem).toEqual({ item: 0 });
		expect(earlier.json).toMatchObject({ external_id: '1', superseded_by_item: 2 });
		expect(sim.tasks.get(uidOf('1'))!.fields.title).toBe('New 1');
		expect(run.items.filter((item) => item.json.action === 'create').map((item) => item.pairedItem)).toEqual([{ item: 1 }, { item: 2 }]);
	});
});

describe('Batch size limit (not shown) and how a too-long batch is refused', () => {
	it.each(['422', '413'] as const)('a batch refused for its size is split and the accepted size is kept for the run (%s)', async (batchTooLarge) => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge } });
		const run = await runBacklog(sim, upsert, { items: tickets(500) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(500);
		const batches = sent(sim, 'PUT', '/tasks/batch');
		expect(batches.filter((request) => request.status !== 200)).toHaveLength(1);
		expect(batches.length).toBeLessThanOrEqual(Math.ceil(500 / 50) + 1);
	});
});

describe('Sync Backlog on a server that caps batches without saying so', () => {
	it('Sync Backlog of 2,000 new tickets costs 1 listing, 2 bulk reads (not archived, archived), 1 GET confirming a task not found, 1 refused batch and ceil(N / 50) batches', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '413' } });
		const n = 2000;
		const items = Array.from({ length: n }, (_, i) => ({ id: String(i), title: `Ticket ${i}` }));
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'syncBacklog', externalId: '={{ $json.id }}', title: '={{ $json.title }}', sourceValue: 'bulk' },
			{ items },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(n);
		expect(sim.requests.filter((request) => request.status === 429)).toHaveLength(0);
		expect(sim.requests).toHaveLength(1 + 2 + 1 + 1 + Math.ceil(n / 50));
	}, 60_000);

	it('10,000 upserts on a server with an undocumented batch limit of 50 take at most ceil(10,000 / 50) + 4 requests (2 bulk reads, 1 GET confirming a task not found, 1 refused batch)', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '413' } });
		const n = 10_000;
		const run = await runBacklog(sim, { resource: 'task', operation: 'upsert', inputData: 'autoMap' }, { items: tickets(n) });
		expect(run.error).toBeUndefined();
		expect(run.items).toHaveLength(n);
		expect(sim.tasks.size).toBe(n);
		expect(sim.tasks.get(uidOf('T-10000'))!.fields).toMatchObject({ title: 'Ticket 10000' });
		expect(sim.requests.length).toBeLessThanOrEqual(Math.ceil(n / 50) + 4);
	}, 120_000);
});

describe('Bulk reads by uid: the request body limit and the operator "in" are not shown', () => {
	it('a bulk read refused as too large (413) is split and the accepted size is kept for the run', async () => {
		const existing = sim.seedTasks(3, (i) => ({ uid: uidOf(`T-${i + 1}`), fields: { title: `Old ${i + 1}`, owner_note: 'kept' } }));
		sim.failNext({ status: 413, body: 'Request Entity Too Large', when: ({ path }) => path.endsWith('/tasks/query') });
		const run = await runBacklog(sim, upsert, { items: tickets(10) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(10);
		for (const task of existing) expect(sim.tasks.get(task.uid)!.fields).toMatchObject({ owner_note: 'kept' });
		const reads = sent(sim, 'POST', '/tasks/query');
		expect(reads[0].status).toBe(413);
		expect(reads.filter((request) => request.status === 200).length).toBeGreaterThanOrEqual(2);
	});

	it.each([
		['ignores it (answers with a task not asked for)', { status: 200, body: 'unrelated' }],
		['refuses it (422)', { status: 422, body: { detail: [{ loc: ['body', 'condition', 'operator'], msg: 'unsupported operator' }] } }],
	] as const)('a server that %s is read one task at a time with GET /tasks/{uid}, and no write replaces a task it did not read', async (_, fault) => {
		const [other] = sim.seedTasks(1, () => ({ fields: { title: 'Someone else', owner_note: 'kept' } }));
		const [existing] = sim.seedTasks(1, () => ({ uid: uidOf('T-2'), fields: { title: 'Old 2', owner_note: 'kept' } }));
		const body = fault.body === 'unrelated' ? { items: [other], meta: { limit: 100 } } : fault.body;
		sim.failNext({ status: fault.status, body, when: ({ path }) => path.endsWith('/tasks/query') });
		const run = await runBacklog(sim, upsert, { items: tickets(3) });
		expect(run.error).toBeUndefined();
		expect(run.items.map((item) => item.json.uid)).toEqual([uidOf('T-1'), uidOf('T-2'), uidOf('T-3')]);
		expect(sim.tasks.get(existing.uid)!.fields).toEqual({ title: 'Ticket 2', ticket_id: 'T-2', owner_note: 'kept' });
		expect(sim.tasks.get(other.uid)!.fields).toEqual({ title: 'Someone else', owner_note: 'kept' });
		expect(sent(sim, 'POST', '/tasks/query')).toHaveLength(1); // one answer is enough to know
		expect(sent(sim, 'GET', /^\/tasks\/[0-9a-f-]+$/)).toHaveLength(3);
	});

	it('on a server that knows only the documented operators (queryOperators documented), Create or Update and Update keep every custom field', async () => {
		sim.configure({ readings: { queryOperators: 'documented' } });
		const [existing] = sim.seedTasks(1, () => ({ uid: uidOf('T-1'), fields: { title: 'Old 1', owner_note: 'kept' } }));
		const upserted = await runBacklog(sim, upsert, { items: tickets(2) });
		expect(upserted.error).toBeUndefined();
		expect(sim.tasks.get(existing.uid)!.fields).toEqual({ title: 'Ticket 1', ticket_id: 'T-1', owner_note: 'kept' });
		expect(sim.tasks.get(uidOf('T-2'))!.fields).toMatchObject({ title: 'Ticket 2' });
		const updated = await runBacklog(sim, { resource: 'task', operation: 'update', task: byId(existing.uid), updateFields: { title: 'New' } });
		expect(updated.error).toBeUndefined();
		expect(sim.tasks.get(existing.uid)!.fields).toEqual({ title: 'New', ticket_id: 'T-1', owner_note: 'kept' });
	});
});

describe('/tasks/query paging: not documented (facts: no cursor); limit in body or query; its maximum', () => {
	it.each([
		['a cursor', { queryPaging: 'cursor' as const }],
		['no cursor, limit in the body only, at most 50', { queryPaging: 'none' as const, queryLimitFrom: 'body' as const, queryMaxLimit: 50 }],
	])('Query with Return All returns 130 of 130 (%s)', async (_, readings) => {
		sim.configure({ readings });
		sim.seedTasks(130, (i) => ({ fields: { title: `T ${i}`, batch: 'q' } }));
		sim.seedTasks(5, () => ({ fields: { title: 'other', batch: 'x' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			conditions: { condition: [{ field: 'fields.batch', operator: 'equals', value: 'q' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(new Set(run.json.map((json) => json.uid)).size).toBe(130);
	});

	it('Query with a sort and Return All returns every match in the sort order', async () => {
		sim.seedTasks(70, (i) => ({ fields: { title: `T ${i}`, rank: (i * 37) % 70 } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			sorts: { sort: [{ field: 'fields.rank', direction: 'descending' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => (json.fields as { rank: number }).rank)).toEqual(Array.from({ length: 70 }, (_, i) => 69 - i));
	});
});

describe('Strict or loose type comparison in queries (spec 2.3: no type validation)', () => {
	it.each(['loose', 'strict'] as const)('a number condition matches a number stored as a number (%s)', async (typeComparison) => {
		sim.configure({ readings: { typeComparison } });
		sim.seedTasks(3, (i) => ({ fields: { title: `P${i}`, priority: i } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			conditions: { condition: [{ field: 'fields.priority', operator: 'equals', value: '1', valueType: 'number' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['P1']);
	});

	it('a Value Type Number that is not a number is refused before any request', async () => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			conditions: { condition: [{ field: 'fields.priority', operator: 'equals', value: 'high', valueType: 'number' }] },
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/Item 0: "Conditions \(row 1\) > Value" is not a number/);
		expect(sim.requests).toHaveLength(0);
	});
});

describe('GET /tasks parameters other than custom fields: not named by the spec (4.2 rule 3)', () => {
	it.each(['honour', 'customFields'] as const)('Get Many filters by status, assignee and Updated After (unknown parameters: %s)', async (listParams) => {
		sim.configure({ readings: { listParams } });
		const assignee = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
		sim.seedTasks(4, (i) => ({ status: i % 2 ? 'STARTED' : 'TODO', assignee_uid: i < 2 ? assignee : null, fields: { title: `T${i}` } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'getAll',
			returnAll: true,
			filters: { status: ['STARTED'], assignee_uid: assignee, updated_at_after: '2000-01-01T00:00:00Z' },
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['T1']);
	});

	const search = (text: string) => ({ resource: 'task', operation: 'getAll', returnAll: true, filters: { search: text } });

	it('Get Many with Search finds the tasks whose text holds it (unknown parameters: honour), and an empty search is an empty list', async () => {
		sim.configure({ readings: { listParams: 'honour' } });
		sim.seedTasks(3, (i) => ({ fields: { title: i === 1 ? 'Printer on fire' : `Ticket ${i}` } }));
		const found = await runBacklog(sim, search('fire'));
		expect(found.error).toBeUndefined();
		expect(found.json.map((json) => json.title)).toEqual(['Printer on fire']);
		sim.clearRequests();
		const none = await runBacklog(sim, search('flood'));
		expect(none.error).toBeUndefined();
		expect(none.items).toHaveLength(0);
		// Nothing found: one more listing and one search for a title it holds prove the server searches.
		expect(sent(sim, 'GET', '/tasks')).toHaveLength(3);
	});

	it('Get Many with a Search the server reads as a custom-field filter (unknown parameters: customFields) fails saying so, never an empty list', async () => {
		sim.configure({ readings: { listParams: 'customFields' } });
		sim.seedTasks(3, (i) => ({ fields: { title: i === 1 ? 'Printer on fire' : `Ticket ${i}` } }));
		const run = await runBacklog(sim, search('fire'));
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/Search for "fire" found nothing, and the service does not seem to search/);
	});

	it('Get Many with a Search on an empty backlog is an empty list under either reading', async () => {
		for (const listParams of ['honour', 'customFields'] as const) {
			sim.configure({ readings: { listParams } });
			const run = await runBacklog(sim, search('fire'));
			expect(run.error).toBeUndefined();
			expect(run.items).toHaveLength(0);
		}
	});
});
