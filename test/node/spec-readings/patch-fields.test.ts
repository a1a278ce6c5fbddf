// Spec open point: PATCH of `fields` merges or replaces (reading patchFields).
import { byId, readingsOf, runBacklog, sent, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('PATCH fields merge or replace (spec 4.2 rule 9: not shown)', () => {
	it.each(['merge', 'replace'] as const)(
		'Update of a title keeps every other custom field (PATCH %s)',
		async (patchFields) => {
			sim.configure({ readings: { patchFields } });
			const [task] = sim.seedTasks(1, () => ({
				fields: { title: 'Old', ticket_id: '9', source: 'helpdesk' },
			}));
			const run = await runBacklog(sim, {
				resource: 'task',
				operation: 'update',
				task: byId(task.uid),
				updateFields: { title: 'New' },
			});
			expect(run.error).toBeUndefined();
			expect(sim.tasks.get(task.uid)!.fields).toEqual({
				title: 'New',
				ticket_id: '9',
				source: 'helpdesk',
			});
		},
	);

	it('Update of 120 tasks costs one bulk read (as many pages as its answer needs), not one read per task', async () => {
		const tasks = sim.seedTasks(120, (i) => ({
			fields: { title: `Old ${i}`, ticket_id: String(i) },
		}));
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'update',
				task: byId('={{ $json.uid }}'),
				updateFields: { title: '={{ "New " + $itemIndex }}' },
			},
			{ items: tasks.map((task) => ({ uid: task.uid })) },
		);
		expect(run.error).toBeUndefined();
		expect(sent(sim, 'GET')).toHaveLength(0);
		expect(sent(sim, 'POST', '/tasks/query').length).toBeLessThanOrEqual(
			Math.ceil(120 / readingsOf(sim).queryMaxLimit) + 1,
		);
		tasks.forEach((task, i) =>
			expect(sim.tasks.get(task.uid)!.fields).toEqual({ title: `New ${i}`, ticket_id: String(i) }),
		);
	});
});
