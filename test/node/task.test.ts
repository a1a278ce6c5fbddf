import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { byId, readingsOf, runBacklog, sent, useSimulator, writesSent } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;

useSimulator((started) => (sim = started), {
	maxPageSize: 100,
	maxBatchSize: undefined,
	faults: undefined,
});

const tickets = (n: number) =>
	Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, title: `Ticket ${i + 1}` }));

const upsertByExternalId = {
	resource: 'task',
	operation: 'upsert',
	identifyBy: 'externalId',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
};

describe('Task > Create', () => {
	it('creates a task through PUT /tasks/{uid} with a client-chosen uid', async () => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'create',
			title: 'Review KYC file #1042',
			url: 'https://tickets.example.com/1042',
			customFields: { field: [{ name: 'ticket_id', value: '1042' }] },
			customFieldsJson: '{"priority": 2, "ticket_id": "ignored"}',
			additionalFields: { status: 'STARTED', due_at: '2030-01-02T03:04:05Z' },
		});
		expect(run.error).toBeUndefined();
		const [task] = run.json;
		expect(sent(sim, 'PUT', `/tasks/${task.uid}`)).toHaveLength(1);
		expect(sent(sim, 'POST', /^\/tasks(\/batch)?$/)).toHaveLength(0);
		const stored = sim.tasks.get(String(task.uid))!;
		expect(stored.fields).toEqual({
			title: 'Review KYC file #1042',
			url: 'https://tickets.example.com/1042',
			ticket_id: '1042',
			priority: 2,
		});
		expect(stored.status).toBe('STARTED');
		expect(Date.parse(stored.due_at)).toBe(Date.parse('2030-01-02T03:04:05Z'));
	});

	it('a create retried after a 503 still makes exactly one task', async () => {
		sim.failNext({ status: 503, when: (request) => request.method === 'PUT' });
		const run = await runBacklog(sim, { resource: 'task', operation: 'create', title: 'Once' });
		expect(run.error).toBeUndefined();
		expect(sent(sim, 'PUT')).toHaveLength(2);
		expect(sim.tasks.size).toBe(1);
	});

	it('without Continue On Fail, no batch is sent after one that failed all its attempts', async () => {
		sim.failNext({
			status: 503,
			when: (request) => request.method === 'PUT' && request.path === '/tasks/batch',
		});
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'create',
				title: '={{ $json.title }}',
				requestOptions: { maxAttempts: 1 },
			},
			{ items: tickets(250) },
		);
		expect(run.error).toBeDefined();
		expect(sent(sim, 'PUT', '/tasks/batch')).toHaveLength(1);
		expect(sim.tasks.size).toBe(0);
	});

	it('with Continue On Fail, the items of a failed batch are error rows and the other batches are written', async () => {
		sim.failNext({
			status: 503,
			when: (request) => request.method === 'PUT' && request.path === '/tasks/batch',
		});
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'create',
				title: '={{ $json.title }}',
				requestOptions: { maxAttempts: 1 },
			},
			{ items: tickets(250), continueOnFail: true },
		);
		expect(run.error).toBeUndefined();
		expect(run.json.filter((json) => json.error)).toHaveLength(100);
		expect(run.items.slice(0, 100).every((item) => item.json.httpCode === '503')).toBe(true);
		expect(sim.tasks.size).toBe(150);
	});

	/** Three tickets created with this Request Options › Batching. */
	const createThree = (batching: unknown) =>
		runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'create',
				title: '={{ $json.title }}',
				requestOptions: { batching },
			},
			{ items: tickets(3) },
		);

	it.each([
		['off', false],
		['given as the text "false" by an expression', '={{ "false" }}'],
	])('with batching %s, each item is created through its own PUT', async (_, batching) => {
		const run = await createThree(batching);
		expect(run.error).toBeUndefined();
		expect(sent(sim, 'PUT', '/tasks/batch')).toHaveLength(0);
		for (const task of run.json) expect(sent(sim, 'PUT', `/tasks/${task.uid}`)).toHaveLength(1);
		expect(writesSent(sim)).toHaveLength(3);
		expect(sim.tasks.size).toBe(3);
	});

	it('Batching from an expression neither true nor false is an error naming the option and the item, before any write', async () => {
		const run = await createThree('={{ "0" }}');
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/^Item 0: Request Options › Batching is "0"/);
		expect(writesSent(sim)).toHaveLength(0);
	});

	it('every output item is paired with its input item', async () => {
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items: tickets(3) },
		);
		expect(run.items.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
		expect(run.json.map((task) => (task.fields as { title: string }).title)).toEqual([
			'Ticket 1',
			'Ticket 2',
			'Ticket 3',
		]);
	});
});

