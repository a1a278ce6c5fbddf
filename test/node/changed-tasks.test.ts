/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// The read of what changed since a time (nodes/shared/tasks/changedTasks.ts, issue 46 item 1), on the simulator under
// both profiles (unit, unit-strict) and the readings of the open points it relies on: time conditions on /tasks/query
// (not documented: a server may ignore or refuse them) and internal_updated_at ("date-time or null").
import type { IDataObject, IExecuteFunctions, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import type { ChangedSince } from '../../nodes/shared/tasks/changedTasks';
import { countTasks, readChangedTasks } from '../../nodes/shared/tasks/changedTasks';
import { BacklogClient } from '../../nodes/shared/transport/client';
import type { Simulator } from '../../tools/simulator/simulator';
import { readingsOf, sent, TOKEN, useSimulator } from '../helpers/backlog';
import { clockPastStamps } from '../helpers/clock';
import { serviceApi } from '../triggers/harness';
import { runNode } from '../helpers/run-node';

let sim: Simulator;
// What a test sets of the server's behaviour is undone before the next.
useSimulator((started) => (sim = started), {
	queryIgnores: [],
	queryUnknownFields: [],
	intercept: undefined,
	readings: undefined,
});

/** A node whose execute hands a client to `use` and outputs what it returns: the shared code run in n8n-core. */
async function withClient(use: (client: BacklogClient) => Promise<unknown>): Promise<IDataObject> {
	const description: INodeTypeDescription = {
		displayName: 'Client',
		name: 'client',
		group: ['transform'],
		version: 1,
		description: '',
		defaults: { name: 'Client' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'taskBacklogApi', required: true }],
		properties: [],
	};
	const nodeType: INodeType = {
		description,
		async execute(this: IExecuteFunctions) {
			const client = new BacklogClient(this);
			try {
				return [[{ json: { result: (await use(client)) as IDataObject } }]];
			} finally {
				client.done();
			}
		},
	};
	const run = await runNode({
		nodeType,
		parameters: {},
		credentials: {
			type: 'taskBacklogApi',
			data: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 10000 },
		},
		credentialType: new TaskBacklogApi(),
	});
	if (run.error) throw run.error;
	return run.output[0][0].json.result as IDataObject;
}

/**
 * Another system's write through the API (stamped by the service, as an operator's edit is). A write of `fields` sends
 * them all: the strict reading's PATCH replaces the object.
 */
const api = serviceApi(() => sim.url, TOKEN);

const helpdesk = { field: 'fields.source', operator: '==', value: 'helpdesk' };

/** Ten tasks of helpdesk and two of crm written before `since`; then three of helpdesk (one archived) and one of crm. */
async function backlogChangedSince() {
	const tasks = sim.seedTasks(12, (i) => ({
		fields: { title: `Task ${i}`, source: i < 10 ? 'helpdesk' : 'crm' },
	}));
	await clockPastStamps(sim);
	const sinceMs = Date.now();
	await new Promise((resolve) => setTimeout(resolve, 5));
	await api('PATCH', `/tasks/${tasks[1].uid}`, { fields: { title: 'Edited', source: 'helpdesk' } });
	await api('PATCH', `/tasks/${tasks[2].uid}`, { status: 'DONE' });
	await api('PATCH', `/tasks/${tasks[3].uid}`, { archived: true });
	await api('PATCH', `/tasks/${tasks[10].uid}`, {
		fields: { title: 'Other edited', source: 'crm' },
	});
	sim.clearRequests();
	return { tasks, sinceMs, changed: [1, 2, 3].map((i) => tasks[i].uid).sort() };
}

const read = async (what: Omit<ChangedSince, 'condition'>) =>
	await withClient(
		async (client) => await readChangedTasks(client, { condition: helpdesk, ...what }),
	);
const uids = (result: IDataObject) =>
	((result.tasks ?? []) as IDataObject[]).map((task) => String(task.uid)).sort();

