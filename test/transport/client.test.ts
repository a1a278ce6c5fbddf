/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals -- test code, never ships */
import { NodeApiError } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { BURST, RateLimiter, UNDER_WAY_MS } from '../../nodes/shared/transport/rateLimiter';
import { USER_AGENT } from '../../nodes/shared/transport/client';
import { TOKEN, byId, runBacklog, sent, writesSent, useSimulator } from '../helpers/backlog';
import { testCredential } from '../helpers/run-node';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;
let uid: string;

useSimulator((started) => (sim = started));
beforeEach(() => {
	[{ uid }] = sim.seedTasks(1);
});

const getTask = () => ({ resource: 'task', operation: 'get', task: byId(uid) });

describe('retries (spec section 7)', () => {
	it('a 503 twice then 200 succeeds with 3 requests', async () => {
		sim.failNext({ status: 503 }, { status: 503 });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		expect(run.json[0].uid).toBe(uid);
		expect(sent(sim).map((request) => request.status)).toEqual([503, 503, 200]);
	});

	it.each([429, 500, 502])('a %i is retried', async (status) => {
		sim.failNext({ status });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		expect(sent(sim)).toHaveLength(2);
	});

	it('a connection reset is retried', async () => {
		sim.failNext({ status: 'reset' });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		expect(sent(sim)).toHaveLength(2);
	});

	it('gives up after Max Attempts with the last status and the server message', async () => {
		sim.failNext(
			...Array.from({ length: 3 }, () => ({ status: 500, body: { detail: 'database is away' } })),
		);
		const run = await runBacklog(sim, { ...getTask(), requestOptions: { maxAttempts: 3 } });
		expect(sent(sim)).toHaveLength(3);
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect((run.error as NodeApiError).httpCode).toBe('500');
		expect(run.error!.message).toMatch(/500 Internal Server Error: database is away/);
		expect((run.error as NodeApiError).description).toMatch(/3 time\(s\) in a row/);
	});

	it('the server message is found in a detail object too ({detail: {message}})', async () => {
		sim.failNext({ status: 400, body: { detail: { message: 'title must not be blank' } } });
		const run = await runBacklog(sim, getTask());
		expect((run.error as NodeApiError).httpCode).toBe('400');
		expect(run.error!.message).toMatch(/400 Bad Request: title must not be blank/);
	});

	it('a 401 is not retried by our code, and says to check the token', async () => {
		const run = await runBacklog(sim, getTask(), { credentials: { token: 'revoked-token-123' } });
		expect(sent(sim)).toHaveLength(1);
		expect((run.error as NodeApiError).httpCode).toBe('401');
		expect((run.error as NodeApiError).description).toMatch(/check the token/);
	});

	it('after a 401 nothing more is sent in that execution', async () => {
		const items = [{}, {}, {}];
		const run = await runBacklog(sim, getTask(), {
			items,
			continueOnFail: true,
			credentials: { token: 'revoked-token-123' },
		});
		expect(sent(sim)).toHaveLength(1);
		expect(run.json.map((json) => json.httpCode)).toEqual(['401', '401', '401']);
	});

	it('a 422 is not retried and carries the field the server names', async () => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'upsert',
			identifyBy: 'uid',
			uid,
			title: 'x',
			additionalFields: { parent_uid: uid },
			requestOptions: { batching: false },
		});
		expect(writesSent(sim)).toHaveLength(1);
		expect((run.error as NodeApiError).httpCode).toBe('422');
		expect(run.error!.message).toMatch(/parent_uid/);
	});

	it('a 404 is not retried and says what was not found', async () => {
		const run = await runBacklog(sim, {
			...getTask(),
			task: byId('3c90c3cc-0d44-4b50-8888-8dd25736052a'),
		});
		expect(sent(sim)).toHaveLength(1);
		expect((run.error as NodeApiError).httpCode).toBe('404');
		expect((run.error as NodeApiError).description).toMatch(/Check the uid/);
	});

	it('Retry-After is honoured', async () => {
		sim.failNext({ status: 429, retryAfter: 1 });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		const [first, second] = sent(sim);
		expect(second.at - first.at).toBeGreaterThanOrEqual(950);
	});
});

