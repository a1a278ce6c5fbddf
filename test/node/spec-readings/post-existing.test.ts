// Spec open point: POST with the uid of an existing task is a 409 or an overwrite (reading postExisting).
import { NodeOperationError } from 'n8n-workflow';

import { createWithItemUid, runBacklog, useSimulator, writesSent } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, tickets } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('Create with a uid that is taken (spec 4.2 rule 2: POST honours a client uid; a taken one: not shown)', () => {
	it.each(['conflict', 'replace'] as const)(
		'Create on an existing uid fails that item and leaves the task as it was (POST %s)',
		async (postExisting) => {
			sim.configure({ readings: { postExisting } });
			const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Existing', ticket_id: '7' } }));
			const before = JSON.stringify(sim.tasks.get(task.uid));
			const run = await runBacklog(sim, createWithItemUid, {
				items: [
					{ title: 'Fresh', uid: '3c90c3cc-0d44-4b50-8888-8dd25736052a' },
					{ title: 'Intruder', uid: task.uid },
				],
				continueOnFail: true,
			});
			expect(run.error).toBeUndefined();
			expect(run.json[0].uid).toBe('3c90c3cc-0d44-4b50-8888-8dd25736052a');
			expect(String(run.json[1].error)).toMatch(/already exists/);
			expect(run.items[1].pairedItem).toEqual({ item: 1 });
			expect(JSON.stringify(sim.tasks.get(task.uid))).toBe(before);
			expect(sim.tasks.size).toBe(2);
		},
	);

	it('without Continue On Fail, Create on a taken uid fails the node and writes nothing', async () => {
		const [task] = sim.seedTasks(1);
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'create',
			title: 'x',
			additionalFields: { uid: task.uid },
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/Item 0: a task with UID .* already exists/);
		expect(writesSent(sim)).toHaveLength(0);
	});

	it('Create repeated within the same execution (Retry On Fail) recognises its own task: one task, no error', async () => {
		const executionId = 'execution-42';
		const first = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items: tickets(3), executionId },
		);
		const again = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items: tickets(3), executionId },
		);
		expect(again.error).toBeUndefined();
		expect(again.json.map((json) => json.uid)).toEqual(first.json.map((json) => json.uid));
		expect(sim.tasks.size).toBe(3);
		// Another execution is another create.
		await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}' },
			{ items: tickets(3) },
		);
		expect(sim.tasks.size).toBe(6);
	});
});
