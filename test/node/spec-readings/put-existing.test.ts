// Spec open points: PUT on an existing uid, one task or a batch, is a no-op or a replace (readings putExisting,
// batchPutExisting); a write that changes nothing is not sent, so it stamps nothing (reading updatedAt).
import { createWithItemUid, runBacklog, useSimulator, writesSent } from '../../helpers/backlog';
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

	describe('a task someone else creates between the read and the batch PUT, which the server then leaves as it is (batch PUT a no-op)', () => {
		/** Creates the task of T-2 with another system's values as the run's first write reaches the service. */
		function createdMeanwhile() {
			let created = false;
			sim.failNext({
				status: 500,
				when: (req) => {
					if (!created && req.method === 'PUT') {
						sim.seedTasks(1, () => ({
							uid: uidOf('T-2'),
							fields: { title: 'Theirs', ticket_id: 'T-2', owner_note: 'kept' },
						}));
						created = true;
					}
					return false;
				},
			});
			return () => created;
		}

		it('Create or Update then updates it with the run’s values, keeping its other custom fields', async () => {
			sim.configure({ readings: { batchPutExisting: 'noop' } });
			const created = createdMeanwhile();
			const run = await runBacklog(sim, upsert, { items: tickets(3) });
			expect(created()).toBe(true);
			expect(run.error).toBeUndefined();
			expect(run.json.map((json) => (json.fields as { title: string }).title)).toEqual([
				'Ticket 1',
				'Ticket 2',
				'Ticket 3',
			]);
			expect(sim.tasks.get(uidOf('T-2'))!.fields).toEqual({
				title: 'Ticket 2',
				ticket_id: 'T-2',
				owner_note: 'kept',
			});
			expect(sim.tasks.size).toBe(3);
		});

		it('Create refuses it as taken and leaves it as it is; the other items are created (Continue On Fail)', async () => {
			sim.configure({ readings: { batchPutExisting: 'noop' } });
			const created = createdMeanwhile();
			const run = await runBacklog(sim, createWithItemUid, {
				items: ['T-1', 'T-2', 'T-3'].map((id) => ({ uid: uidOf(id), title: `Mine ${id}` })),
				continueOnFail: true,
			});
			expect(created()).toBe(true);
			expect(run.json[0].uid).toBe(uidOf('T-1'));
			expect(run.json[1].error).toMatch(/already exists/);
			expect(run.json[2].uid).toBe(uidOf('T-3'));
			expect(sim.tasks.get(uidOf('T-2'))!.fields).toEqual({
				title: 'Theirs',
				ticket_id: 'T-2',
				owner_note: 'kept',
			});
		});
	});

	it('Create or Update run twice with the same values writes nothing the second time', async () => {
		await runBacklog(sim, upsert, { items: tickets(5) });
		sim.clearRequests();
		const run = await runBacklog(sim, upsert, { items: tickets(5) });
		expect(run.error).toBeUndefined();
		expect(writesSent(sim)).toHaveLength(0);
	});
});
