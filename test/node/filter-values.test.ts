/**
 * A filter whose expression resolves to nothing (undefined, null, '' or whitespace) is an error naming the item and
 * the filter, before any request: dropped, it would list every task (a key typo in `{{ $json.assignee }}` returns the
 * whole backlog); sent, it would look for "" and list none. A filter left empty without an expression is no filter.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { runBacklog, useSimulator } from '../helpers/backlog';
import { json, startServer } from '../helpers/servers';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;

useSimulator((started) => (sim = started));

const getMany = (filters: Record<string, unknown>) => ({
	resource: 'task',
	operation: 'getAll',
	returnAll: true,
	filters,
});

describe('Get Many: a filter that resolved to nothing is an error, not a filter dropped', () => {
	beforeEach(() => {
		sim.seedTasks(4, (i) => ({
			assignee_uid: i === 0 ? '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f' : null,
			fields: { title: `Task ${i}`, priority: i === 0 ? 'high' : 'low' },
		}));
		sim.clearRequests();
	});

	it.each([
		['undefined (a key typo)', {}],
		['an empty text', { assignee: '' }],
		['null', { assignee: null }],
	])(
		'Assignee UID {{ $json.assignee }} resolving to %s fails naming the item and the filter, and sends nothing',
		async (_, item) => {
			const run = await runBacklog(sim, getMany({ assignee_uid: '={{ $json.assignee }}' }), {
				items: [item],
			});
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toBe(
				'Item 0: the filter "Assignee UID" is empty: its expression resolved to nothing',
			);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it('a Custom Fields filter value {{ $json.priority }} resolving to undefined fails, and sends nothing', async () => {
		const run = await runBacklog(
			sim,
			getMany({ customFields: { field: [{ name: 'priority', value: '={{ $json.priority }}' }] } }),
			{ items: [{}] },
		);
		expect(run.error!.message).toBe(
			'Item 0: the filter Custom Fields "priority" is empty: its expression resolved to nothing',
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('a Custom Fields filter value resolving to an object fails instead of looking for "[object Object]"', async () => {
		const run = await runBacklog(
			sim,
			getMany({ customFields: { field: [{ name: 'priority', value: '={{ $json.priority }}' }] } }),
			{ items: [{ priority: { level: 'high' } }] },
		);
		expect(run.error!.message).toMatch(
			/^Item 0: the filter Custom Fields "priority" is not a text/,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('with Continue On Fail only the item whose filter resolved to nothing fails; the other lists its tasks', async () => {
		const run = await runBacklog(sim, getMany({ assignee_uid: '={{ $json.assignee }}' }), {
			items: [{}, { assignee: '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f' }],
			continueOnFail: true,
		});
		expect(run.json[0].error).toMatch(/"Assignee UID" is empty/);
		expect(run.json.slice(1).map((json) => json.title)).toEqual(['Task 0']);
	});

	it('filters that resolve to values still filter: the expression finds the one task', async () => {
		const run = await runBacklog(
			sim,
			getMany({ customFields: { field: [{ name: 'priority', value: '={{ $json.priority }}' }] } }),
			{ items: [{ priority: 'high' }] },
		);
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['Task 0']);
	});

	it('a filter left empty without an expression is no filter, as before: every task is listed', async () => {
		const run = await runBacklog(sim, getMany({ assignee_uid: '' }));
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(4);
	});
});

describe('Query: a condition value that resolved to nothing is an error', () => {
	it('a condition value {{ $json.status }} resolving to undefined fails naming the row, and sends nothing', async () => {
		sim.seedTasks(2);
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'query',
				returnAll: true,
				conditions: {
					condition: [{ field: 'status', operator: 'equals', value: '={{ $json.status }}' }],
				},
			},
			{ items: [{}] },
		);
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/^Item 0: "Conditions \(row 1\) > Value" is empty/);
		expect(sim.requests).toHaveLength(0);
	});
});

describe('Get Many with a Limit counts the tasks that match, on a server that leaves a filter out', () => {
	/** Six tasks by uid, every other one TODO and high; the server pages by uid and cursor but applies no other filter. */
	const tasks = Array.from({ length: 6 }, (_, i) => ({
		uid: `0000000${i}-0000-4000-8000-000000000000`,
		status: i % 2 === 0 ? 'DONE' : 'TODO',
		archived: false,
		fields: { title: `Task ${i}`, priority: i % 2 === 0 ? 'low' : 'high' },
	}));
	async function laxServer() {
		return await startServer((req, res, text) => {
			const url = new URL(req.url ?? '', 'http://x');
			const path = url.pathname.replace(/^\/api\/v1/, '');
			if (req.method === 'POST' && path === '/tasks/query') {
				const body = JSON.parse(text) as IDataObject;
				// Only the paging condition (uid > last) is applied; status and the rest are left out.
				const after = JSON.stringify(body.condition ?? {}).match(
					/"field":"uid","operator":">","value":"([^"]+)"/,
				);
				const rest = tasks.filter((task) => !after || task.uid > after[1]);
				return json(res, 200, { items: rest.slice(0, Number(body.limit)), meta: {} });
			}
			if (req.method === 'GET' && path === '/tasks') {
				const limit = Number(url.searchParams.get('limit'));
				const from = Number(url.searchParams.get('cursor') ?? 0);
				const next = from + limit < tasks.length ? String(from + limit) : null;
				return json(res, 200, {
					items: tasks.slice(from, from + limit),
					meta: { limit, self_cursor: String(from), next_cursor: next },
				});
			}
			return json(res, 404, { message: 'Not found' });
		});
	}

	it.each([
		['Status TODO (POST /tasks/query)', { status: ['TODO'] }],
		[
			'a custom field (GET /tasks)',
			{ customFields: { field: [{ name: 'priority', value: 'high' }] } },
		],
	])(
		'Limit 2 with %s returns 2 tasks that match, not the matches among the first 2 returned',
		async (_, filters) => {
			const api = await laxServer();
			try {
				const run = await runBacklog(
					sim,
					{ resource: 'task', operation: 'getAll', returnAll: false, limit: 2, filters },
					{ credentials: { baseUrl: `${api.origin}/api/v1` } },
				);
				expect(run.error).toBeUndefined();
				expect(run.json.map((json) => json.title)).toEqual(['Task 1', 'Task 3']);
			} finally {
				await api.stop();
			}
		},
	);
});
