/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
/**
 * One limiter per token in a process (issue 44): the service counts requests per token, so the limiter is keyed on the
 * token as it is sent (trimmed), whatever the Base URL says, and an execution holds it from when it is handed over to
 * the execution's end: the registry (callers/registry.ts) never drops it meanwhile, past MAX_CALLERS or IDLE_MS, so
 * the next execution on the token never makes a second one (which would send twice the rate). Over real HTTP against
 * the simulator, which counts the token's requests in a fixed window and answers 429 past the limit.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	callerCount,
	callerState,
	IDLE_MS,
	MAX_CALLERS,
} from '../../nodes/shared/callers/registry';
import { limiterFor } from '../../nodes/shared/transport/rateLimiter';
import { BacklogClient } from '../../nodes/shared/transport/client';
import type { BacklogContext } from '../../nodes/shared/transport/client';
import { byId, runBacklog, sent, TOKEN, useSimulator } from '../helpers/backlog';
import type { BacklogRun } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

const LIMIT = 10;
const WINDOW_MS = 1000;
const credentials = { requestsPerMinute: LIMIT, rateLimitWindowSeconds: WINDOW_MS / 1000 };

let sim: Simulator;
useSimulator((started) => (sim = started), { requestsPerWindow: LIMIT, windowMs: WINDOW_MS });
afterEach(() => jest.restoreAllMocks());

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Task Get of each of `uids`, one request each, one after the other (an item operation). */
const getEach = (uids: string[], extra: IDataObject = {}) =>
	runBacklog(
		sim,
		{ resource: 'task', operation: 'get', task: byId('={{ $json.uid }}') },
		{ items: uids.map((uid) => ({ uid })), credentials: { ...credentials, ...extra } },
	);

/** The most requests the server counted in any one of its windows, and how many it refused (429). */
function serverCounts() {
	const requests = sent(sim);
	let most = 0;
	for (const first of requests)
		most = Math.max(
			most,
			requests.filter((request) => request.at >= first.at && request.at < first.at + WINDOW_MS)
				.length,
		);
	return { most, refused: requests.filter((request) => request.status === 429).length };
}

/** The server refused nothing, and never counted more than the limit in a window. */
function expectWithinLimit() {
	const { most, refused } = serverCounts();
	expect(refused).toBe(0);
	expect(most).toBeLessThanOrEqual(LIMIT);
}

/** Callers the registry must walk past (busy for good): more than it keeps. */
function fillWithBusyCallers() {
	for (let i = 0; i < MAX_CALLERS; i++)
		callerState(`busy-${i}`).part('lane', () => ({ busy: () => true }));
	// Touches enough to make the registry walk its table at least once more, whatever touches it rests for.
	for (let i = 0; i < 2 * MAX_CALLERS + 2; i++) callerState(`other-${i}`);
}

/**
 * Runs `first` until its first request has been answered 503 with Retry-After: 2 (its execution then sends nothing
 * for 2 s, longer than the 1 s window: its limiter has nothing in the window), calls `meanwhile`, then starts `second`
 * while the first still waits; both to the end.
 */
async function quietThenSecond(
	first: () => Promise<BacklogRun>,
	meanwhile: () => void,
	second: () => Promise<BacklogRun>,
): Promise<BacklogRun[]> {
	sim.failNext({ status: 503, retryAfter: 2 });
	const one = first();
	const started = Date.now();
	while (!sent(sim).some((request) => request.status === 503) && Date.now() - started < 10_000)
		await pause(5);
	// Past the window: the 503 no longer counts anywhere.
	await pause(WINDOW_MS + 100);
	meanwhile();
	const two = second();
	return await Promise.all([one, two]);
}

