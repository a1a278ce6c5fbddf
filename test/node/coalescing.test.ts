/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// One ticket per execution, many executions at once in one n8n process (the spec's event-driven usage): their reads
// and writes share requests (nodes/shared/sharing/coalesce.ts), and each execution still gets exactly its own results.
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, sent, TOKEN, useSimulator, uidOf, upsertByTicket } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const OTHER_TOKEN = 'test-token-other-7a21';
const PACED_TOKEN = 'test-token-paced-3c9d';
const upsert = upsertByTicket;
const ticket = (i: number) => ({ id: `E-${i}`, title: `Event ${i}` });

/** Every request takes 100 ms, as over a real network: what arrives meanwhile waits for the next one. */
const slowServer = () => sim.configure({ faults: { latencyMs: [100, 100] } });

/** The first batch of PUTs is refused naming its first item, as a service validating each item does. */
const refuseFirstItemOfFirstBatch = () =>
	sim.failNext({
		status: 422,
		body: { detail: [{ loc: ['body', 'items', 0, 'fields', 'title'], msg: 'value not accepted' }] },
		when: (req) => req.method === 'PUT' && req.path === '/tasks/batch',
	});

/** 5 executions at once with this Share Requests Across Executions: each sends only its own GET and PUT. */
async function expectOwnRequestsOnly(shareRequests: unknown) {
	slowServer();
	const own = { ...upsert, requestOptions: { shareRequests } };
	const runs = await Promise.all(
		Array.from({ length: 5 }, (_, i) => runBacklog(sim, own, { items: [ticket(i)] })),
	);
	for (const run of runs) expect(run.error).toBeUndefined();
	expect(sim.tasks.size).toBe(5);
	const requests = sim.requests.map((request) => `${request.method} ${request.path}`).sort();
	const expected = Array.from({ length: 5 }, (_, i) => [
		`GET /tasks/${uidOf(`E-${i}`)}`,
		`PUT /tasks/${uidOf(`E-${i}`)}`,
	]).flat();
	expect(requests).toEqual(expected.sort());
}

