/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// Executions that share requests never share fate (issue 31): one execution's cancellation, refused value or oversized
// ticket changes nothing for the others sharing its requests, and none of them sees another's values.

import type { Simulator } from '../../tools/simulator/simulator';
import type { BacklogRun } from '../helpers/backlog';
import { runBacklog, sent, useSimulator, uidOf, upsertByTicket } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const upsert = upsertByTicket;
const ticket = (i: number, title = `Event ${i}`) => ({ id: `E-${i}`, title });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once a request that mentions `text` (path or body) has reached the server and is not answered yet. */
async function underWay(text: string): Promise<void> {
	const mentions = (request: { path: string; body?: unknown; status: number }) =>
		request.status === 0 && `${request.path} ${JSON.stringify(request.body ?? '')}`.includes(text);
	while (!sim.requests.some(mentions)) await pause(2);
}

/** Everything an execution shows: its output items, its error's message and description. */
const shown = (run: BacklogRun) =>
	JSON.stringify(run.json) +
	String(run.error?.message ?? '') +
	String((run.error as { description?: unknown } | undefined)?.description ?? '');

describe('An execution cancelled while its client carries a shared request fails no other execution', () => {
	/**
	 * C's read is under way (every request takes 400 ms); A, then B, arrive meanwhile and wait for the next read turn,
	 * which A's client sends for both. A is cancelled while that request is under way.
	 */
	it('the executions waiting in the same read turn still read and write their tickets', async () => {
		sim.configure({ faults: { latencyMs: [400, 400] } });
		const c = runBacklog(sim, upsert, { items: [ticket(3)] });
		await underWay(uidOf('E-3'));
		const a = runBacklog(sim, upsert, {
			items: [ticket(1)],
			cancelWhen: underWay(uidOf('E-1')),
		});
		await pause(20);
		const b = runBacklog(sim, upsert, { items: [ticket(2)] });
		const [cRun, , bRun] = await Promise.all([c, a, b]);
		expect(cRun.error).toBeUndefined();
		expect(bRun.error).toBeUndefined();
		expect(bRun.json[0].uid).toBe(uidOf('E-2'));
		expect(sim.tasks.get(uidOf('E-2'))?.fields.title).toBe('Event 2');
		// The turn A carried did hold B's uid: B was not merely served by a request of its own from the start.
		const carried = sim.requests.find(
			(request) =>
				JSON.stringify(request.body ?? '').includes(uidOf('E-1')) &&
				JSON.stringify(request.body ?? '').includes(uidOf('E-2')),
		);
		expect(carried).toBeDefined();
	}, 20_000);

	it('the executions whose writes share a batch the cancelled execution sends are written once each', async () => {
		// Reads answer at once; a PUT takes 400 ms. C's PUT is under way while A's and B's wait for the next write turn.
		sim.configure({ faults: { latencyMs: [400, 400], only: (req) => req.method === 'PUT' } });
		const c = runBacklog(sim, upsert, { items: [ticket(3)] });
		await underWay(uidOf('E-3'));
		const a = runBacklog(sim, upsert, {
			items: [ticket(1)],
			cancelWhen: underWay(uidOf('E-1')),
		});
		const b = runBacklog(sim, upsert, { items: [ticket(2)] });
		const [cRun, , bRun] = await Promise.all([c, a, b]);
		expect(cRun.error).toBeUndefined();
		expect(bRun.error).toBeUndefined();
		expect(sim.tasks.get(uidOf('E-2'))?.fields.title).toBe('Event 2');
		expect([...sim.tasks.values()].filter((task) => task.fields.title === 'Event 2')).toHaveLength(
			1,
		);
		const shared = sent(sim, 'PUT', '/tasks/batch').find((request) =>
			JSON.stringify(request.body).includes(uidOf('E-2')),
		);
		expect(JSON.stringify(shared?.body)).toContain(uidOf('E-1'));
	}, 20_000);
});

