// Spec open point: /tasks/query paged or not, its limit in the body or the query, and its maximum (readings
// queryPaging, queryLimitFrom, queryMaxLimit).
import { runBacklog, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('/tasks/query paging: not documented (facts: no cursor); limit in body or query; its maximum', () => {
	it.each([
		['a cursor', { queryPaging: 'cursor' as const }],
		[
			'no cursor, limit in the body only, at most 50',
			{ queryPaging: 'none' as const, queryLimitFrom: 'body' as const, queryMaxLimit: 50 },
		],
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
		expect(run.json.map((json) => (json.fields as { rank: number }).rank)).toEqual(
			Array.from({ length: 70 }, (_, i) => 69 - i),
		);
	});
});
