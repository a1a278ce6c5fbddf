// Spec open point: GET /tasks parameters other than custom fields, honoured or read as custom-field filters (reading
// listParams).
import { NodeOperationError } from 'n8n-workflow';

import { runBacklog, sent, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('GET /tasks parameters other than custom fields: not named by the spec (4.2 rule 3)', () => {
	it.each(['honour', 'customFields'] as const)(
		'Get Many filters by status, assignee and Updated After (unknown parameters: %s)',
		async (listParams) => {
			sim.configure({ readings: { listParams } });
			const assignee = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
			sim.seedTasks(4, (i) => ({
				status: i % 2 ? 'STARTED' : 'TODO',
				assignee_uid: i < 2 ? assignee : null,
				fields: { title: `T${i}` },
			}));
			const run = await runBacklog(sim, {
				resource: 'task',
				operation: 'getAll',
				returnAll: true,
				filters: {
					status: ['STARTED'],
					assignee_uid: assignee,
					updated_at_after: '2000-01-01T00:00:00Z',
				},
			});
			expect(run.error).toBeUndefined();
			expect(run.json.map((json) => json.title)).toEqual(['T1']);
		},
	);

	const search = (text: string) => ({
		resource: 'task',
		operation: 'getAll',
		returnAll: true,
		filters: { search: text },
	});

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
		expect(run.error!.message).toMatch(
			/Search for "fire" found nothing, and the service does not seem to search/,
		);
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
