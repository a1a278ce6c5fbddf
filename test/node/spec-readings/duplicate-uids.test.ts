// Spec open point: the same uid twice in one batch is applied in order or refused (reading duplicateUids).
import { runBacklog, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, uidOf, upsert } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('The same uid twice in one input (duplicate uids in a batch: not shown)', () => {
	it.each(['inOrder', 'reject'] as const)(
		'an input with a repeated external ID succeeds with the later values (batch duplicates %s)',
		async (duplicateUids) => {
			sim.configure({ readings: { duplicateUids } });
			const items = [
				{ id: 'A', title: 'First A' },
				{ id: 'B', title: 'Only B' },
				{ id: 'A', title: 'Second A' },
			];
			const run = await runBacklog(sim, upsert, { items });
			expect(run.error).toBeUndefined();
			expect(run.json).toHaveLength(3);
			expect(run.items.map((item) => item.pairedItem)).toEqual([
				{ item: 0 },
				{ item: 1 },
				{ item: 2 },
			]);
			expect(sim.tasks.get(uidOf('A'))!.fields.title).toBe('Second A');
			expect(sim.tasks.size).toBe(2);
		},
	);

	it('Sync Backlog with a repeated external ID applies the later item and says so in the earlier item’s row', async () => {
		const items = [
			{ id: '1', title: 'Old 1' },
			{ id: '2', title: 'Two' },
			{ id: '1', title: 'New 1' },
		];
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'syncBacklog',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
				sourceValue: 'helpdesk',
				syncOutput: 'allRows',
			},
			{ items },
		);
		expect(run.error).toBeUndefined();
		const earlier = run.items.find((item) => item.json.action === 'duplicate')!;
		expect(earlier.pairedItem).toEqual({ item: 0 });
		expect(earlier.json).toMatchObject({ external_id: '1', superseded_by_item: 2 });
		expect(sim.tasks.get(uidOf('1'))!.fields.title).toBe('New 1');
		expect(
			run.items.filter((item) => item.json.action === 'create').map((item) => item.pairedItem),
		).toEqual([{ item: 1 }, { item: 2 }]);
	});
});