describe('Task > Create or Update', () => {
	it('upsert by external id run twice gives one task with the second values', async () => {
		await runBacklog(
			sim,
			{ ...upsertByExternalId, title: 'First title' },
			{ items: [{ id: '1042' }] },
		);
		const second = await runBacklog(
			sim,
			{ ...upsertByExternalId, title: 'Second title' },
			{ items: [{ id: '1042' }] },
		);
		expect(second.error).toBeUndefined();
		const uid = uuidV5('1042', DEFAULT_EXTERNAL_ID_NAMESPACE);
		expect([...sim.tasks.keys()]).toEqual([uid]);
		expect(sim.tasks.get(uid)!.fields).toMatchObject({ title: 'Second title', ticket_id: '1042' });
		expect(second.json[0].uid).toBe(uid);
	});

	it('with batching off, an existing task is read and PATCHed (never PUT, which a server may read as replace)', async () => {
		const parameters = { ...upsertByExternalId, requestOptions: { batching: false } };
		await runBacklog(sim, { ...parameters, title: 'First' }, { items: [{ id: '7' }] });
		sim.clearRequests();
		await runBacklog(sim, { ...parameters, title: 'Second' }, { items: [{ id: '7' }] });
		expect(writesSent(sim).map((request) => request.method)).toEqual(['PATCH']);
		expect([...sim.tasks.values()].map((task) => task.fields.title)).toEqual(['Second']);
	});

	it('250 items upserted with batch size 100 take ceil(250 / accepted batch size) write requests, plus one refused batch where the server caps batches', async () => {
		const run = await runBacklog(
			sim,
			{ ...upsertByExternalId, requestOptions: { batchSize: 100 } },
			{ items: tickets(250) },
		);
		expect(run.error).toBeUndefined();
		const cap = readingsOf(sim).maxBatchSize;
		const expected = cap >= 100 ? 3 : 1 + Math.ceil(250 / cap);
		expect(sent(sim, 'PUT', '/tasks/batch')).toHaveLength(expected);
		expect(writesSent(sim)).toHaveLength(expected);
		expect(sim.tasks.size).toBe(250);
		expect(run.json).toHaveLength(250);
		expect(
			run.items.every((item, index) => (item.pairedItem as { item: number }).item === index),
		).toBe(true);
		expect((run.json[249].fields as { ticket_id: string }).ticket_id).toBe('T-250');
	});

	it('a batch with one item the service rejects yields 249 successes and 1 error with Continue On Fail', async () => {
		const items = tickets(250).map((ticket) => ({
			...ticket,
			uid: uuidV5(ticket.id, DEFAULT_EXTERNAL_ID_NAMESPACE),
		}));
		const parameters = {
			resource: 'task',
			operation: 'upsert',
			identifyBy: 'uid',
			uid: '={{ $json.uid }}',
			title: '={{ $json.title }}',
			// A task cannot be its own parent: the service answers 422 for item 137 only.
			additionalFields: { parent_uid: `={{ $itemIndex === 137 ? $json.uid : "" }}` },
		};
		const run = await runBacklog(sim, parameters, { items, continueOnFail: true });
		expect(run.error).toBeUndefined();
		const errors = run.json.filter((json) => json.error);
		expect(errors).toHaveLength(1);
		expect(run.items.findIndex((item) => item.json.error)).toBe(137);
		expect(String(errors[0].error)).toMatch(/parent/);
		expect(errors[0].httpCode).toBe('422');
		expect(sim.tasks.size).toBe(249);
		expect(sim.tasks.has(items[137].uid)).toBe(false);
	});

	it('without Continue On Fail the rejected item fails the node with the server message', async () => {
		const uid = uuidV5('x', DEFAULT_EXTERNAL_ID_NAMESPACE);
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'upsert',
			identifyBy: 'uid',
			uid,
			title: 'Self parent',
			additionalFields: { parent_uid: uid },
		});
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect((run.error as NodeApiError).httpCode).toBe('422');
		expect(run.error!.message).toMatch(/parent/);
	});
});

