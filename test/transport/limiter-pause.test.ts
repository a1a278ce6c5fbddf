/**
 * A pause after a 429 (RateLimiter.pauseUntil) holds every request of the caller, those that had already reserved a
 * send time included, over real HTTP against the simulator: concurrent executions on one token, paced at 10 requests
 * per 6 s window (one every 600 ms after a burst of 4), meet a 429 with Retry-After: 2.
 */
import { byId, runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;
useSimulator((started) => (sim = started));

const credentials = { requestsPerMinute: 10, rateLimitWindowSeconds: 6 };
const getTask = (uid: string) => ({ resource: 'task', operation: 'get', task: byId(uid) });

describe('a Retry-After pause holds every request of the caller', () => {
	it('after a 429 with Retry-After: 2, no request of the caller reaches the server before those 2 s have passed, requests reserved before it included; the retried request goes first when they have', async () => {
		const tasks = sim.seedTasks(10);
		// Four requests use up the burst: the executions started next reserve send times 600 ms apart.
		const burst = await Promise.all(
			tasks.slice(0, 4).map(({ uid }) => runBacklog(sim, getTask(uid), { credentials })),
		);
		expect(burst.map((run) => run.error)).toEqual(burst.map(() => undefined));
		sim.clearRequests();
		sim.failNext({ status: 429, retryAfter: 2 });
		const runs = await Promise.all(
			tasks.slice(4).map(({ uid }) => runBacklog(sim, getTask(uid), { credentials })),
		);
		expect(runs.map((run) => run.error)).toEqual(runs.map(() => undefined));

		const requests = sent(sim);
		const throttled = requests.find((request) => request.status === 429)!;
		// Reserved 600 ms apart, the next requests were still waiting for their times when the 429 came.
		expect(requests.indexOf(throttled)).toBe(0);
		const after = requests.slice(1);
		expect(after).toHaveLength(6);
		for (const request of after) expect(request.at - throttled.at).toBeGreaterThanOrEqual(2000);
		// The retried request does not queue behind the ones reserved after it (a window, 6 s, at the cut rate).
		const retried = after.find((request) => request.path === throttled.path)!;
		expect(retried.status).toBe(200);
		expect(retried.at - throttled.at).toBeLessThan(3000);
	}, 30_000);
});