describe('Executions at once, one ticket each, share their requests', () => {
	it('40 executions of Create or Update by External ID store 40 tasks with far fewer requests than 2 per execution', async () => {
		slowServer();
		const runs = await Promise.all(
			Array.from({ length: 40 }, (_, i) => runBacklog(sim, upsert, { items: [ticket(i)] })),
		);
		for (const [i, run] of runs.entries()) {
			expect(run.error).toBeUndefined();
			expect(run.json).toHaveLength(1);
			expect(run.json[0].uid).toBe(uidOf(`E-${i}`));
			expect(run.items[0].pairedItem).toEqual({ item: 0 });
		}
		expect(sim.tasks.size).toBe(40);
		for (let i = 0; i < 40; i++)
			expect(sim.tasks.get(uidOf(`E-${i}`))!.fields.title).toBe(`Event ${i}`);
		expect(sim.requests.length).toBeLessThanOrEqual(12);
		expect(sent(sim, 'PUT', '/tasks/batch').length).toBeGreaterThan(0);
	});

	it('a large run does not hold back an event that arrives during it: the event is written before the run ends', async () => {
		slowServer();
		const large = runBacklog(
			sim,
			{ ...upsert, requestOptions: { batchSize: 10 } },
			{ items: Array.from({ length: 300 }, (_, i) => ticket(i)) },
		);
		await new Promise((resolve) => setTimeout(resolve, 300));
		const event = await runBacklog(sim, upsert, {
			items: [{ id: 'LONE', title: 'Arrived meanwhile' }],
		});
		expect(event.error).toBeUndefined();
		expect((await large).error).toBeUndefined();
		const writes = sim.requests.filter((request) => request.method === 'PUT');
		const eventAt = writes.findIndex((request) => JSON.stringify(request.body).includes('LONE'));
		expect(eventAt).toBeGreaterThanOrEqual(0);
		expect(eventAt).toBeLessThan(writes.length - 1);
		expect(sim.tasks.size).toBe(301);
	}, 30_000);

	it('with Share Requests Across Executions off, executions at once send only their own requests: a GET and a PUT each', async () => {
		await expectOwnRequestsOnly(false);
	});

	it('with Share Requests Across Executions given as the text "false" by an expression, executions at once send only their own requests', async () => {
		await expectOwnRequestsOnly('={{ "false" }}');
	});

	it.each([
		['={{ "0" }}', '"0"'],
		['={{ "no" }}', '"no"'],
		['={{ 0 }}', '0'],
	])(
		'Share Requests Across Executions from the expression %s, neither true nor false, is an error naming the option and the item, before any request',
		async (expression, shown) => {
			const run = await runBacklog(
				sim,
				{ ...upsert, requestOptions: { shareRequests: expression } },
				{ items: [ticket(1)] },
			);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 0/);
			expect(run.error!.message).toContain('Share Requests Across Executions');
			expect(run.error!.message).toContain(shown);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it('a lone execution is not held back: one ticket costs a GET and a PUT', async () => {
		const run = await runBacklog(sim, upsert, { items: [ticket(1)] });
		expect(run.error).toBeUndefined();
		expect(sim.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
			`GET /tasks/${uidOf('E-1')}`,
			`PUT /tasks/${uidOf('E-1')}`,
		]);
	});

	it('a 422 naming one item of a shared batch fails that execution’s item only; the others succeed', async () => {
		slowServer();
		refuseFirstItemOfFirstBatch();
		const runs = await Promise.all(
			Array.from({ length: 20 }, (_, i) =>
				runBacklog(sim, upsert, { items: [ticket(i)], continueOnFail: true }),
			),
		);
		const failed = runs.filter((run) => run.json[0].error !== undefined);
		expect(failed).toHaveLength(1);
		expect(String(failed[0].json[0].error)).toMatch(/value not accepted/);
		expect(failed[0].items[0].pairedItem).toEqual({ item: 0 });
		expect(sim.tasks.size).toBe(19);
		for (const run of runs.filter((each) => each.json[0].error === undefined))
			expect(sim.tasks.has(String(run.json[0].uid))).toBe(true);
	});

	it('without Continue On Fail, only the execution whose item failed fails', async () => {
		slowServer();
		refuseFirstItemOfFirstBatch();
		const runs = await Promise.all(
			Array.from({ length: 10 }, (_, i) => runBacklog(sim, upsert, { items: [ticket(i)] })),
		);
		expect(runs.filter((run) => run.error !== undefined)).toHaveLength(1);
		expect(sim.tasks.size).toBe(9);
	});

	it('an execution cancelled while its read waits takes it out; the execution waiting with it is still served', async () => {
		sim.configure({ faults: { latencyMs: [2000, 2000] } });
		const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
		const first = runBacklog(sim, upsert, { items: [ticket(1)] });
		await pause(50);
		// Both reads wait behind the first one's (2 s); the second execution is cancelled before that one is answered.
		const cancelled = runBacklog(sim, upsert, { items: [ticket(2)], cancelAfterMs: 1200 });
		await pause(50);
		const third = runBacklog(sim, upsert, { items: [ticket(3)] });
		const [firstRun, , thirdRun] = await Promise.all([first, cancelled, third]);
		expect(firstRun.error).toBeUndefined();
		expect(thirdRun.error).toBeUndefined();
		expect(sim.tasks.has(uidOf('E-1'))).toBe(true);
		expect(sim.tasks.has(uidOf('E-3'))).toBe(true);
		const aboutSecond = sim.requests.filter((request) =>
			`${request.path} ${JSON.stringify(request.body ?? '')}`.includes(uidOf('E-2')),
		);
		expect(aboutSecond).toHaveLength(0);
		expect(sim.tasks.has(uidOf('E-2'))).toBe(false);
	}, 20_000);

	/**
	 * Two runs of 50 new tickets whose writes share one turn of 10 batches of 10 (300 ms each): A's 5 first, then C's.
	 * `cancel` says which is cancelled, 0.9 s in, while A's batches are being sent.
	 */
	async function twoRunsInOneTurn(cancel: 'A' | 'C') {
		sim.configure({ faults: { latencyMs: [300, 300], only: (req) => req.method === 'PUT' } });
		const tickets = (from: number) => Array.from({ length: 50 }, (_, i) => ticket(from + i));
		const options = { ...upsert, requestOptions: { batchSize: 10 } };
		// A write under way, so that both runs' writes wait for the next turn and go in it together.
		const before = runBacklog(sim, upsert, { items: [ticket(999)] });
		while (sent(sim, 'PUT').length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
		const [a, c] = await Promise.all([
			runBacklog(sim, options, {
				items: tickets(0),
				cancelAfterMs: cancel === 'A' ? 900 : undefined,
			}),
			runBacklog(sim, options, {
				items: tickets(100),
				cancelAfterMs: cancel === 'C' ? 900 : undefined,
			}),
		]);
		expect((await before).error).toBeUndefined();
		// Long enough for the whole turn, had it gone on.
		await new Promise((resolve) => setTimeout(resolve, 3500));
		const stored = (from: number) =>
			Array.from({ length: 50 }, (_, i) => uidOf(`E-${from + i}`)).filter((uid) =>
				sim.tasks.has(uid),
			).length;
		return { a, c, storedA: stored(0), storedC: stored(100) };
	}

	it('an execution cancelled while another’s batches of the same turn are sent: none of its own is sent after the cancel', async () => {
		const { a, storedA, storedC } = await twoRunsInOneTurn('C');
		expect(a.error).toBeUndefined();
		expect(storedA).toBe(50);
		expect(storedC).toBe(0);
	}, 20_000);

	it('the execution whose client sends a shared turn is cancelled: the other execution’s writes are still sent, and succeed', async () => {
		const { c, storedA, storedC } = await twoRunsInOneTurn('A');
		expect(c.error).toBeUndefined();
		expect(c.json.every((json) => typeof json.uid === 'string')).toBe(true);
		expect(storedC).toBe(50);
		expect(storedA).toBeLessThan(50);
	}, 20_000);

	it.each([
		['an existing ticket', true],
		['a new ticket', false],
	])(
		'two executions writing %s at once are applied in arrival order, neither undoing the other',
		async (_, exists) => {
			if (exists)
				sim.seedTasks(1, () => ({
					uid: uidOf('E-1'),
					fields: { title: 'Old', ticket_id: 'E-1', a: '0', b: '0' },
				}));
			slowServer();
			const write = (title: string, field: string, value: string) =>
				runBacklog(
					sim,
					{ ...upsert, title, customFields: { field: [{ name: field, value }] } },
					{ items: [{ id: 'E-1' }] },
				);
			const first = write('First', 'a', '1');
			await new Promise((resolve) => setTimeout(resolve, 20));
			const second = write('Second', 'b', '2');
			const [firstRun, secondRun] = await Promise.all([first, second]);
			expect(firstRun.error).toBeUndefined();
			expect(secondRun.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('E-1'))!.fields).toEqual({
				title: 'Second',
				ticket_id: 'E-1',
				a: '1',
				b: '2',
			});
			expect((firstRun.json[0].fields as IDataObject).title).toBe('First');
			expect((secondRun.json[0].fields as IDataObject).title).toBe('Second');
			expect(sim.tasks.size).toBe(1);
		},
	);

	it.each([
		['tokens', { token: OTHER_TOKEN }, 'authorization'],
		[
			'acting users (service-user)',
			{ actingUserUid: '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f' },
			'service-user',
		],
	] as const)('executions with different %s never share a request', async (_, other, header) => {
		sim.configure({ tokens: [TOKEN, OTHER_TOKEN] });
		slowServer();
		const runs = await Promise.all(
			Array.from({ length: 20 }, (_, i) =>
				runBacklog(sim, upsert, { items: [ticket(i)], credentials: i % 2 === 0 ? {} : other }),
			),
		);
		expect(runs.every((run) => run.error === undefined)).toBe(true);
		expect(sim.tasks.size).toBe(20);
		const batches = sent(sim, 'PUT', '/tasks/batch');
		expect(batches.length).toBeGreaterThan(0);
		for (const request of batches) {
			const items = (request.body as { items: IDataObject[] }).items;
			const theOther =
				header === 'authorization'
					? request.headers.authorization === `Bearer ${OTHER_TOKEN}`
					: request.headers[header] !== undefined;
			for (const item of items)
				expect(Number(String((item.fields as IDataObject).ticket_id).slice(2)) % 2).toBe(
					theOther ? 1 : 0,
				);
		}
	});
});

