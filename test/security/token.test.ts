/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * The API token goes to the credential's Base URL only, over https (or to this machine), and never comes back out
 * in an error: redirects are not followed, plain http:// to another host is refused unless the credential allows
 * it, and anything the server echoes is redacted. Node runs go through n8n's execution engine over real HTTP.
 */
import { networkInterfaces } from 'node:os';

import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { isSecureEnough } from '../../nodes/shared/transport/credential';
import { PACKAGE_VERSION, USER_AGENT } from '../../nodes/shared/transport/client';
import { byId, runBacklog, sent, TOKEN, useSimulator } from '../helpers/backlog';
import { runNode, testCredential } from '../helpers/run-node';
import type { Simulator } from '../../tools/simulator/simulator';
import { json, startServer, type LocalServer } from '../helpers/servers';

const UID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
const TASK = { uid: UID, status: 'TODO', fields: { title: 'From the other origin' } };

/** Runs Task > Get against any base URL, through n8n's engine. */
async function getTask(baseUrl: string, credentials: IDataObject = {}, continueOnFail = false) {
	const result = await runNode({
		nodeType: new TaskBacklog(),
		parameters: {
			resource: 'task',
			operation: 'get',
			task: byId(UID),
			requestOptions: { retryDelayMs: 5, maxAttempts: 2 },
		},
		credentials: {
			type: 'taskBacklogApi',
			data: {
				baseUrl,
				token: TOKEN,
				requestsPerMinute: 10000,
				rateLimitWindowSeconds: 60,
				...credentials,
			},
		},
		credentialType: new TaskBacklogApi(),
		continueOnFail,
	});
	return { ...result, json: (result.output[0] ?? []).map((item) => item.json) };
}

