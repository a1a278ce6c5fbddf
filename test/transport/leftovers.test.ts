/**
 * The hardening leftovers (issue 18, "Measured" 11): settings that must not be silently replaced, Retry-After values
 * that ask for no wait, 504 and name-resolution errors, a comment uid taken by another comment, and the token echoed
 * URL-encoded. Node runs go through n8n's execution engine against the simulator (or a scripted server) over HTTP.
 */
import type { IDataObject, IExecuteFunctions, IHttpRequestOptions, INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { BacklogClient, DEFAULT_RETRY_POLICY } from '../../nodes/shared/transport/client';
import { byId, runBacklog, sent, TOKEN, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';
import { json, startServer, type LocalServer } from '../helpers/servers';

let sim: Simulator;
let uid: string;

useSimulator((started) => (sim = started));
beforeEach(() => {
	[{ uid }] = sim.seedTasks(1);
});

const servers: LocalServer[] = [];
const serve = async (...args: Parameters<typeof startServer>) => {
	const server = await startServer(...args);
	servers.push(server);
	return server;
};
afterEach(async () => {
	await Promise.all(servers.splice(0).map((server) => server.stop()));
});

const getTask = (requestOptions: IDataObject = {}) => ({
	resource: 'task',
	operation: 'get',
	task: byId(uid),
	requestOptions,
});

/** Milliseconds between consecutive requests the simulator logged. */
const gaps = () => {
	const times = sent(sim).map((request) => request.at);
	return times.slice(1).map((at, index) => at - times[index]);
};

describe('limiter and retry settings are checked when the node runs', () => {
	it.each([0, -5, 'sixty'])(
		'Requests per Minute %p is an error naming the field, before any request',
		async (value) => {
			const run = await runBacklog(sim, getTask(), { credentials: { requestsPerMinute: value } });
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toContain('Requests per Minute');
			expect(run.error!.message).toContain(JSON.stringify(value));
			expect(sent(sim)).toHaveLength(0);
		},
	);

	it.each([0, -1])(
		'Rate Limit Window %p is an error naming the field, before any request',
		async (value) => {
			const run = await runBacklog(sim, getTask(), {
				credentials: { rateLimitWindowSeconds: value },
			});
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toContain('Rate Limit Window');
			expect(sent(sim)).toHaveLength(0);
		},
	);

	it.each([
		['={{ "five" }}', '"five"'],
		['={{ 0 }}', '0'],
		['={{ -2 }}', '-2'],
		['={{ 2.5 }}', '2.5'],
	])(
		'Max Attempts from the expression %s is an error naming the option and the item, before any request',
		async (expression, shown) => {
			const run = await runBacklog(sim, getTask({ maxAttempts: expression }));
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toContain('Max Attempts');
			expect(run.error!.message).toContain(shown);
			expect(run.error!.message).toMatch(/^Item 0/);
			expect(sent(sim)).toHaveLength(0);
		},
	);

	it('Retry Delay below 0 is an error naming the option', async () => {
		const run = await runBacklog(sim, getTask({ retryDelayMs: '={{ -100 }}' }));
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toContain('Retry Delay');
		expect(sent(sim)).toHaveLength(0);
	});

	it('Max Attempts given as the text of a whole number is that number of attempts', async () => {
		sim.failNext({ status: 503 }, { status: 503 }, { status: 503 });
		const run = await runBacklog(sim, getTask({ maxAttempts: '={{ "2" }}' }));
		expect((run.error as NodeApiError).httpCode).toBe('503');
		expect(sent(sim)).toHaveLength(2);
	});
});

describe('a Retry-After that asks for no wait keeps the exponential backoff', () => {
	const retryDelayMs = 300;

	it.each([0, -5])('Retry-After: %i on a 503 keeps the exponential backoff', async (retryAfter) => {
		sim.failNext({ status: 503, retryAfter }, { status: 503, retryAfter });
		const run = await runBacklog(sim, getTask({ retryDelayMs }));
		expect(run.error).toBeUndefined();
		expect(sent(sim).map((request) => request.status)).toEqual([503, 503, 200]);
		const [first, second] = gaps();
		// 300 ms then 600 ms, each ±10% jitter.
		expect(first).toBeGreaterThanOrEqual(retryDelayMs * 0.9 - 5);
		expect(second).toBeGreaterThanOrEqual(retryDelayMs * 2 * 0.9 - 5);
	});

	it('Retry-After: 0 on a 429 keeps the backoff too', async () => {
		sim.failNext({ status: 429, retryAfter: 0 });
		const run = await runBacklog(sim, getTask({ retryDelayMs }));
		expect(run.error).toBeUndefined();
		expect(gaps()[0]).toBeGreaterThanOrEqual(retryDelayMs * 0.9 - 5);
	});

	it('an empty Retry-After keeps the exponential backoff', async () => {
		const times: number[] = [];
		const api = await serve((_req, res) => {
			times.push(Date.now());
			if (times.length === 1) json(res, 503, { message: 'busy' }, { 'retry-after': '' });
			else json(res, 200, { uid, status: 'TODO', fields: {} });
		});
		const run = await runBacklog(sim, getTask({ retryDelayMs }), {
			credentials: { baseUrl: `${api.origin}/api/v1` },
		});
		expect(run.error).toBeUndefined();
		expect(times).toHaveLength(2);
		expect(times[1] - times[0]).toBeGreaterThanOrEqual(retryDelayMs * 0.9 - 5);
	});
});

describe('504 and name-resolution errors', () => {
	it('a 504 Gateway Timeout is retried for a read, as a 502 or a 503 is', async () => {
		sim.failNext({ status: 504 });
		const run = await runBacklog(sim, getTask());
		expect(run.error).toBeUndefined();
		expect(sent(sim).map((request) => request.status)).toEqual([504, 200]);
	});

	it('a 504 on every attempt fails naming 504 Gateway Timeout after Max Attempts', async () => {
		sim.failNext({ status: 504 }, { status: 504 }, { status: 504 });
		const run = await runBacklog(sim, getTask({ maxAttempts: 2 }));
		expect(sent(sim)).toHaveLength(2);
		expect((run.error as NodeApiError).httpCode).toBe('504');
		expect(run.error!.message).toContain('504 Gateway Timeout');
	});

	it('a Base URL whose host name does not exist (ENOTFOUND) fails at once, without retries, saying to check the Base URL', async () => {
		const started = Date.now();
		const run = await runBacklog(sim, getTask({ retryDelayMs: 2000, maxAttempts: 3 }), {
			credentials: { baseUrl: 'https://no-such-host.invalid/api/v1' },
		});
		// One retry alone would have waited 1.8 s or more.
		expect(Date.now() - started).toBeLessThan(1500);
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect(run.error!.message).toContain('the host name "no-such-host.invalid" was not found');
		expect((run.error as NodeApiError).description).toMatch(
			/^Check the Base URL .* \(ENOTFOUND\), so the request was not retried/,
		);
	});
});

/**
 * No route to a host cannot be produced on 127.0.0.1: the context's request helper fails the first attempt as Node
 * does (EHOSTUNREACH, or n8n 1.x's sentence for it), then sends the retry to the simulator over HTTP.
 */
describe('no route to the host (EHOSTUNREACH) is retried as a network error, like ECONNREFUSED', () => {
	const node: INode = {
		id: 'n',
		name: 'Task Backlog',
		type: 'taskBacklog',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};

	function contextFailingFirst(failure: Error) {
		let calls = 0;
		const ctx = {
			getNode: () => node,
			getCredentials: async () => ({
				baseUrl: sim.url,
				token: TOKEN,
				requestsPerMinute: 10000,
				rateLimitWindowSeconds: 60,
			}),
			helpers: {
				httpRequestWithAuthentication: async (_type: string, options: IHttpRequestOptions) => {
					calls++;
					if (calls === 1) throw failure;
					const response = await fetch(String(options.url), {
						method: options.method,
						headers: {
							...(options.headers as Record<string, string>),
							authorization: `Bearer ${TOKEN}`,
						},
					});
					return {
						statusCode: response.status,
						headers: Object.fromEntries(response.headers),
						body: await response.json(),
					};
				},
			},
		};
		return { ctx: ctx as unknown as IExecuteFunctions, calls: () => calls };
	}

	it.each([
		[
			'the code',
			Object.assign(new Error('connect EHOSTUNREACH 10.9.9.9:443'), { code: 'EHOSTUNREACH' }),
		],
		["n8n 1.x's sentence", new Error('The host is unreachable, perhaps the server is offline')],
	])('EHOSTUNREACH recognised by %s: the read is retried and succeeds', async (_how, failure) => {
		const { ctx, calls } = contextFailingFirst(failure);
		const client = new BacklogClient(ctx, { ...DEFAULT_RETRY_POLICY, baseDelayMs: 5 });
		const task = await client.request<IDataObject>({ method: 'GET', path: `/tasks/${uid}` });
		expect(task.uid).toBe(uid);
		expect(calls()).toBe(2);
		expect(sent(sim)).toHaveLength(1);
	});
});

describe('the token echoed URL-encoded', () => {
	const token = 'tok+en/with=special chars&more';
	const forms = [
		token,
		encodeURIComponent(token),
		encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
		new URLSearchParams({ t: token }).toString().slice(2),
		encodeURIComponent(encodeURIComponent(token)),
	];

	it('a token echoed URL-encoded in an error body is redacted in every form', async () => {
		const api = await serve((_req, res) =>
			json(res, 400, {
				message: `bad credentials: ${forms.slice(1).join(' | ')}`,
				echoed: { query: `access_token=${forms[1]}` },
			}),
		);
		const run = await runBacklog(sim, getTask(), {
			credentials: { baseUrl: `${api.origin}/api/v1`, token },
		});
		expect(api.received[0].headers.authorization).toBe(`Bearer ${token}`);
		expect((run.error as NodeApiError).httpCode).toBe('400');
		expect(run.error!.message).toContain('bad credentials: *** | ***');
		const everything = JSON.stringify([
			run.error,
			run.error!.message,
			(run.error as NodeApiError).description,
		]);
		for (const form of forms) expect(everything).not.toContain(form);
	});

	it('a token echoed URL-encoded in a redirect Location is redacted', async () => {
		const api = await serve((_req, res) =>
			json(res, 302, {}, { location: `https://login.example.com/?token=${forms[1]}` }),
		);
		const run = await runBacklog(sim, getTask(), {
			credentials: { baseUrl: `${api.origin}/api/v1`, token },
		});
		expect(run.error!.message).toContain('https://login.example.com/?token=***');
		const everything = JSON.stringify([
			run.error,
			run.error!.message,
			(run.error as NodeApiError).description,
		]);
		for (const form of forms) expect(everything).not.toContain(form);
	});
});
