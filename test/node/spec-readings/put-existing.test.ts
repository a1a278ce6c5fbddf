// Spec open points: PUT on an existing uid, one task or a batch, is a no-op or a replace (readings putExisting,
// batchPutExisting); a write that changes nothing is not sent, so it stamps nothing (reading updatedAt).
import { runBacklog, useSimulator, writesSent } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, tickets, uidOf, upsert } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

/** Someone else (an operator, another system) adds a custom field to each task. */
function addForeignField(uids: string[]) {
	for (const uid of uids) {
		const task = sim.tasks.get(uid)!;
		sim.tasks.set(uid, {
			...task,
			fields: { ...task.fields, owner_note: `kept ${uid.slice(0, 4)}` },
		});
	}
}

describe('PUT on an existing uid: no-op or replace (spec 4.2 rule 1 vs 4.5 rule 1)', () => {
	it.each([2, 500])(
		'Create or Update of %i items keeps a field set by someone else',
		async (n) => {
			await runBacklog(sim, upsert, { items: tickets(n) });
			const uids = tickets(n).map((ticket) => uidOf(ticket.id));
			addForeignField(uids);
			const run = await runBacklog(sim, upsert, { items: tickets(n, (i) => `Renamed ${i}`) });
			expect(run.error).toBeUndefined();
			expect(run.json).toHaveLength(n);
			uids.forEach((uid, i) =>
				expect(sim.tasks.get(uid)!.fields).toEqual({
					title: `Renamed ${i + 1}`,
					ticket_id: `T-${i + 1}`,
					owner_note: `kept ${uid.slice(0, 4)}`,
				}),
			);
			// 500 items take about 2 s alone: jest's default 5 s was missed on a loaded machine
		},
		30_000,
	);

	it.each(['noop', 'replace'] as const)(
		'Create or Update of one item gives the same task as of many (single PUT %s)',
		async (putExisting) => {
			sim.configure({ readings: { putExisting } });
			await runBacklog(
				sim,
				{ ...upsert, requestOptions: { batching: false } },
				{ items: tickets(1) },
			);
			addForeignField([uidOf('T-1')]);
			const run = await runBacklog(
				sim,
				{ ...upsert, requestOptions: { batching: false } },
				{ items: tickets(1, () => 'Renamed') },
			);
			expect(run.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('T-1'))!.fields).toMatchObject({
				title: 'Renamed',
				ticket_id: 'T-1',
				owner_note: expect.any(String),
			});
		},
	);

	it('Create or Update run twice with the same values writes nothing the second time', async () => {
		await runBacklog(sim, upsert, { items: tickets(5) });
		sim.clearRequests();
		const run = await runBacklog(sim, upsert, { items: tickets(5) });
		expect(run.error).toBeUndefined();
		expect(writesSent(sim)).toHaveLength(0);
	});
});