describe('A refusal of one execution’s value fails that execution only, and no other sees the value', () => {
	const SECRET = 'PAYROLL-4711-secret';

	it.each([
		['with Continue On Fail', true],
		['without Continue On Fail', false],
	])(
		'20 executions share batches, the server refuses one ticket with a 400 naming its value (%s): 19 are written, 1 fails',
		async (_, continueOnFail) => {
			sim.configure({ refuseContent: [SECRET], faults: { latencyMs: [100, 100] } });
			const runs = await Promise.all(
				Array.from({ length: 20 }, (_, i) =>
					runBacklog(sim, upsert, {
						items: [ticket(i, i === 7 ? `Invoice ${SECRET}` : `Event ${i}`)],
						continueOnFail,
					}),
				),
			);
			const failed = runs.filter((run) => run.error !== undefined || run.json[0]?.error);
			expect(failed).toHaveLength(1);
			expect(failed[0]).toBe(runs[7]);
			expect(shown(runs[7])).toContain(SECRET);
			for (const [i, run] of runs.entries()) {
				if (i === 7) continue;
				expect(shown(run)).not.toContain(SECRET);
				expect(sim.tasks.get(uidOf(`E-${i}`))?.fields.title).toBe(`Event ${i}`);
			}
			expect(sim.tasks.has(uidOf('E-7'))).toBe(false);
			// Shared: far fewer requests than one per execution, the refused one costing a few.
			expect(sent(sim, 'PUT').length).toBeLessThan(20);
		},
		20_000,
	);

	it('two executions refused alike at the same index of each half of a shared batch fail alone, and no other sees the value', async () => {
		// The opener's PUT is under way (PUTs take 300 ms) while 8 executions wait for the next write turn: one batch
		// of 8, the refused titles at index 1 of each half, so both halves are refused with the same message.
		sim.configure({
			refuseContent: [SECRET],
			faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' },
		});
		const opener = runBacklog(sim, upsert, { items: [ticket(100)] });
		await underWay(uidOf('E-100'));
		const refused = [1, 5];
		const runs = await Promise.all(
			Array.from({ length: 8 }, (_, i) =>
				runBacklog(sim, upsert, {
					items: [ticket(i, refused.includes(i) ? `Invoice ${SECRET}` : `Event ${i}`)],
					continueOnFail: true,
				}),
			),
		);
		expect((await opener).error).toBeUndefined();
		// The layout this test is about: one batch of the 8, the two refused at the same index of each half.
		const shared = sent(sim, 'PUT', '/tasks/batch').find(
			(request) => (request.body as { items: unknown[] }).items.length === 8,
		);
		const titles = (shared?.body as { items: Array<{ fields: { title: string } }> }).items.map(
			(item) => item.fields.title,
		);
		expect(titles.flatMap((title, at) => (title.includes(SECRET) ? [at] : []))).toEqual([1, 5]);
		for (const [i, run] of runs.entries()) {
			if (refused.includes(i)) {
				expect(String(run.json[0].error)).toContain(SECRET);
				expect(sim.tasks.has(uidOf(`E-${i}`))).toBe(false);
				continue;
			}
			expect(run.json[0].error).toBeUndefined();
			expect(shown(run)).not.toContain(SECRET);
			expect(sim.tasks.get(uidOf(`E-${i}`))?.fields.title).toBe(`Event ${i}`);
		}
	}, 20_000);

	it('a 403 on every request of a shared batch fails each execution with the answer to a request of its own', async () => {
		sim.configure({ faults: { latencyMs: [100, 100] } });
		const refusals = Array.from({ length: 40 }, () => ({
			status: 403,
			body: { message: 'This token may not write tasks' },
			when: (req: { method: string }) => req.method === 'PUT',
		}));
		sim.failNext(...refusals);
		const runs = await Promise.all(
			Array.from({ length: 12 }, (_, i) =>
				runBacklog(sim, upsert, { items: [ticket(i)], continueOnFail: true }),
			),
		);
		for (const run of runs) expect(String(run.json[0].error)).toMatch(/may not write/);
		// Split by execution: 12 executions cost at most 2 × 12 requests, not a retry per request.
		expect(sent(sim, 'PUT').length).toBeLessThanOrEqual(24);
	}, 20_000);
});