describe('one limiter per token in a process', () => {
	it('two credentials with one token and Base URLs 127.0.0.1 and LocalHost share one limiter: never more than the limit in a window', async () => {
		const tasks = sim.seedTasks(6).map((task) => task.uid);
		const localhost = sim.url.replace('127.0.0.1', 'LocalHost');
		const runs = await Promise.all([getEach(tasks), getEach(tasks, { baseUrl: localhost })]);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expectWithinLimit();
		expect(sent(sim)).toHaveLength(12);
	}, 30_000);

	it('a token saved with a space and a line break around it shares the limiter of the token as sent: never more than the limit in a window', async () => {
		const tasks = sim.seedTasks(6).map((task) => task.uid);
		const runs = await Promise.all([getEach(tasks), getEach(tasks, { token: ` ${TOKEN}\n` })]);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expectWithinLimit();
		expect(sent(sim)).toHaveLength(12);
	}, 30_000);

	it('an execution quiet for a window keeps its limiter past MAX_CALLERS busy callers: the next execution on the token shares it, never more than the limit in a window', async () => {
		const tasks = sim.seedTasks(10).map((task) => task.uid);
		const runs = await quietThenSecond(
			() => getEach(tasks),
			fillWithBusyCallers,
			() => getEach(tasks),
		);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expectWithinLimit();
		expect(sent(sim)).toHaveLength(21);
	}, 30_000);

	it(`an execution quiet for a window keeps its limiter after IDLE_MS (${IDLE_MS / 60_000} minutes) without a new execution on the token: the next one shares it, never more than the limit in a window`, async () => {
		const tasks = sim.seedTasks(10).map((task) => task.uid);
		const runs = await quietThenSecond(
			() => getEach(tasks),
			() => {
				// The monotonic clock (callers/registry.ts now()) moves on by IDLE_MS; timers and the simulator's clock do not.
				const real = performance.now.bind(performance);
				jest.spyOn(performance, 'now').mockImplementation(() => real() + IDLE_MS + 1);
				callerState('another caller');
			},
			() => getEach(tasks),
		);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expectWithinLimit();
		expect(sent(sim)).toHaveLength(21);
	}, 30_000);
});

describe('the hold on a limiter', () => {
	it('a limiter handed to an execution that has sent nothing yet is kept past MAX_CALLERS busy callers and IDLE_MS; once released and idle it is forgotten as before', () => {
		const real = performance.now.bind(performance);
		let offset = 0;
		jest.spyOn(performance, 'now').mockImplementation(() => real() + offset);
		const first = limiterFor('token C', LIMIT, WINDOW_MS);
		fillWithBusyCallers();
		offset = IDLE_MS + 1;
		callerState('another caller');
		const second = limiterFor('token C ', LIMIT, WINDOW_MS);
		expect(second.limiter).toBe(first.limiter);
		first.release();
		second.release();
		// Released twice: nothing more happens.
		second.release();
		offset += IDLE_MS + 1;
		// Enough touches for the registry to walk its table again (it rests between walks past busy callers).
		for (let i = 0; i < 2 * MAX_CALLERS + 2; i++) callerState(`later-${i}`);
		const third = limiterFor('token C', LIMIT, WINDOW_MS);
		expect(third.limiter).not.toBe(first.limiter);
		third.release();
		// The idle callers were dropped, the busy ones kept: the table stays bounded by what is busy.
		expect(callerCount()).toBeLessThanOrEqual(MAX_CALLERS + 3);
	});

	it('a client holds its limiter from when it connects until done(), and keys shared requests on the token as sent', async () => {
		const node = { name: 'Task Backlog', credentials: {} };
		const contextFor = (token: string) =>
			({
				getNode: () => node,
				getCredentials: async () => ({ baseUrl: sim.url, token, ...credentials }),
			}) as unknown as BacklogContext;
		/** Whether anything holds the token's limiter or has requests in its window (a probe's own hold released). */
		const busy = () => {
			const probe = limiterFor(TOKEN, LIMIT, WINDOW_MS);
			probe.release();
			return probe.limiter.busy();
		};
		const client = new BacklogClient(contextFor(TOKEN));
		const padded = new BacklogClient(contextFor(`\t${TOKEN} \n`));
		expect(await padded.callerKey()).toBe(await client.callerKey());
		expect(busy()).toBe(true);
		client.done();
		await pause(0);
		expect(busy()).toBe(true);
		padded.done();
		await pause(0);
		expect(busy()).toBe(false);
	});
});
