/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
/**
 * The adaptive rate limiter's rules, one process: how a 429 cuts the rate and how it grows back, the waits after a
 * 429 (they reach a whole window within the attempts, and stop there), and, over real HTTP against the simulator,
 * a request that meets a window another client has filled waits it out instead of failing. Several processes on one
 * token: test/scale-out/processes.test.ts; n8n queue mode: test/e2e/queue-mode.test.ts.
 */
import { NodeApiError } from 'n8n-workflow';
import { request } from 'undici';

import { now as clock } from '../../nodes/shared/callers/registry';
import {
	BURST,
	DECREASE,
	INCREASE,
	MIN_SHARE,
	RateLimiter,
} from '../../nodes/shared/transport/rateLimiter';
import { byId, runBacklog, sent, TOKEN, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

/**
 * The limiters here let a whole window's requests leave back to back (burst = the limit), as a limiter did before the
 * pacing at the configured rate (rateLimiter.ts, BURST): the rules of a cut are shown without the pacing's waits.
 */

/** n requests through the limiter, answered with `status`. */
async function send(limiter: RateLimiter, n: number, status = 200) {
	for (let i = 0; i < n; i++) (await limiter.acquire())(status);
}

describe('a 429 cuts the rate, multiplicatively, once per window', () => {
	it(`to ${DECREASE} × what the process sent in the last window`, async () => {
		const limiter = new RateLimiter(60, 60_000, 60);
		await send(limiter, 18);
		const [first, second] = [await limiter.acquire(), await limiter.acquire()];
		first(429);
		expect(limiter.allowance).toBe(Math.floor(DECREASE * 20));
		// another 429 of the same window (a request in flight at the same time) is the same signal
		second(429);
		expect(limiter.allowance).toBe(Math.floor(DECREASE * 20));
	});

	it('a second 429 for requests answered after the window has passed does not hold the process back for ever', async () => {
		const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
		const limiter = new RateLimiter(60, 50, 60);
		const [first, second] = [await limiter.acquire(), await limiter.acquire()];
		await pause(120);
		// A later request: the two still under way have left the window's slots.
		(await limiter.acquire())(200);
		await pause(120);
		const timers = jest.spyOn(global, 'setTimeout');
		first(429);
		second(429);
		await limiter.acquire();
		// Held for ever, the limiter would sleep Infinity ms (which Node cuts to 1 ms: the limit is then off).
		expect(timers.mock.calls.map(([, ms]) => ms ?? 0).filter((ms) => !Number.isFinite(ms))).toEqual(
			[],
		);
		timers.mockRestore();
	});

	it(`never below ${MIN_SHARE} of the configured limit, nor below 1 request per window`, async () => {
		const limiter = new RateLimiter(60, 60_000, 60);
		await send(limiter, 1, 429);
		expect(limiter.allowance).toBe(Math.floor(60 * MIN_SHARE));
		const small = new RateLimiter(5, 60_000, 5);
		await send(small, 1, 429);
		expect(small.allowance).toBe(1);
	});

	it('other answers (2xx, 4xx, 5xx) change nothing; without a 429 the rate is the configured limit', async () => {
		const limiter = new RateLimiter(60, 60_000, 60);
		await send(limiter, 3, 200);
		await send(limiter, 3, 404);
		await send(limiter, 3, 503);
		expect(limiter.allowance).toBe(60);
		expect(limiter.rateAt()).toBe(60);
	});

	it(`grows back with time: +${INCREASE * 100}% of the limit after one window, cubic after, never above the limit`, async () => {
		const limiter = new RateLimiter(60, 1000, 60);
		await send(limiter, 19);
		await send(limiter, 1, 429);
		const now = clock();
		const window = 1000;
		const cut = DECREASE * 20;
		expect(limiter.rateAt(now)).toBeCloseTo(cut, 0);
		expect(limiter.rateAt(now + window)).toBeCloseTo(cut + INCREASE * 60, 0);
		expect(limiter.rateAt(now + 2 * window)).toBeCloseTo(cut + INCREASE * 60 * 8, 0);
		expect(limiter.rateAt(now + 10 * window)).toBe(60);
	});

	it('after a cut to the floor (it had sent too little to learn its share) it doubles every half window instead', async () => {
		const limiter = new RateLimiter(60, 1000, 60);
		await send(limiter, 1, 429);
		const now = clock();
		const window = 1000;
		expect(limiter.rateAt(now)).toBeCloseTo(60 * MIN_SHARE, 0);
		expect(limiter.rateAt(now + window / 2)).toBeCloseTo(2 * 60 * MIN_SHARE, 0);
		expect(limiter.rateAt(now + window)).toBeCloseTo(4 * 60 * MIN_SHARE, 0);
		expect(limiter.rateAt(now + 2 * window)).toBe(60);
	});

	it('another configuration keeps what a 429 taught: the rate cut to, per unit of time, under the tighter limit', async () => {
		const limiter = new RateLimiter(60, 60_000, 60);
		await send(limiter, 1, 429);
		limiter.configure(60, 60_000);
		expect(limiter.allowance).toBe(3);
		limiter.configure(30, 60_000);
		expect(limiter.allowance).toBe(3);
		// 30 per 30 s is looser: 30 per minute stays in force; 2 per 10 s is tighter, and the cut rate, 3.75 per
		// minute, is 0.625 per 10 s there (a process sends at least 1 per window)
		limiter.configure(30, 30_000);
		expect(limiter.allowance).toBe(3);
		limiter.configure(2, 10_000);
		expect(limiter.allowance).toBe(1);
	});

	it(`after a cut the requests of the window hold the next ones back; then ${BURST} leave as they free, the rest one spacing apart`, async () => {
		// paced as in use (a bucket of BURST), in a 3 s window: the 19 leave about 50 ms apart (3 s / 60)
		const limiter = new RateLimiter(60, 3000);
		await send(limiter, 19);
		await send(limiter, 1, 429);
		const started = Date.now();
		const times: number[] = [];
		for (let i = 0; i < 8; i++) {
			(await limiter.acquire())(200);
			times.push(Date.now() - started);
		}
		// held back until enough of the 20 have left the 3 s window: the 7th of them left about 0.15 s after the first,
		// 0.8 s before the clock started here (the 14 the cut allows stay in the window); not a cut spacing (0.2 s)
		expect(times[0]).toBeGreaterThanOrEqual(2000);
		// the first BURST leave as the old requests leave the window, about 50 ms apart: not each a cut spacing later
		expect(times[BURST - 1] - times[0]).toBeLessThan(450);
		// then about window / rate apart (the rate is 14 to 17 by then, growing: 180 to 220 ms each, ±10%)
		expect(times[7] - times[BURST]).toBeGreaterThanOrEqual(450);
	});

	it('below the full rate each request leaves one jittered spacing after the last: the bucket does not multiply the jitter', async () => {
		// 3 s window, cut to 14. The jitter draws alternate between its two ends (−10 %, +10 %), so two gaps in a row
		// differ by at most 1.1 / 0.9 (and the rate's growth, which shortens both alike): a bucket whose depth moved with
		// the draws gave gaps of 0.3 and 1.7 spacings in turn.
		const limiter = new RateLimiter(60, 3000);
		await send(limiter, 19);
		await send(limiter, 1, 429);
		let draw = 0;
		const random = jest
			.spyOn(Math, 'random')
			.mockImplementation(() => (draw++ % 2 === 0 ? 0 : 0.999));
		const times: number[] = [];
		try {
			for (let i = 0; i < 11; i++) {
				(await limiter.acquire())(200);
				times.push(Date.now());
			}
		} finally {
			random.mockRestore();
		}
		const gaps = times.slice(BURST + 1).map((time, index) => time - times[BURST + index]);
		for (let i = 1; i < gaps.length; i++) {
			const [short, long] = [gaps[i - 1], gaps[i]].sort((a, b) => a - b);
			expect(long / short).toBeLessThan(1.6);
		}
	});

	it('after a cut the pause ends at most 3 % of a window after the requests of the window have left it', async () => {
		// 3 s window, as above: the cut allows 14, so the pause lasts until the 7th of the 20 has left the window (about
		// 0.8 s before the clock starts here); the largest random spread adds 90 ms, not a tenth of the window (300 ms)
		const limiter = new RateLimiter(60, 3000);
		await send(limiter, 19);
		const random = jest.spyOn(Math, 'random').mockReturnValue(0.999);
		let started = 0;
		try {
			await send(limiter, 1, 429);
			started = Date.now();
		} finally {
			random.mockRestore();
		}
		(await limiter.acquire())(200);
		const waited = Date.now() - started;
		expect(waited).toBeGreaterThanOrEqual(2000);
		expect(waited).toBeLessThan(2600);
	});

	it('a 429 with Retry-After pauses until the time the server named and cuts nothing: the requests sent so far, fewer than the limit, hold nothing back after it', async () => {
		const limiter = new RateLimiter(60, 2000, 60);
		await send(limiter, 19);
		(await limiter.acquire())(429, 500);
		const started = clock();
		limiter.pauseUntil(started + 500, true);
		expect(limiter.allowance).toBe(60);
		(await limiter.acquire())(200);
		const waited = clock() - started;
		// not the ~2 s until the 20 requests have left the window (a cut to 14 would hold them)
		expect(waited).toBeGreaterThanOrEqual(490);
		expect(waited).toBeLessThan(1500);
	});
});

describe('the waits after a 429 without Retry-After', () => {
	const budget = { maxAttempts: 5, baseDelayMs: 2000, maxDelayMs: 15_000 };

	it('follow the retry policy (2 s, 4 s, 8 s, jittered) and reach a whole window before the last attempt', () => {
		const limiter = new RateLimiter(60, 60_000, 60);
		for (let i = 0; i < 50; i++) {
			const waits = [1, 2, 3, 4].map((attempt) => limiter.throttleDelayMs(attempt, budget));
			expect(waits[0]).toBeGreaterThanOrEqual(1800);
			expect(waits[0]).toBeLessThanOrEqual(2200);
			expect(waits[1]).toBeGreaterThanOrEqual(3600);
			expect(waits[2]).toBeLessThanOrEqual(8800);
			expect(waits[3]).toBeGreaterThanOrEqual(60_000);
			// and stop there: the whole wait of one request is bounded
			expect(waits[3]).toBeLessThanOrEqual(60_000 * 1.1);
			expect(waits.reduce((a, b) => a + b)).toBeLessThanOrEqual(2200 + 4400 + 8800 + 60_000 * 1.1);
		}
	});

	it('with 2 attempts, the one retry waits a window; with a window shorter than the backoff, the backoff stands', () => {
		const minute = new RateLimiter(60, 60_000, 60);
		expect(minute.throttleDelayMs(1, { ...budget, maxAttempts: 2 })).toBeGreaterThanOrEqual(60_000);
		const second = new RateLimiter(60, 1000, 60);
		expect(second.throttleDelayMs(4, budget)).toBeGreaterThanOrEqual(15_000 * 0.9);
	});

	it('a 429 may name, in Retry-After, a wait up to a whole window (and its jitter), longer than the policy allows otherwise', () => {
		expect(new RateLimiter(60, 60_000, 60).longestWaitMs(15_000)).toBe(Math.ceil(60_000 * 1.1));
		expect(new RateLimiter(60, 1000, 60).longestWaitMs(15_000)).toBe(15_000);
	});
});

describe('over HTTP: a request that meets a window another client has filled', () => {
	let sim: Simulator;
	let uid: string;
	const WINDOW_MS = 1500;
	const credentials = { requestsPerMinute: 60, rateLimitWindowSeconds: WINDOW_MS / 1000 };

	useSimulator((started) => (sim = started), { requestsPerWindow: 60, windowMs: WINDOW_MS });
	beforeEach(() => {
		[{ uid }] = sim.seedTasks(1);
	});

	/** Another client (not this process's limiter) uses up the token's window. */
	async function fillWindow() {
		for (let i = 0; i < 60; i++) {
			const res = await request(`${sim.url}/tasks/${uid}`, {
				headers: { authorization: `Bearer ${TOKEN}` },
			});
			await res.body.dump();
		}
	}

	it('waits the window out within its 5 attempts (retry delay 20 ms: the backoff alone would give up after 0.3 s)', async () => {
		await fillWindow();
		const filledAt = Date.now();
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'get',
				task: byId(uid),
				requestOptions: { retryDelayMs: 20, maxAttempts: 5 },
			},
			{ credentials },
		);
		expect(run.error).toBeUndefined();
		const statuses = sent(sim).map((entry) => entry.status);
		expect(statuses[statuses.length - 1]).toBe(200);
		expect(statuses.length).toBeLessThanOrEqual(5);
		expect(Date.now() - filledAt).toBeLessThan(WINDOW_MS * 3);
	}, 20_000);

	it('with Max Attempts 2, its one retry waits the window out', async () => {
		await fillWindow();
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'get',
				task: byId(uid),
				requestOptions: { retryDelayMs: 20, maxAttempts: 2 },
			},
			{ credentials },
		);
		expect(run.error).toBeUndefined();
		expect(sent(sim).map((entry) => entry.status)).toEqual([429, 200]);
	}, 20_000);

	it('a token that stays rate limited ends the run in bounded time, with the error saying what to do', async () => {
		sim.failNext(...Array.from({ length: 5 }, () => ({ status: 429 })));
		const started = Date.now();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'get',
				task: byId(uid),
				requestOptions: { retryDelayMs: 20, maxAttempts: 5 },
			},
			{ credentials },
		);
		const elapsed = Date.now() - started;
		expect(sent(sim)).toHaveLength(5);
		expect((run.error as NodeApiError).httpCode).toBe('429');
		expect((run.error as NodeApiError).description).toMatch(
			/Still rate limited after 5 attempts.*Lower Requests per Minute/,
		);
		// the waits reached a window (the last one) and stopped: at most 4 windows with their jitter
		expect(elapsed).toBeGreaterThanOrEqual(WINDOW_MS);
		expect(elapsed).toBeLessThanOrEqual(4 * WINDOW_MS * 1.1 + 2000);
	}, 20_000);
});
