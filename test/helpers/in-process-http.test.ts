/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// The seeded simulation's transport without sockets (in-process-http.ts) must give the node exactly what n8n's request
// helper gives it over HTTP, or the simulation would judge another client. Each case is sent twice through n8n's own
// request client (OutboundHttp, what httpRequestWithAuthentication calls) with the node's options, over HTTP to the
// simulator and then in process, and what comes back is compared: the full response (status, message, parsed body,
// headers), or the error and the NodeApiError n8n wraps it in, with the network code the node's transport reads from
// it; and the simulator's log of the request.
import { Container } from '@n8n/di';
import { OutboundHttp } from '@n8n/backend-network';
import type { IDataObject, IHttpRequestOptions, INode } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { networkErrorCode } from '../../nodes/shared/transport/errors';
import type { Simulator } from '../../tools/simulator/simulator';
import { startSimulator } from '../../tools/simulator/simulator';
import { installInProcessHttp } from './in-process-http';

/** What NodeApiError reads of a node. */
const node = { name: 'Task Backlog', type: 'n8n-nodes-task-backlog.taskBacklog' } as INode;
const UID = '00000000-0000-4000-8000-000000000001';

interface Case {
	name: string;
	prepare?: (sim: Simulator) => void;
	method: IHttpRequestOptions['method'];
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	token?: string;
	/** The node always ignores status errors; false shows axios's own error for a status. */
	ignoreHttpStatusErrors?: boolean;
	timeout?: number;
	/** Abort the request this long after it was sent (n8n cancelling the execution). */
	abortAfterMs?: number;
}

const CASES: Case[] = [
	{
		name: 'a listing with repeated query values',
		method: 'GET',
		path: '/tasks',
		qs: { limit: 2, expand: ['comments', 'children'] },
	},
	{ name: 'a write', method: 'PUT', path: `/tasks/${UID}`, body: { fields: { title: 'a' } } },
	{
		name: 'a 500 quoting nothing',
		prepare: (sim) => sim.failNext({ status: 500 }),
		method: 'PUT',
		path: `/tasks/${UID}`,
		body: { fields: { title: 'b' } },
	},
	{
		name: 'a 429 with Retry-After',
		prepare: (sim) => sim.failNext({ status: 429, retryAfter: 2 }),
		method: 'GET',
		path: '/tasks',
	},
	{
		name: 'a cut connection',
		prepare: (sim) => sim.failNext({ status: 'reset' }),
		method: 'GET',
		path: '/tasks',
	},
	{
		name: 'a 422 naming a field',
		method: 'PUT',
		path: '/tasks/not-a-uuid',
		body: { fields: { title: 'c' } },
	},
	{ name: 'a 401', method: 'GET', path: '/tasks', token: 'wrong' },
	{
		name: 'a 404 the request does not ignore',
		method: 'GET',
		path: `/tasks/${UID.replace(/1$/, '9')}`,
		ignoreHttpStatusErrors: false,
	},
	{
		name: 'a timeout',
		prepare: (sim) => sim.configure({ faults: { latencyMs: [300, 300] } }),
		method: 'GET',
		path: '/tasks',
		timeout: 50,
	},
	{
		name: 'an abort while the server takes its time',
		prepare: (sim) => sim.configure({ faults: { latencyMs: [300, 300] } }),
		method: 'GET',
		path: '/tasks',
		abortAfterMs: 50,
	},
];

let sim: Simulator;
beforeAll(async () => {
	sim = await startSimulator({ tokens: ['token'], requestsPerWindow: 1000 });
});
afterAll(async () => await sim?.stop());

async function send(c: Case): Promise<unknown> {
	sim.configure({ faults: undefined });
	c.prepare?.(sim);
	const abort = new AbortController();
	const options: IHttpRequestOptions = {
		method: c.method,
		url: `${sim.url}${c.path}`,
		qs: c.qs,
		body: c.body,
		headers: {
			'User-Agent': 'test',
			Accept: 'application/json',
			Authorization: `Bearer ${c.token ?? 'token'}`,
		},
		json: true,
		arrayFormat: 'repeat',
		timeout: c.timeout ?? 30_000,
		returnFullResponse: true,
		ignoreHttpStatusErrors: c.ignoreHttpStatusErrors ?? true,
		disableFollowRedirect: true,
		sendCredentialsOnCrossOriginRedirect: false,
		abortSignal: abort.signal,
	};
	if (c.abortAfterMs !== undefined) setTimeout(() => abort.abort(), c.abortAfterMs);
	try {
		const response = (await Container.get(OutboundHttp).requests().request(options)) as {
			statusCode: number;
			statusMessage: string;
			body: unknown;
			headers: Record<string, unknown>;
		};
		const headers = Object.fromEntries(
			['content-type', 'content-length', 'retry-after', 'www-authenticate'].map((name) => [
				name,
				response.headers[name],
			]),
		);
		return {
			statusCode: response.statusCode,
			statusMessage: response.statusMessage,
			body: response.body,
			headers,
		};
	} catch (caught) {
		const error = caught as Error & {
			code?: string;
			cause?: { code?: string };
			response?: { status?: number; data?: unknown };
			isAxiosError?: boolean;
		};
		const wrapped = new NodeApiError(node, error as never);
		return {
			error: {
				name: error.name,
				message: error.message,
				code: error.code,
				cause: error.cause?.code,
				status: error.response?.status,
				data: error.response?.data,
				axios: error.isAxiosError,
			},
			node: {
				message: wrapped.message,
				description: wrapped.description,
				httpCode: wrapped.httpCode,
				network: networkErrorCode(wrapped),
			},
		};
	}
}

/** The request as the simulator logged it, without its time. */
const logged = () => {
	const entry: Partial<Simulator['requests'][number]> = {
		...sim.requests[sim.requests.length - 1],
	};
	delete entry.at;
	return entry;
};

describe('The in-process transport answers the node as n8n does over HTTP', () => {
	it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		const overHttp = await send(c);
		const httpLog = logged();
		const transport = installInProcessHttp((url) =>
			url.port === String(sim.port) ? (request) => sim.handle(request) : undefined,
		);
		let inProcess: unknown;
		try {
			inProcess = await send(c);
		} finally {
			transport.uninstall();
		}
		expect(inProcess).toEqual(overHttp);
		expect(logged()).toEqual(httpLog);
	});

	it('refuses a URL no in-process server takes, as a refused connection, without a socket', async () => {
		const transport = installInProcessHttp(() => undefined);
		try {
			const answer = (await send({ name: 'elsewhere', method: 'GET', path: '/tasks' })) as {
				node: { network: string };
			};
			expect(answer.node.network).toBe('ECONNREFUSED');
		} finally {
			transport.uninstall();
		}
	});
});