describe('Task > Update, Close, Reopen, Archive', () => {
	it('Update sends only the given keys with PATCH', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Old', ticket_id: '9' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'update',
			task: byId(task.uid),
			updateFields: { title: 'New', assignee_email: 'ops@example.com' },
		});
		expect(run.error).toBeUndefined();
		const [patch] = sent(sim, 'PATCH');
		// The other custom fields go along, read in bulk first: a server may replace the whole fields object.
		expect(patch.body).toEqual({
			assignee_email: 'ops@example.com',
			fields: { title: 'New', ticket_id: '9' },
		});
		expect(sim.tasks.get(task.uid)!.fields).toMatchObject({ title: 'New', ticket_id: '9' });
	});

	it('Keep Other Custom Fields (kept for saved workflows) gives the same result: one read of the task, one PATCH', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Old', ticket_id: '9' } }));
		await runBacklog(sim, {
			resource: 'task',
			operation: 'update',
			task: byId(task.uid),
			updateFields: { title: 'New' },
			mergeFields: true,
		});
		expect(sent(sim).map((request) => `${request.method} ${request.path}`)).toEqual([
			'GET /tasks/' + task.uid,
			'PATCH /tasks/' + task.uid,
		]);
		expect(sent(sim, 'PATCH')[0].body).toEqual({ fields: { title: 'New', ticket_id: '9' } });
	});

	it.each([
		['close', { status: 'DONE' }],
		['reopen', { status: 'TODO' }],
		['archive', { archived: true }],
		['unarchive', { archived: false }],
	])('%s sets %j on every input task through one PATCH /tasks/batch', async (operation, change) => {
		const tasks = sim.seedTasks(3, () => ({
			status: operation === 'reopen' ? 'DONE' : 'TODO',
			archived: operation === 'unarchive',
		}));
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation, task: { __rl: true, mode: 'id', value: '={{ $json.uid }}' } },
			{ items: tasks.map((task) => ({ uid: task.uid })) },
		);
		expect(run.error).toBeUndefined();
		expect(sent(sim, 'PATCH', '/tasks/batch')).toHaveLength(1);
		for (const task of tasks) expect(sim.tasks.get(task.uid)).toMatchObject(change);
	});

	it('Close of a task that does not exist fails that item with 404', async () => {
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'close', task: byId('3c90c3cc-0d44-4b50-8888-8dd25736052a') },
			{ continueOnFail: true },
		);
		expect(run.json[0].httpCode).toBe('404');
	});

	it('a task chosen by URL is found by the uid in the URL', async () => {
		const [task] = sim.seedTasks(1);
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'close',
			task: { __rl: true, mode: 'url', value: `https://app.example.com/tasks/${task.uid}` },
		});
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(task.uid)!.status).toBe('DONE');
	});
});

