/**
 * Retry-After is honoured up to the retry policy's longest wait (15 s; on a 429, a whole rate-limit window when that
 * is longer: test/transport/adaptive-limiter.test.ts); a longer one fails at once with the time to retry, instead of holding the execution (and every execution sharing the token) for as long as asked.
 */
import { NodeApiError } from 'n8n-workflow';

import { DEFAULT_RETRY_POLICY } from '../../nodes/shared/transport/client';
import { byId, runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';
import { json, startServer } from '../helpers/servers';

let sim: Simulator;
let uid: string;

useSimulator((started) => (sim = started));
beforeEach(() => {
	[{ uid }] = sim.seedTasks(1);
});

const getTask = () => ({ resource: 'task', operation: 'get', task: byId(uid) });

/** The ISO time named in an error message. */
const namedTime = (message: string) => Date.parse(/retry after (\S+?Z)/.exec(message)?.[1] ?? '');

describe('Retry-After beyond the longest retry wait', () => {
	it('a 429 with Retry-After: 3600 fails at once, naming the time to retry, without a second request', async () => {
		sim.failNext({ status: 429, retryAfter: 3600 });
		const started = Date.now();
		const run = await runBacklog(sim, getTask());
		const elapsed = Date.now() - started;

		expect(elapsed).toBeLessThan(DEFAULT_RETRY_POLICY.maxDelayMs);
		expect(sent(sim)).toHaveLength(1);
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect((run.error as NodeApiError).httpCode).toBe('429');
		const retryAt = namedTime(run.error!.message);
		expect(retryAt - started).toBeGreaterThanOrEqual(3599_000);
		expect(retryAt - started).toBeLessThanOrEqual(3601_000 + elapsed);
		expect((run.error as NodeApiError).description).toMatch(/Run the workflow again after/);
	});

	it('a 503 with a long Retry-After on a read fails at once as well', async () => {
		sim.failNext({ status: 503, retryAfter: 120 });
		const started = Date.now();
		const run = await runBacklog(sim, getTask());
		expect(Date.now() - started).toBeLessThan(5000);
		expect(sent(sim)).toHaveLength(1);
		expect((run.error as NodeApiError).httpCode).toBe('503');
		expect(run.error!.message).toMatch(/retry after .* \(in 120 s\)/);
	});

	it('a Retry-After given as an HTTP date an hour away fails at once, naming that time', async () => {
		const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3600_000);
		const api = await startServer((_req, res) =>
			json(res, 429, { message: 'slow down' }, { 'retry-after': at.toUTCString() }),
		);
		try {
			const started = Date.now();
			const run = await runBacklog(sim, getTask(), {
				credentials: { baseUrl: `${api.origin}/api/v1` },
			});
			expect(Date.now() - started).toBeLessThan(5000);
			expect(api.received).toHaveLength(1);
			expect(Math.abs(namedTime(run.error!.message) - at.getTime())).toBeLessThan(2000);
			expect(run.error!.message).toContain('slow down');
		} finally {
			await api.stop();
		}
	});

	it('the long Retry-After does not pause the next execution sharing the token', async () => {
		sim.failNext({ status: 429, retryAfter: 3600 });
		await runBacklog(sim, getTask());
		const started = Date.now();
		const next = await runBacklog(sim, getTask());
		expect(next.error).toBeUndefined();
		expect(Date.now() - started).toBeLessThan(5000);
	});

	it('a Retry-After within the longest wait is still waited for, then the request is retried', async () => {
		sim.failNext({ status: 429, retryAfter: 1 });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		const [first, second] = sent(sim);
		expect(second.at - first.at).toBeGreaterThanOrEqual(950);
	});
});
