// Spec open point: the batch size limit and how a too-long batch is refused (readings maxBatchSize, batchTooLarge).
import { runBacklog, sent, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, tickets, uidOf, upsert } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('Batch size limit (not shown) and how a too-long batch is refused', () => {
	it.each(['422', '413'] as const)(
		'a batch refused for its size is split and the accepted size is kept for the run (%s)',
		async (batchTooLarge) => {
			sim.configure({ readings: { maxBatchSize: 50, batchTooLarge } });
			const run = await runBacklog(sim, upsert, { items: tickets(500) });
			expect(run.error).toBeUndefined();
			expect(sim.tasks.size).toBe(500);
			const batches = sent(sim, 'PUT', '/tasks/batch');
			expect(batches.filter((request) => request.status !== 200)).toHaveLength(1);
			expect(batches.length).toBeLessThanOrEqual(Math.ceil(500 / 50) + 1);
		},
	);
});

describe('A batch refused without a number is retried at a round size', () => {
	it('Batch Size 66 on a server capping batches at 50 (413, no number): retried as 50, not halved to 33, so 300 tasks take about 6 batches (halving: 10) and 1 refused', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '413' } });
		const run = await runBacklog(
			sim,
			{ ...upsert, requestOptions: { batchSize: 66 } },
			{ items: tickets(300) },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(300);
		const batches = sent(sim, 'PUT', '/tasks/batch');
		expect(batches.filter((request) => request.status === 413)).toHaveLength(1);
		const written = batches.filter((request) => request.status === 200);
		expect((written[0].body as { items: unknown[] }).items).toHaveLength(50);
		expect(written.length).toBeLessThanOrEqual(7);
	});
});

describe('Sync Backlog on a server that caps batches without saying so', () => {
	it('Sync Backlog of 2,000 new tickets costs 1 listing, 2 bulk reads (not archived, archived), 1 GET confirming a task not found, 1 refused batch and ceil(N / 50) batches', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '413' } });
		const n = 2000;
		const items = Array.from({ length: n }, (_, i) => ({ id: String(i), title: `Ticket ${i}` }));
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'syncBacklog',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
				sourceValue: 'bulk',
			},
			{ items },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(n);
		expect(sim.requests.filter((request) => request.status === 429)).toHaveLength(0);
		expect(sim.requests).toHaveLength(1 + 2 + 1 + 1 + Math.ceil(n / 50));
	}, 60_000);

	it('10,000 upserts on a server with an undocumented batch limit of 50 take at most ceil(10,000 / 50) + 4 requests (2 bulk reads, 1 GET confirming a task not found, 1 refused batch)', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '413' } });
		const n = 10_000;
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'upsert', inputData: 'autoMap' },
			{ items: tickets(n) },
		);
		expect(run.error).toBeUndefined();
		expect(run.items).toHaveLength(n);
		expect(sim.tasks.size).toBe(n);
		expect(sim.tasks.get(uidOf('T-10000'))!.fields).toMatchObject({ title: 'Ticket 10000' });
		expect(sim.requests.length).toBeLessThanOrEqual(Math.ceil(n / 50) + 4);
	}, 120_000);
});
