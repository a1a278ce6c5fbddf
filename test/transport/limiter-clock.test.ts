/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
/**
 * The rate limiter measures its intervals (pacing, windows, pauses) on a monotonic clock (now(), nodes/shared/callers/registry.ts): a
 * step of the system clock (NTP, a VM resumed, a user setting the time) neither holds requests for the length of the
 * step nor lets a window's requests go at once. The steps are made by moving Date.now(); timers do not follow it.
 */
import { RateLimiter } from '../../nodes/shared/transport/rateLimiter';
import { byId, runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

const TEN_MINUTES = 600_000;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const wallClock = Date.now.bind(Date);

/** Date.now() reads `offsetMs` away from the real time from now on (until restoreAllMocks). */
const stepClock = (offsetMs: number) =>
	jest.spyOn(Date, 'now').mockImplementation(() => wallClock() + offsetMs);

/** Whether the next request through `limiter` leaves within `ms`. */
async function leavesWithin(limiter: RateLimiter, ms: number): Promise<boolean> {
	const sent = limiter.acquire().then((release) => {
		release(200);
		return true;
	});
	return await Promise.race([sent, pause(ms).then(() => false)]);
}

afterEach(() => jest.restoreAllMocks());

describe('the limiter counts time on a monotonic clock', () => {
	it('a step back of the system clock by 10 minutes does not hold requests', async () => {
		const limiter = new RateLimiter(60, 60_000);
		(await limiter.acquire())(200);
		stepClock(-TEN_MINUTES);
		// one spacing (1 s) at the most; in fact at once, within the burst
		expect(await leavesWithin(limiter, 1500)).toBe(true);
	});

	it('a step forward of the system clock by 10 minutes does not let a full window send again', async () => {
		// A window of 3 s: the request the test stops waiting for leaves soon after, and leaves no timer behind.
		const limiter = new RateLimiter(2, 3_000);
		(await limiter.acquire())(200);
		(await limiter.acquire())(200);
		stepClock(TEN_MINUTES);
		expect(await leavesWithin(limiter, 1000)).toBe(false);
	});

	describe('over HTTP', () => {
		let sim: Simulator;
		useSimulator((started) => (sim = started));

		it('a step back of the system clock during a Retry-After pause does not lengthen the pause', async () => {
			const [{ uid }] = sim.seedTasks(1);
			sim.failNext({ status: 429, retryAfter: 1 });
			const started = performance.now();
			const run = runBacklog(sim, { resource: 'task', operation: 'get', task: byId(uid) });
			// the step comes while the client waits out its second, right after the 429 (however long the run took to
			// send its request: seconds on a loaded machine)
			while (
				!sent(sim).some((request) => request.status === 429) &&
				performance.now() - started < 15_000
			)
				await pause(10);
			expect(sent(sim).map((request) => request.status)).toEqual([429]);
			stepClock(-TEN_MINUTES);
			const done = await Promise.race([run.then(() => true), pause(4000).then(() => false)]);
			expect(done).toBe(true);
			expect((await run).error).toBeUndefined();
			expect(performance.now() - started).toBeGreaterThanOrEqual(950);
		}, 30_000);
	});
});