describe('Writes of one task by several executions of the process: none undoes another', () => {
	const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
	/** Resolves once the simulator has received `count` requests that `match`. */
	async function received(
		match: (request: { method: string; path: string }) => boolean,
		count = 1,
	) {
		while (sim.requests.filter(match).length < count) await sleep(2);
	}
	const isPatch = (request: { method: string }) => request.method === 'PATCH';
	const sync = {
		resource: 'task',
		operation: 'syncBacklog',
		externalId: '={{ $json.id }}',
		title: '={{ $json.title }}',
		sourceValue: 'helpdesk',
	};

	it('an execution that sets back what the one before it changed ends with its values, though it read the task before that change landed', async () => {
		sim.seedTasks(1, () => ({ uid: uidOf('E-1'), fields: { title: 'Old', ticket_id: 'E-1' } }));
		// The first execution's PATCH takes 300 ms to land: the second reads the task meanwhile, still "Old".
		sim.configure({ faults: { latencyMs: [300, 300], only: isPatch } });
		const write = (title: string) =>
			runBacklog(sim, { ...upsert, title }, { items: [{ id: 'E-1' }] });
		const first = write('New');
		await received(isPatch);
		const second = await write('Old');
		const firstRun = await first;
		expect(firstRun.error).toBeUndefined();
		expect(second.error).toBeUndefined();
		expect((firstRun.json[0].fields as IDataObject).title).toBe('New');
		expect((second.json[0].fields as IDataObject).title).toBe('Old');
		expect(sim.tasks.get(uidOf('E-1'))!.fields.title).toBe('Old');
	});

	it.each(['noop', 'replace'] as const)(
		'Sync Backlog does not PUT over a task an event created while Sync was reading (PUT on an existing uid: %s): the event’s custom fields stay',
		async (reading) => {
			sim.configure({
				readings: { putExisting: reading, batchPutExisting: reading },
				// Sync's bulk reads of its unlisted tickets take 300 ms each; the event reads with a GET.
				faults: { latencyMs: [300, 300], only: (request) => request.path === '/tasks/query' },
			});
			const syncing = runBacklog(sim, sync, {
				items: [
					{ id: 'S-1', title: 'From the sync' },
					{ id: 'S-2', title: 'Another' },
				],
			});
			// The first read has found S-1 absent: the event creates it before the second read is answered.
			await received((request) => request.path === '/tasks/query', 2);
			const event = await runBacklog(
				sim,
				{
					...upsert,
					title: 'From the event',
					customFields: { field: [{ name: 'priority', value: 'high' }] },
				},
				{ items: [{ id: 'S-1' }] },
			);
			const syncRun = await syncing;
			expect(event.error).toBeUndefined();
			expect(syncRun.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('S-1'))!.fields).toEqual({
				title: 'From the sync',
				ticket_id: 'S-1',
				source: 'helpdesk',
				priority: 'high',
			});
			expect(sim.tasks.size).toBe(2);
		},
	);

	it.each(['merge', 'replace'] as const)(
		'a Sync Backlog PATCH and an event’s PATCH of one task, sent while the other is under way, both land (PATCH fields: %s)',
		async (patchFields) => {
			sim.seedTasks(1, () => ({
				uid: uidOf('S-1'),
				fields: { title: 'Ticket', ticket_id: 'S-1', source: 'helpdesk', a: '0', b: '0' },
			}));
			sim.configure({
				readings: { patchFields },
				faults: { latencyMs: [300, 300], only: isPatch },
			});
			const syncing = runBacklog(
				sim,
				{ ...sync, customFields: { field: [{ name: 'b', value: '1' }] } },
				{ items: [{ id: 'S-1', title: 'Ticket' }] },
			);
			// Sync's PATCH is on its way; the event reads the task before it lands (a and b still 0), then writes a.
			await received(isPatch);
			const event = await runBacklog(
				sim,
				{ ...upsert, title: 'Ticket', customFields: { field: [{ name: 'a', value: '1' }] } },
				{ items: [{ id: 'S-1' }] },
			);
			const syncRun = await syncing;
			expect(event.error).toBeUndefined();
			expect(syncRun.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('S-1'))!.fields).toEqual({
				title: 'Ticket',
				ticket_id: 'S-1',
				source: 'helpdesk',
				a: '1',
				b: '1',
			});
		},
	);
});

