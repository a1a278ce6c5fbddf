/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
/**
 * A 429's Retry-After pauses every request of the token for that long: the requests under way at the 429 do not extend
 * the pause, and the 429 does not cut the rate (a cut to the floor takes windows to grow back). It does not change how
 * the process counts its own requests: a Retry-After shorter than the server's window never lets it send more than the
 * limit in one window. Over real HTTP against the simulator at the service's own 60 requests a minute, and on the
 * limiter alone.
 */
import { now as clock } from '../../nodes/shared/callers/registry';
import { RateLimiter } from '../../nodes/shared/transport/rateLimiter';
import { byId, runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('over HTTP: ten Task Get executions at once, at 60 requests a minute', () => {
	let sim: Simulator;
	// Every answer takes 400 ms but the scripted 429's: the three other requests of the first burst are under way then.
	useSimulator((started) => (sim = started), { faults: { latencyMs: [400, 400] } });

	it('a Retry-After of 1 s with three requests under way delays the others about 1 s, not a window', async () => {
		const tasks = sim.seedTasks(10);
		sim.failNext({ status: 429, retryAfter: 1 });
		const started = Date.now();
		const finished: number[] = [];
		const runs = tasks.map(({ uid }) =>
			runBacklog(
				sim,
				{ resource: 'task', operation: 'get', task: byId(uid) },
				{ credentials: { requestsPerMinute: 60, rateLimitWindowSeconds: 60 } },
			).then((run) => {
				finished.push(Date.now() - started);
				return run;
			}),
		);
		// Bounded, so that a limiter held for a window fails here rather than at the test's timeout.
		let deadline: NodeJS.Timeout | undefined;
		await Promise.race([
			Promise.all(runs),
			new Promise((resolve) => (deadline = setTimeout(resolve, 25_000))),
		]);
		clearTimeout(deadline);
		// 4 at once, the retry 1 s after the 429, then one a second: the last leaves about 7 s in (before: past 60 s).
		expect(finished).toHaveLength(10);
		expect(Math.max(...finished)).toBeLessThan(14_000);
		expect((await Promise.all(runs)).map((run) => run.error)).toEqual(tasks.map(() => undefined));

		const requests = sent(sim);
		expect(requests).toHaveLength(11);
		const throttled = requests.find((request) => request.status === 429)!;
		// The three others of the first burst left with it (the pause holds every later one), each answered 400 ms after
		// it arrived: under way at the 429. On a loaded machine they reach the server up to a few hundred ms apart.
		const others = requests.filter((request) => request !== throttled).sort((a, b) => a.at - b.at);
		const underWay = others.slice(0, 3);
		for (const request of underWay) expect(request.at - throttled.at).toBeLessThan(2000);
		// Nothing else left during the pause; the first after it about 1 s after the 429, not a window.
		const after = others.slice(3);
		for (const request of after) expect(request.at - throttled.at).toBeGreaterThanOrEqual(950);
		expect(after[0].at - throttled.at).toBeLessThan(4000);
	}, 60_000);
});

describe('on the limiter alone', () => {
	it('requests under way at a 429 with Retry-After do not extend the pause, and the rate is not cut', async () => {
		// 4 per 4 s: one request, a 429 with Retry-After 300 ms on it, and two under way that finish 1 s later: the next
		// leave once the pause is over, at the full rate, as if the 429 had not come.
		const limiter = new RateLimiter(4, 4000);
		const started = clock();
		const releases: Array<(status?: number, retryAfterMs?: number) => void> = [];
		for (let i = 0; i < 3; i++) releases.push(await limiter.acquire());
		releases[0](429, 300);
		limiter.pauseUntil(started + 300, true);
		const finishLater = pause(1000).then(() => {
			for (const release of releases.slice(1)) release(200);
		});
		expect(limiter.allowance).toBe(4);
		(await limiter.acquire())(200);
		const first = clock() - started;
		expect(first).toBeGreaterThanOrEqual(290);
		expect(first).toBeLessThan(1000);
		await finishLater;
	});

	it("a Retry-After shorter than the server's window never lets the process send more than the limit in one window of its own requests", async () => {
		// 4 per 1 s: four sent at once fill the window; a 429 with Retry-After 100 ms (a gateway's, or a server whose
		// window slides) on the last. The next four leave only as the first four leave the window, not at 100 ms.
		const windowMs = 1000;
		const limiter = new RateLimiter(4, windowMs);
		const sentAt: number[] = [];
		const releases: Array<(status?: number, retryAfterMs?: number) => void> = [];
		for (let i = 0; i < 4; i++) {
			releases.push(await limiter.acquire());
			sentAt.push(clock());
		}
		for (const release of releases.slice(0, 3)) release(200);
		releases[3](429, 100);
		limiter.pauseUntil(clock() + 100, true);
		for (let i = 0; i < 4; i++) {
			(await limiter.acquire())(200);
			sentAt.push(clock());
		}
		// Every window of the process's own requests holds at most 4 (each counted from when it left until a window after
		// it finished: here at once).
		for (const at of sentAt)
			expect(
				sentAt.filter((other) => other >= at && other < at + windowMs).length,
			).toBeLessThanOrEqual(4);
		expect(sentAt[4] - sentAt[0]).toBeGreaterThanOrEqual(windowMs - 10);
	});
});