describe('read of the tasks changed since a time', () => {
	it('reads the tasks of the condition changed since then, archived and not, and no other', async () => {
		const { sinceMs, changed } = await backlogChangedSince();
		// Where the service fills internal_updated_at the condition asks on it too; where not, on updated_at alone.
		const stamps = readingsOf(sim).internalStamps === 'filled' ? 'internal' : 'updated';
		const result = await read({ sinceMs, stamps });
		expect(result.read).toBe('changes');
		expect(uids(result)).toEqual(changed);
		const archived = ((result.tasks ?? []) as IDataObject[]).filter((task) => task.archived);
		expect(archived).toHaveLength(1);
		// Two queries: the tasks not archived, then the archived ones; each fits a page, and where the query has no
		// cursors an empty page after it says it was the last.
		const pages = readingsOf(sim).queryPaging === 'cursor' ? 1 : 2;
		expect(sent(sim, 'POST', '/tasks/query').map((request) => request.query.archived)).toEqual([
			...Array<string>(pages).fill('false'),
			...Array<string>(pages).fill('true'),
		]);
	});

	it('a server that does not filter by time is noticed at its first page, which holds a task changed before', async () => {
		const { sinceMs } = await backlogChangedSince();
		sim.configure({ queryIgnores: ['time'] });
		const result = await read({ sinceMs, stamps: 'updated' });
		expect(result.read).toBe('unfiltered');
		expect(sent(sim, 'POST', '/tasks/query')).toHaveLength(1);
	});

	it('a server that refuses a condition on internal_updated_at is asked on updated_at alone, and says so', async () => {
		const { sinceMs, changed } = await backlogChangedSince();
		sim.configure({ queryUnknownFields: ['internal_updated_at'] });
		const result = await read({ sinceMs, stamps: 'internal' });
		expect(result).toMatchObject({ read: 'changes', stamps: 'refused' });
		expect(uids(result)).toEqual(changed);
	});

	it('a server that refuses time conditions (only the documented == and and) is reported, not read', async () => {
		const { sinceMs } = await backlogChangedSince();
		sim.configure({ readings: { queryOperators: 'documented' } });
		expect((await read({ sinceMs, stamps: 'updated' })).read).toBe('refused');
	});

	it('a change another caller dated in the past is found by internal_updated_at where the service fills it (updatedAtFrom body)', async () => {
		sim.configure({ readings: { updatedAtFrom: 'body', internalStamps: 'filled' } });
		const { tasks, sinceMs, changed } = await backlogChangedSince();
		await api('PATCH', `/tasks/${tasks[4].uid}`, {
			fields: { title: 'Backdated', source: 'helpdesk' },
			updated_at: '2020-01-01T00:00:00.000Z',
		});
		const withInternal = await read({ sinceMs, stamps: 'internal' });
		expect(uids(withInternal)).toEqual([...changed, tasks[4].uid].sort());
		// Asked on updated_at alone, it is not found: where the service leaves internal_updated_at null, only a full
		// read sees such a change (Sync Backlog's Full Read Every).
		expect(uids(await read({ sinceMs, stamps: 'updated' }))).toEqual(changed);
	});

	it("counts the condition's tasks (not archived) by the server's total_count, in one request", async () => {
		await backlogChangedSince();
		const open = {
			combinator: 'and',
			conditions: [helpdesk, { field: 'status', operator: 'in', value: ['TODO', 'STARTED'] }],
		};
		expect(await withClient(async (client) => ({ count: await countTasks(client, open) }))).toEqual(
			{ count: 8 },
		);
		expect(sent(sim)).toHaveLength(1);
		// A server that gives no count: undefined (Sync Backlog then reads everything).
		sim.configure({
			intercept: (request) =>
				request.path === '/tasks/query' ? { status: 200, body: { items: [] } } : undefined,
		});
		expect(await withClient(async (client) => ({ count: await countTasks(client, open) }))).toEqual(
			{},
		);
	});
});
