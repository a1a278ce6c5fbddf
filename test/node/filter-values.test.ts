/**
 * A filter whose expression resolves to nothing (undefined, null, '' or whitespace) is an error naming the item and
 * the filter, before any request: dropped, it would list every task (a key typo in `{{ $json.assignee }}` returns the
 * whole backlog); sent, it would look for "" and list none. A filter left empty without an expression is no filter.
 */
import { NodeOperationError } from 'n8n-workflow';

import { runBacklog, useSimulator } from '../helpers/backlog';
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
