/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
/**
 * A 429's Retry-After pauses every request of the token for that long and no longer (issue 44): the requests under
 * way at the 429 do not extend it (the server has said its window is over by then, so one that finishes later is not
 * counted for a window after it finishes), and the 429 does not cut the rate (a cut to the floor takes windows to grow
 * back). Over real HTTP against the simulator at the service's own 60 requests a minute, and on the limiter alone.
 */
import { now as clock } from '../../nodes/shared/clock';
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
	it('requests under way at a 429 with Retry-After no longer count once the pause is over, and the rate is not cut', async () => {
		// 4 per 4 s: a burst of 4 fills the window; without the Retry-After the next two could leave only when those 4
		// have been out of it for a window (4 s after they finished).
		const limiter = new RateLimiter(4, 4000);
		const started = clock();
		const releases = [];
		for (let i = 0; i < 4; i++) releases.push(await limiter.acquire());
		releases[0](429, 300);
		limiter.pauseUntil(started + 300, true);
		await pause(100);
		// Answered after the 429: they were under way at it.
		for (const release of releases.slice(1)) release(200);
		expect(limiter.allowance).toBe(4);
		const times: number[] = [];
		for (let i = 0; i < 2; i++) {
			(await limiter.acquire())(200);
			times.push(clock() - started);
		}
		expect(times[0]).toBeGreaterThanOrEqual(290);
		// Paced at the full rate (one a second after the burst: about 1 s and 2 s), not after the window (4.1 s).
		expect(times[1]).toBeLessThan(3500);
	});
});