describe('client-side rate limit', () => {
	it('60 requests in a burst at 30 per window are spread, with no 429', async () => {
		sim.configure({ requestsPerWindow: 30, windowMs: 500 });
		const items = Array.from({ length: 60 }, () => ({}));
		const run = await runBacklog(sim, getTask(), {
			items,
			credentials: { requestsPerMinute: 30, rateLimitWindowSeconds: 0.5 },
		});
		expect(run.error).toBeUndefined();
		const requests = sent(sim);
		expect(requests).toHaveLength(60);
		expect(requests.filter((request) => request.status === 429)).toHaveLength(0);
		expect(requests[30].at - requests[0].at).toBeGreaterThanOrEqual(480);
	});

	it(`past a burst of ${BURST}, the requests of a window are spread over it (one spacing apart), not sent at its start`, async () => {
		sim.configure({ requestsPerWindow: 20, windowMs: 1000 });
		const items = Array.from({ length: 20 }, () => ({}));
		const run = await runBacklog(sim, getTask(), {
			items,
			credentials: { requestsPerMinute: 20, rateLimitWindowSeconds: 1 },
		});
		expect(run.error).toBeUndefined();
		const requests = sent(sim);
		expect(requests.filter((request) => request.status === 429)).toHaveLength(0);
		// 50 ms apart (1 s / 20) after the first BURST: the 20th leaves near the window's end. A token bucket of BURST at
		// 20 per window (50 ms apart): any k + 1 requests in a row span at least k + 1 - BURST spacings, less what the
		// network and n8n add to one request's way more than to another's (they are timed on arrival: 31 ms once, in a
		// loaded clean-clone run). Sent at the window's start, they would span next to nothing.
		const spacing = 1000 / 20;
		const slack = 100;
		const at = requests.map((request) => request.at);
		for (let i = 0; i + 8 < at.length; i++)
			expect(at[i + 8] - at[i]).toBeGreaterThanOrEqual((9 - BURST) * spacing - slack);
		expect(at[19] - at[0]).toBeGreaterThanOrEqual((20 - BURST) * spacing - slack);
	});

	it('two executions at once with one credential share the budget', async () => {
		sim.configure({ requestsPerWindow: 20, windowMs: 500 });
		const items = Array.from({ length: 30 }, () => ({}));
		const credentials = { requestsPerMinute: 20, rateLimitWindowSeconds: 0.5 };
		const runs = await Promise.all([
			runBacklog(sim, getTask(), { items, credentials }),
			runBacklog(sim, getTask(), { items, credentials }),
		]);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expect(sent(sim)).toHaveLength(60);
		expect(sent(sim).filter((request) => request.status === 429)).toHaveLength(0);
	});

	it('requests that reach the server late, each by another amount (0 to 150 ms), never fill its window past the limit', async () => {
		// Paced at exactly the server's window (no margin on it): the server counts each request at some moment between
		// its sending and its answer, and the limiter counts it until its answer.
		// Four executions at once, so that requests are under way together and overtake each other on the way.
		sim.configure({ requestsPerWindow: 20, windowMs: 500, faults: { arrivalDelayMs: [0, 150] } });
		const items = Array.from({ length: 20 }, () => ({}));
		const credentials = { requestsPerMinute: 20, rateLimitWindowSeconds: 0.5 };
		const runs = await Promise.all(
			[1, 2, 3, 4].map(() => runBacklog(sim, getTask(), { items, credentials })),
		);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined, undefined, undefined]);
		expect(sent(sim)).toHaveLength(80);
		expect(sent(sim).filter((request) => request.status === 429)).toHaveLength(0);
	}, 20_000);
});