const servers: LocalServer[] = [];
const serve = async (...args: Parameters<typeof startServer>) => {
	const server = await startServer(...args);
	servers.push(server);
	return server;
};
afterEach(async () => {
	await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A server on another origin (another port) that answers like the API and records what reached it. */
const otherOrigin = () =>
	serve((req, res) => json(res, 200, req.url?.endsWith('/accounts/me') ? { uid: 'me' } : TASK));

/** The machine's own non-loopback IPv4 address: a host that is not loopback yet reachable from this test. */
const publicAddress = Object.values(networkInterfaces())
	.flat()
	.find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
const itWithAddress = publicAddress ? it : it.skip;

describe('redirects: the token never follows one', () => {
	it.each([301, 302, 307, 308])(
		'a %i to another origin is an error naming the Location, and the other origin receives no request and no token',
		async (status) => {
			const target = await otherOrigin();
			const location = `${target.origin}/api/v1/tasks/${UID}`;
			const api = await serve((_req, res) => json(res, status, {}, { location }));

			const run = await getTask(`${api.origin}/api/v1`);

			expect(api.received).toHaveLength(1);
			expect(api.received[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
			expect(target.received).toHaveLength(0);
			expect(run.json).toEqual([]);
			expect(run.error).toBeInstanceOf(NodeApiError);
			expect((run.error as NodeApiError).httpCode).toBe(String(status));
			expect(run.error!.message).toContain(location);
			expect(run.error!.message).toMatch(new RegExp(`redirected \\(${status}\\)`));
			expect((run.error as NodeApiError).description).toMatch(/Base URL/);
		},
	);

	it('a redirect within the same origin is not followed either, and is reported with its Location', async () => {
		const api = await serve((req, res) =>
			req.url?.startsWith('/old/')
				? json(res, 302, {}, { location: `/api/v1/tasks/${UID}` })
				: json(res, 200, TASK),
		);
		const run = await getTask(`${api.origin}/old/api/v1`);
		expect(api.received.map((request) => request.url)).toEqual([`/old/api/v1/tasks/${UID}`]);
		expect(run.error!.message).toContain(`/api/v1/tasks/${UID}`);
	});

	it('the credential test does not follow a redirect: it fails saying so, and the other origin receives nothing', async () => {
		const target = await otherOrigin();
		const api = await serve((_req, res) =>
			json(res, 302, {}, { location: `${target.origin}/api/v1/accounts/me` }),
		);

		const result = await testCredential(new TaskBacklogApi(), {
			baseUrl: `${api.origin}/api/v1`,
			token: TOKEN,
		});

		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/redirect \(302\)/);
		expect(api.received).toHaveLength(1);
		expect(target.received).toHaveLength(0);
	});
});

describe('plain http:// Base URLs', () => {
	it('https:// and loopback hosts are accepted; http:// to any other host only with Allow Insecure HTTP', () => {
		expect(isSecureEnough('https://api.example.com/api/v1', false)).toBe(true);
		expect(isSecureEnough('http://127.0.0.1:8080/api/v1', false)).toBe(true);
		expect(isSecureEnough('http://127.1.2.3/api/v1', false)).toBe(true);
		expect(isSecureEnough('http://localhost:3000/api/v1', false)).toBe(true);
		expect(isSecureEnough('http://[::1]:3000/api/v1', false)).toBe(true);
		expect(isSecureEnough('http://api.example.com/api/v1', false)).toBe(false);
		expect(isSecureEnough('http://localhost.example.com/api/v1', false)).toBe(false);
		expect(isSecureEnough('http://127.0.0.1.example.com/api/v1', false)).toBe(false);
		expect(isSecureEnough('http://10.0.0.5/api/v1', false)).toBe(false);
		expect(isSecureEnough('http://api.example.com/api/v1', true)).toBe(true);
	});

	itWithAddress(
		'an http:// Base URL on a non-loopback host is refused before any request, naming the credential option',
		async () => {
			const api = await serve((_req, res) => json(res, 200, TASK), publicAddress);

			const run = await getTask(`${api.origin}/api/v1`);

			expect(api.received).toHaveLength(0);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/plain http:\/\//);
			expect((run.error as NodeOperationError).description).toMatch(/Allow Insecure HTTP/);
		},
	);

	itWithAddress('with Allow Insecure HTTP turned on, that http:// Base URL is used', async () => {
		const api = await serve((_req, res) => json(res, 200, TASK), publicAddress);
		const run = await getTask(`${api.origin}/api/v1`, { allowInsecureHttp: true });
		expect(run.error).toBeUndefined();
		expect(run.json).toMatchObject([{ uid: UID, title: TASK.fields.title }]);
		expect(api.received).toHaveLength(1);
	});

	itWithAddress(
		'the credential test sends nothing to an http:// Base URL on a non-loopback host, and passes with Allow Insecure HTTP',
		async () => {
			const api = await serve((_req, res) => json(res, 200, { uid: 'me' }), publicAddress);

			const refused = await testCredential(new TaskBacklogApi(), {
				baseUrl: `${api.origin}/api/v1`,
				token: TOKEN,
			});
			expect(refused.status).toBe('Error');
			expect(refused.message).toMatch(/Allow Insecure HTTP/);
			expect(api.received).toHaveLength(0);

			const allowed = await testCredential(new TaskBacklogApi(), {
				baseUrl: `${api.origin}/api/v1`,
				token: TOKEN,
				allowInsecureHttp: true,
			});
			expect(allowed).toEqual({ status: 'OK', message: 'Connection successful!' });
			expect(api.received).toHaveLength(1);
		},
	);
});

describe('the token in what the server sends back', () => {
	let sim: Simulator;
	useSimulator((started) => (sim = started));

	const get = () => ({ resource: 'task', operation: 'get', task: byId(UID) });

	it('a token echoed in an error body is redacted from the message, the description and the recorded error', async () => {
		sim.failNext({
			status: 400,
			body: {
				detail: `token ${TOKEN} may not read ${UID}`,
				echoed: { authorization: `Bearer ${TOKEN}` },
			},
		});
		const run = await runBacklog(sim, get());
		expect(sent(sim)).toHaveLength(1);
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect(run.error!.message).toContain('may not read');
		expect(run.error!.message).toContain('***');
		const everything = JSON.stringify([
			run.error,
			run.error!.message,
			(run.error as NodeApiError).description,
			(run.error as NodeApiError).messages,
		]);
		expect(everything).not.toContain(TOKEN);
	});

	it('with Continue On Fail, the error items carry no echoed token', async () => {
		sim.failNext(
			{ status: 500, body: { message: `upstream said: Authorization: Bearer ${TOKEN}` } },
			{ status: 404, body: { message: `no task for ${TOKEN}` } },
		);
		const run = await runBacklog(
			sim,
			{ ...get(), requestOptions: { maxAttempts: 1 } },
			{ items: [{}, {}], continueOnFail: true },
		);
		expect(run.json).toHaveLength(2);
		expect(run.json.map((item) => item.httpCode)).toEqual(['500', '404']);
		expect(String(run.json[0].error)).toContain('upstream said');
		expect(JSON.stringify(run.json)).not.toContain(TOKEN);
	});

	it('a token echoed by a server answering with plain text is redacted too', async () => {
		const api = await serve((req, res) => {
			res.writeHead(403, { 'content-type': 'text/plain' });
			res.end(`forbidden for ${String(req.headers.authorization)}`);
		});
		const run = await getTask(`${api.origin}/api/v1`);
		expect((run.error as NodeApiError).httpCode).toBe('403');
		expect(run.error!.message).toContain('forbidden for Bearer ***');
		expect(JSON.stringify([run.error, run.error!.message, run.taskData?.error])).not.toContain(
			TOKEN,
		);
	});
});

describe('User-Agent', () => {
	it("the credential test sends the package's User-Agent, the version package.json holds", async () => {
		const api = await serve((_req, res) => json(res, 200, { uid: 'me' }));
		const result = await testCredential(new TaskBacklogApi(), {
			baseUrl: `${api.origin}/api/v1`,
			token: TOKEN,
		});
		expect(result.status).toBe('OK');
		expect(api.received[0].headers['user-agent']).toBe(USER_AGENT);
		expect(USER_AGENT).toBe(`n8n-nodes-task-backlog/${PACKAGE_VERSION}`);
	});
});
