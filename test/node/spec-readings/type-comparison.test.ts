// Spec open point: strict or loose comparison of values in query conditions (reading typeComparison).
import { NodeOperationError } from 'n8n-workflow';

import { runBacklog, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('Strict or loose type comparison in queries (spec 2.3: no type validation)', () => {
	it.each(['loose', 'strict'] as const)(
		'a number condition matches a number stored as a number (%s)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			sim.seedTasks(3, (i) => ({ fields: { title: `P${i}`, priority: i } }));
			const run = await runBacklog(sim, {
				resource: 'task',
				operation: 'query',
				conditions: {
					condition: [
						{ field: 'fields.priority', operator: 'equals', value: '1', valueType: 'number' },
					],
				},
				returnAll: true,
			});
			expect(run.error).toBeUndefined();
			expect(run.json.map((json) => json.title)).toEqual(['P1']);
		},
	);

	it('a Value Type Number that is not a number is refused before any request', async () => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			conditions: {
				condition: [
					{ field: 'fields.priority', operator: 'equals', value: 'high', valueType: 'number' },
				],
			},
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/Item 0: "Conditions \(row 1\) > Value" is not a number/);
		expect(sim.requests).toHaveLength(0);
	});
});