describe('rate limiter', () => {
	it('a request counts in the window until it has finished, since the server may see it that late', async () => {
		const limiter = new RateLimiter(2, 200);
		const started = Date.now();
		const releases = [await limiter.acquire(), await limiter.acquire()];
		await new Promise((resolve) => setTimeout(resolve, 150));
		const finished = Date.now();
		releases.forEach((release) => release());
		await limiter.acquire();
		// The third request waits a window after the first two finished, not after they started.
		expect(Date.now() - finished).toBeGreaterThanOrEqual(200);
		expect(Date.now() - started).toBeGreaterThanOrEqual(350);
	});

	it('requests still under way when their window has passed keep their places: the next one over the limit waits for an answer, and a window after it', async () => {
		const limiter = new RateLimiter(2, 100);
		const slow = [await limiter.acquire(), await limiter.acquire()];
		let thirdAt = 0;
		const third = limiter.acquire().then((release) => {
			thirdAt = Date.now();
			release();
		});
		// Three windows later neither has been answered: the server may still count them at any moment.
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(thirdAt).toBe(0);
		const answered = Date.now();
		slow[1]();
		await third;
		expect(thirdAt - answered).toBeGreaterThanOrEqual(100);
		slow[0]();
	});

	it('a request never answered holds its place for UNDER_WAY_MS at most (then a window): it cannot stop every execution for good', async () => {
		jest.useFakeTimers();
		try {
			const limiter = new RateLimiter(1, 1000);
			await limiter.acquire(); // never answered
			let sent = false;
			const next = limiter.acquire().then(() => (sent = true));
			await jest.advanceTimersByTimeAsync(UNDER_WAY_MS - 10);
			expect(sent).toBe(false);
			await jest.advanceTimersByTimeAsync(1000 + 20);
			expect(sent).toBe(true);
			await next;
		} finally {
			jest.useRealTimers();
		}
	});

	it('a wait for an answer leaves no timer behind once the answer came (n8n cannot cancel one of UNDER_WAY_MS)', async () => {
		jest.useFakeTimers();
		try {
			const limiter = new RateLimiter(1, 1000);
			const first = await limiter.acquire();
			let sent = false;
			const next = limiter.acquire().then((release) => {
				sent = true;
				release(200);
			});
			await jest.advanceTimersByTimeAsync(50);
			first(200); // the answer: the second request may leave a window after it
			await jest.advanceTimersByTimeAsync(1000 + 20);
			expect(sent).toBe(true);
			await next;
			await jest.advanceTimersByTimeAsync(1000);
			expect(jest.getTimerCount()).toBe(0);
		} finally {
			jest.useRealTimers();
		}
	});
});

describe('every request', () => {
	it('carries the bearer token, a User-Agent naming the package, and the optional service headers', async () => {
		await runBacklog(sim, getTask(), {
			credentials: {
				account: 'acme',
				versioning: '2024-01',
				actingUserUid: '3c90c3cc-0d44-4b50-8888-8dd25736052a',
			},
		});
		const [request] = sent(sim);
		expect(request.headers).toMatchObject({
			authorization: `Bearer ${TOKEN}`,
			'user-agent': USER_AGENT,
			'service-account': 'acme',
			'service-versioning': '2024-01',
			'service-user': '3c90c3cc-0d44-4b50-8888-8dd25736052a',
		});
	});

	it('a trailing slash on the base URL is tolerated', async () => {
		const run = await runBacklog(sim, getTask(), { credentials: { baseUrl: `${sim.url}/` } });
		expect(run.error).toBeUndefined();
		expect(sent(sim)[0].path).toBe(`/tasks/${uid}`);
	});

	it('the token appears in no output and no error', async () => {
		const ok = await runBacklog(sim, getTask());
		const bad = await runBacklog(sim, getTask(), { credentials: { token: 'wrong-token-abc' } });
		sim.failNext({ status: 500 }, { status: 500 });
		const failed = await runBacklog(sim, { ...getTask(), requestOptions: { maxAttempts: 2 } });
		const text = JSON.stringify([
			ok.json,
			bad.error,
			failed.error,
			bad.error?.message,
			failed.error?.message,
			(bad.error as NodeApiError)?.description,
		]);
		expect(text).not.toContain(TOKEN);
		expect(text).not.toContain('wrong-token-abc');
	});
});

describe('credential test (GET /accounts/me)', () => {
	it('passes with a valid token', async () => {
		const result = await testCredential(new TaskBacklogApi(), { baseUrl: sim.url, token: TOKEN });
		expect(result.status).toBe('OK');
		expect(sent(sim, 'GET', '/accounts/me')).toHaveLength(1);
	});

	it('fails with an invalid token and tells the user to check it', async () => {
		const result = await testCredential(new TaskBacklogApi(), {
			baseUrl: `${sim.url}/`,
			token: 'nope-token',
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/Check the token/);
	});
});