describe('No message, status or quoted value decides who fails: a shared request that fails is split by execution', () => {
	/**
	 * The opener's PUT is under way (PUTs take 300 ms) while 8 executions wait for the next write turn: one batch of 8,
	 * the refused tickets at index 1 and 5, one in each half.
	 */
	async function sharedBatchOfEight(
		titles: (i: number) => string,
		parameters: Record<string, unknown> = upsert,
	) {
		const opener = runBacklog(sim, parameters, { items: [ticket(100)] });
		await underWay(uidOf('E-100'));
		const runs = await Promise.all(
			Array.from({ length: 8 }, (_, i) =>
				runBacklog(sim, parameters, { items: [ticket(i, titles(i))], continueOnFail: true }),
			),
		);
		expect((await opener).error).toBeUndefined();
		return runs;
	}

	it.each([
		['the same plain 400', 'POLICY-X1', { status: 400, message: 'content policy violation' }],
		['a 400 quoting a number', '98000', { status: 400, message: 'fields.salary: 98000' }],
		['a 400 quoting a short value', 'Zq9', { status: 400, message: 'bad value Zq9' }],
		[
			'a 403 quoting the value',
			'PAYROLL-4711',
			{ status: 403, message: 'not allowed: PAYROLL-4711' },
		],
		[
			'a 500 on every try quoting the value',
			'CRASH-77',
			{ status: 500, message: 'crashed on CRASH-77' },
		],
	])(
		'two strangers refused with %s, one in each half of a shared batch: they fail, the 6 others are written and see nothing of them',
		async (_, marker, refusal) => {
			sim.configure({
				refuseContent: [{ text: marker, ...refusal }],
				faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' },
			});
			const refused = [1, 5];
			const runs = await sharedBatchOfEight((i) =>
				refused.includes(i) ? `Invoice ${marker}` : `Event ${i}`,
			);
			const shared = sent(sim, 'PUT', '/tasks/batch').find(
				(request) => (request.body as { items: unknown[] }).items.length === 8,
			);
			expect(shared).toBeDefined();
			for (const [i, run] of runs.entries()) {
				if (refused.includes(i)) {
					expect(String(run.json[0].error)).toContain(String(refusal.status));
					expect(sim.tasks.has(uidOf(`E-${i}`))).toBe(false);
					continue;
				}
				expect(run.json[0].error).toBeUndefined();
				expect(shown(run)).not.toContain(marker);
				expect(sim.tasks.get(uidOf(`E-${i}`))?.fields.title).toBe(`Event ${i}`);
			}
		},
		30_000,
	);

	it('one ticket answered 500 on every try among 16 executions of a shared batch costs at most 2 × ceil(log2 16) + Max Attempts extra requests', async () => {
		sim.configure({
			refuseContent: [{ text: 'CRASH-16', status: 500, message: 'Internal Server Error' }],
			faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' },
		});
		const opener = runBacklog(sim, upsert, { items: [ticket(100)] });
		await underWay(uidOf('E-100'));
		const runs = await Promise.all(
			Array.from({ length: 16 }, (_, i) =>
				runBacklog(sim, upsert, {
					items: [ticket(i, i === 9 ? 'Invoice CRASH-16' : `Event ${i}`)],
					continueOnFail: true,
				}),
			),
		);
		expect((await opener).error).toBeUndefined();
		expect(runs.filter((run) => run.json[0].error !== undefined)).toEqual([runs[9]]);
		expect(sim.tasks.size).toBe(16);
		const puts = sent(sim, 'PUT').filter(
			(request) => !JSON.stringify(request.body).includes(uidOf('E-100')),
		);
		// 1 shared batch, then 2 × 4 splits (the last of them the crashing execution's own first attempt) and its 4 retries.
		expect(puts.length).toBeLessThanOrEqual(1 + 2 * 4 + 5);
	}, 30_000);

	it('a stranger with Max Attempts 1 does not make a transient 503 fail the executions that asked for 5 attempts', async () => {
		sim.configure({ faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' } });
		const opener = runBacklog(sim, upsert, { items: [ticket(100)] });
		await underWay(uidOf('E-100'));
		sim.failNext({ status: 503, when: (req) => req.method === 'PUT' });
		const stranger = runBacklog(
			sim,
			{ ...upsert, requestOptions: { maxAttempts: 1 } },
			{ items: [ticket(50)], continueOnFail: true },
		);
		await pause(20);
		const runs = await Promise.all(
			Array.from({ length: 6 }, (_, i) =>
				runBacklog(sim, upsert, { items: [ticket(i)], continueOnFail: true }),
			),
		);
		await stranger;
		expect((await opener).error).toBeUndefined();
		for (const [i, run] of runs.entries()) {
			expect(run.json[0].error).toBeUndefined();
			expect(sim.tasks.get(uidOf(`E-${i}`))?.fields.title).toBe(`Event ${i}`);
		}
	}, 30_000);

	it('a stranger with Batching off does not turn a 200-ticket Create or Update into single PUTs', async () => {
		// Both wait while the opener's PUT is under way (1 s), the stranger's writes first in the lane.
		sim.configure({ faults: { latencyMs: [1000, 1000], only: (req) => req.method === 'PUT' } });
		const opener = runBacklog(sim, upsert, { items: [ticket(1000)] });
		await underWay(uidOf('E-1000'));
		const stranger = runBacklog(
			sim,
			{ ...upsert, requestOptions: { batching: false } },
			{ items: [ticket(500), ticket(501), ticket(502)] },
		);
		await pause(5);
		const mine = await runBacklog(sim, upsert, {
			items: Array.from({ length: 200 }, (_, i) => ticket(i)),
		});
		expect((await stranger).error).toBeUndefined();
		expect((await opener).error).toBeUndefined();
		expect(mine.error).toBeUndefined();
		const mineSent = sent(sim, 'PUT').filter((request) =>
			JSON.stringify(request.body).includes(uidOf('E-7')),
		);
		expect(mineSent.every((request) => request.path === '/tasks/batch')).toBe(true);
		const singles = sent(sim, 'PUT').filter(
			(request) =>
				request.path !== '/tasks/batch' &&
				Array.from({ length: 200 }, (_, i) => uidOf(`E-${i}`)).some((uid) =>
					request.path.includes(uid),
				),
		);
		expect(singles).toHaveLength(0);
	}, 30_000);
});

describe('A ticket too large for the server’s body limit fails alone and does not shrink the batch size', () => {
	it('40 tickets in batches of 10, one of them over the body limit: 39 written, the batch size kept', async () => {
		sim.configure({ maxBodyBytes: 100_000 });
		const run = await runBacklog(
			sim,
			{ ...upsert, requestOptions: { batchSize: 10 } },
			{
				items: Array.from({ length: 40 }, (_, i) =>
					ticket(i, i === 13 ? 'x'.repeat(150_000) : `Event ${i}`),
				),
				continueOnFail: true,
			},
		);
		const failed = run.json.filter((json) => json.error !== undefined);
		expect(failed).toHaveLength(1);
		expect(String(failed[0].error)).toMatch(/413|too large/i);
		expect(run.items[13].pairedItem).toEqual({ item: 13 });
		expect(sim.tasks.size).toBe(39);
		// 4 batches; the refused one of 10 split down to the ticket (5, 3, 2, 1 …): about 8, not one PUT per ticket.
		expect(sent(sim, 'PUT').length).toBeLessThanOrEqual(12);
	}, 20_000);

	it('a batch refused for its length is learnt only once smaller batches of the same tasks went through', async () => {
		sim.configure({ readings: { maxBatchSize: 20, batchTooLarge: '413' } });
		const run = await runBacklog(
			sim,
			{ ...upsert, requestOptions: { batchSize: 40 } },
			{ items: Array.from({ length: 120 }, (_, i) => ticket(i)) },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(120);
		// 40 refused, then 25 (a round size from half up), then 20 + 5, learnt: 20 at a time, none refused again.
		const puts = sent(sim, 'PUT');
		const firstAccepted = puts.findIndex((request) => request.status === 200);
		expect(puts.slice(firstAccepted).filter((request) => request.status === 413)).toHaveLength(0);
		expect(puts.filter((request) => request.status === 413).length).toBeLessThanOrEqual(2);
	}, 20_000);
});

describe('A write waiting for a shared turn does not revert an edit made meanwhile', () => {
	it.each(['replace', 'merge'] as const)(
		'an operator’s custom field set while a Create or Update waits behind another execution’s PATCH is kept (PATCH %s fields)',
		async (patchFields) => {
			sim.configure({
				readings: { patchFields },
				faults: { latencyMs: [1500, 1500], only: (req) => req.method === 'PATCH' },
			});
			for (const id of ['E-1', 'E-2'])
				sim.seedTasks(1, () => ({
					uid: uidOf(id),
					fields: { title: 'Old', ticket_id: id, note: 'before' },
				}));
			// E-2's PATCH is under way for 1.5 s; E-1's PATCH, read at once, waits for the next turn.
			const other = runBacklog(sim, upsert, { items: [ticket(2)] });
			await underWay(uidOf('E-2'));
			const mine = runBacklog(sim, upsert, { items: [ticket(1)] });
			await pause(400);
			sim.tasks.get(uidOf('E-1'))!.fields.note = 'set by an operator';
			const [otherRun, myRun] = await Promise.all([other, mine]);
			expect(otherRun.error).toBeUndefined();
			expect(myRun.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('E-1'))!.fields).toMatchObject({
				title: 'Event 1',
				note: 'set by an operator',
			});
		},
		20_000,
	);
});