describe('Task > Get, Get Many, Query', () => {
	it('Get returns the simplified task, with what was expanded', async () => {
		const [task] = sim.seedTasks(1, () => ({
			fields: { title: 'Hello', url: 'https://x.example/1' },
		}));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'get',
			task: byId(task.uid),
			options: { expand: ['comments'] },
		});
		expect(run.json[0]).toMatchObject({
			uid: task.uid,
			title: 'Hello',
			url: 'https://x.example/1',
			status: 'TODO',
			comments: [],
		});
		expect(sent(sim, 'GET')[0].query).toMatchObject({ expand: 'comments' });
	});

	it('Get without Simplify returns every field the service sent', async () => {
		const [task] = sim.seedTasks(1);
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'get',
			task: byId(task.uid),
			simplify: false,
		});
		expect(Object.keys(run.json[0])).toEqual(
			expect.arrayContaining(['uid', 'legacy_data', 'queue_time', 'num_children']),
		);
	});

	it('Get Many Return All over a server page size of 7 returns all 50 tasks', async () => {
		sim.configure({ maxPageSize: 7 });
		sim.seedTasks(50);
		const run = await runBacklog(sim, { resource: 'task', operation: 'getAll', returnAll: true });
		expect(run.json).toHaveLength(50);
		expect(new Set(run.json.map((task) => task.uid)).size).toBe(50);
		expect(sent(sim, 'GET', '/tasks')).toHaveLength(8);
	});

	it('Get Many with a Limit stops at the limit', async () => {
		sim.configure({ maxPageSize: 7 });
		sim.seedTasks(50);
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'getAll',
			returnAll: false,
			limit: 10,
		});
		expect(run.json).toHaveLength(10);
		expect(sent(sim, 'GET', '/tasks')).toHaveLength(2);
	});

	it('Get Many filters by status and custom field', async () => {
		sim.seedTasks(6, (i) => ({
			status: i % 2 ? 'DONE' : 'TODO',
			fields: { title: `t${i}`, team: i < 3 ? 'red' : 'blue' },
		}));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'getAll',
			returnAll: true,
			filters: { status: ['TODO'], customFields: { field: [{ name: 'team', value: 'red' }] } },
		});
		expect(run.json.map((task) => task.title).sort()).toEqual(['t0', 't2']);
	});

	it('Query with OR conditions and a sort returns the matching tasks in order', async () => {
		sim.seedTasks(5, (i) => ({ fields: { title: `t${i}`, rank: String(i) } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			queryMode: 'builder',
			combinator: 'or',
			conditions: {
				condition: [
					{ field: 'fields.title', operator: 'equals', value: 't1' },
					{ field: 'fields.title', operator: 'in', value: 't3, t4' },
				],
			},
			sorts: { sort: [{ field: 'fields.rank', direction: 'descending' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((task) => task.title)).toEqual(['t4', 't3', 't1']);
	});

	it('Query from a raw JSON body, over several pages', async () => {
		sim.configure({ maxPageSize: 4 });
		sim.seedTasks(10, (i) => ({ status: i < 9 ? 'TODO' : 'DONE' }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			queryMode: 'json',
			queryJson: JSON.stringify({
				condition: {
					combinator: 'and',
					conditions: [{ field: 'status', operator: '==', value: 'TODO' }],
				},
			}),
			returnAll: true,
		});
		expect(run.json).toHaveLength(9);
		expect(sent(sim, 'POST', '/tasks/query').length).toBeGreaterThanOrEqual(3);
	});
});

describe('Bad input gets a NodeOperationError naming the item and the field, with zero requests sent', () => {
	const cases: Array<[string, Record<string, unknown>, RegExp]> = [
		[
			'a malformed uid',
			{ resource: 'task', operation: 'get', task: byId('={{ "not-a-uid" }}') },
			/Item 0: "Task" must be a UID/,
		],
		[
			'invalid JSON',
			{ resource: 'task', operation: 'create', title: 'x', customFieldsJson: '{"a": ' },
			/Item 0: "Custom Fields \(JSON\)" is not valid JSON/,
		],
		[
			'an empty title',
			{ resource: 'task', operation: 'create', title: '  ' },
			/Item 0: "Title" is empty/,
		],
		[
			'a non-object fields',
			{ resource: 'task', operation: 'create', title: 'x', customFieldsJson: '[1, 2]' },
			/Item 0: "Custom Fields \(JSON\)" must be a JSON object/,
		],
		[
			'an unknown expand value',
			{
				resource: 'task',
				operation: 'get',
				task: byId('3c90c3cc-0d44-4b50-8888-8dd25736052a'),
				options: { expand: ['owner'] },
			},
			/Item 0: "Expand" has unknown value\(s\) owner/,
		],
		[
			'a malformed assignee uid',
			{
				resource: 'task',
				operation: 'create',
				title: 'x',
				additionalFields: { assignee_uid: '42' },
			},
			/Item 0: "Assignee UID" must be a UID/,
		],
		[
			'a date that is not a date',
			{
				resource: 'task',
				operation: 'create',
				title: 'x',
				additionalFields: { due_at: 'tomorrow-ish' },
			},
			/Item 0: "Due At" is not a date/,
		],
		[
			'a 5 MB field',
			{
				resource: 'task',
				operation: 'create',
				title: 'x',
				customFieldsJson: JSON.stringify({ blob: 'x'.repeat(5 * 1024 * 1024) }),
			},
			/Item 0: "fields.blob" is 5.0 MB/,
		],
		[
			'an empty external id',
			{
				resource: 'task',
				operation: 'upsert',
				identifyBy: 'externalId',
				externalId: '={{ "" }}',
				title: 'x',
			},
			/Item 0: "External ID" is empty/,
		],
	];

	it.each(cases)('%s', async (_, parameters, message) => {
		const run = await runBacklog(sim, parameters);
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(message);
		expect(sim.requests).toHaveLength(0);
	});

	it('a bad item in the middle of a batch stops the node before anything is sent', async () => {
		const items = tickets(5);
		items[3].title = '';
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items },
		);
		expect(run.error!.message).toMatch(/Item 3: "Title" is empty/);
		expect(sim.requests).toHaveLength(0);
	});

	it('with Continue On Fail the bad item becomes an error item and the others are written', async () => {
		const items = tickets(5);
		items[3].title = '';
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items, continueOnFail: true },
		);
		expect(run.json.map((json) => (json.error ? 'error' : 'ok'))).toEqual([
			'ok',
			'ok',
			'ok',
			'error',
			'ok',
		]);
		expect(sim.tasks.size).toBe(4);
		expect(sent(sim, 'PUT', '/tasks/batch')).toHaveLength(1);
	});

	it('a base URL without a scheme is refused before any request', async () => {
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: 'x' },
			{ credentials: { baseUrl: sim.url.replace('http://', '') } },
		);
		expect(run.error!.message).toMatch(/Base URL .* is not an http\(s\) address/);
		expect(sim.requests).toHaveLength(0);
	});

	it('a bad item is reported before a bad credential: the credential is loaded while the items are read, its error waits for the first request', async () => {
		const items = tickets(3);
		items[1].title = '';
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'upsert',
				identifyBy: 'externalId',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
			},
			{ items, credentials: { baseUrl: sim.url.replace('http://', '') } },
		);
		expect(run.error!.message).toMatch(/Item 1: "Title" is empty/);
		expect(sim.requests).toHaveLength(0);
	});
});