describe('A burst of events costs few requests', () => {
	/** `count` executions started `apartMs` from each other, one ticket each. */
	const staggered = (count: number, apartMs: number) =>
		Promise.all(
			Array.from({ length: count }, async (_, i) => {
				await new Promise((resolve) => setTimeout(resolve, i * apartMs));
				return await runBacklog(sim, upsert, { items: [ticket(i)] });
			}),
		);

	it('a shared read of new tickets asks last for a task the caller wrote before: it comes back, so no GET confirms the others are new', async () => {
		const earlier = await runBacklog(sim, upsert, { items: [ticket(0)] });
		expect(earlier.error).toBeUndefined();
		const since = sim.requests.length;
		const run = await runBacklog(sim, upsert, { items: [ticket(1), ticket(2), ticket(3)] });
		expect(run.error).toBeUndefined();
		const requests = sim.requests.slice(since);
		// Queries only (a server that does not say a page is the last is asked for the next one), then the batch.
		expect(requests.filter((request) => request.method === 'GET')).toHaveLength(0);
		expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
			...requests.slice(0, -1).map(() => 'POST /tasks/query'),
			'PUT /tasks/batch',
		]);
		const asked = (requests[0].body as { condition: { value: string[] } }).condition.value;
		expect(asked[asked.length - 1]).toBe(uidOf('E-0'));
		expect(run.json.map((json) => json.uid)).toEqual([uidOf('E-1'), uidOf('E-2'), uidOf('E-3')]);
		expect(sim.tasks.size).toBe(4);
	});

	/**
	 * A rate of 300 a minute: one request spacing is 200 ms, so the lingering is long enough to measure. With a token of
	 * its own: its limiter and lanes are not those of the earlier tests, whose requests of the last minute would count
	 * against a rate this low.
	 */
	const paced = { requestsPerMinute: 300, token: PACED_TOKEN };
	beforeEach(() => sim.configure({ tokens: [TOKEN, PACED_TOKEN] }));
	const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
	const bunch = (from: number, count: number, options: IDataObject = {}, credentials = paced) =>
		Array.from({ length: count }, (_, i) =>
			runBacklog(sim, { ...upsert, ...options }, { items: [ticket(from + i)], credentials }),
		);
	const queriesSent = () => sent(sim, 'POST', '/tasks/query').length;
	const batchOf10 = { requestOptions: { batchSize: 10 } };
	/** A ticket written, then a pause: the lanes have sent before (a lane's very first turn goes at once). */
	async function oneEarlierTicket() {
		const run = await runBacklog(sim, upsert, { items: [ticket(0)], credentials: paced });
		expect(run.error).toBeUndefined();
		await sleepMs(400);
	}

	it('executions started in bunches less than a request spacing apart share one read', async () => {
		await oneEarlierTicket();
		const since = queriesSent();
		const runs: Array<ReturnType<typeof runBacklog>> = [];
		for (let i = 0; i < 4; i++) {
			runs.push(...bunch(1 + i * 5, 5));
			await sleepMs(100);
		}
		for (const run of await Promise.all(runs)) expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(21);
		// One read: tasks not archived, then archived (a server without query cursors may add an empty page).
		expect(queriesSent() - since).toBeLessThanOrEqual(3);
	}, 30_000);

	it('the writes of a read that did not fill a batch go with the next read’s writes, not alone', async () => {
		await oneEarlierTicket();
		const first = bunch(1, 15, batchOf10);
		await sleepMs(350);
		const second: Array<ReturnType<typeof runBacklog>> = [];
		for (let i = 0; i < 3; i++) {
			second.push(...bunch(16 + i * 5, 5, batchOf10));
			await sleepMs(150);
		}
		for (const run of await Promise.all([...first, ...second])) expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(31);
		expect(
			sent(sim, 'PUT', '/tasks/batch').map(
				(request) => (request.body as { items: unknown[] }).items.length,
			),
		).toEqual([10, 10, 10]);
	}, 30_000);

	it('what a burst’s full batches left waits for the next read’s writes, even a read of fewer', async () => {
		await oneEarlierTicket();
		// Each request takes half a second: the burst's read ends about 1.2 s in, its batch of 10 about 1.7 s in.
		sim.configure({ faults: { latencyMs: [500, 500] } });
		const burst = bunch(1, 15, batchOf10);
		// Two more arrive after the burst's read and are read together while the burst's 5 left wait (fewer than 5).
		await sleepMs(1300);
		const late = bunch(16, 2, batchOf10);
		for (const run of await Promise.all([...burst, ...late])) expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(18);
		const batches = sent(sim, 'PUT', '/tasks/batch').map(
			(request) => (request.body as { items: unknown[] }).items.length,
		);
		expect(batches).toEqual([10, 7]);
	}, 30_000);

	/** The requests that name this ticket's task: a GET of its own, or a query or batch it shares. */
	const requestsFor = (i: number) =>
		sim.requests.filter((request) =>
			`${request.path} ${JSON.stringify(request.body ?? '')}`.includes(uidOf(`E-${i}`)),
		);

	it('the first execution of a bunch that follows a burst seconds later waits for its bunch: one read for all, no GET of its own', async () => {
		// 120 a minute: a request spacing of half a second, so the bunch's rest arrives well within it on a busy machine.
		const slower = { ...paced, requestsPerMinute: 120 };
		const burst = bunch(1, 5, {}, slower);
		for (const run of await Promise.all(burst)) expect(run.error).toBeUndefined();
		// Three spacings later (more than a burst's arrivals are apart), the head of the next bunch, then the rest.
		await sleepMs(1500);
		const head = bunch(6, 1, {}, slower);
		await sleepMs(100);
		const rest = bunch(7, 4, {}, slower);
		for (const run of await Promise.all([...head, ...rest])) expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(10);
		expect(requestsFor(6).filter((request) => request.method === 'GET')).toHaveLength(0);
		const headRead = requestsFor(6).find((request) => request.path === '/tasks/query');
		expect(headRead).toBeDefined();
		for (const i of [7, 8, 9, 10]) expect(requestsFor(i)).toContain(headRead);
	}, 30_000);

	it('a lone event after a lone event is not held back for company: each goes at once, with a GET and a PUT of its own', async () => {
		await oneEarlierTicket();
		const first = await runBacklog(sim, upsert, { items: [ticket(1)], credentials: paced });
		expect(first.error).toBeUndefined();
		await sleepMs(600);
		const lone = bunch(2, 1);
		await sleepMs(100);
		const next = bunch(3, 1);
		for (const run of await Promise.all([...lone, ...next])) expect(run.error).toBeUndefined();
		for (const i of [1, 2, 3])
			expect(requestsFor(i).map((request) => request.method)).toEqual(['GET', 'PUT']);
	}, 30_000);

	it('executions at once learn an undocumented batch limit once: one refused batch for the whole burst', async () => {
		sim.configure({
			readings: { maxBatchSize: 50, batchTooLarge: '413' },
			// Requests of 200 ms: while one is under way, more than 50 executions' writes wait, so the burst's batches
			// are larger than the limit whatever the machine's speed (at 20 ms, on an idle machine, most turns carried
			// fewer than 50 and whether one went over the limit was chance).
			faults: { latencyMs: [200, 200] },
		});
		const runs = await staggered(400, 2);
		expect(runs.filter((run) => run.error !== undefined)).toHaveLength(0);
		expect(sim.tasks.size).toBe(400);
		expect(
			sent(sim, 'PUT', '/tasks/batch').filter((request) => request.status === 413),
		).toHaveLength(1);
	}, 30_000);
});
