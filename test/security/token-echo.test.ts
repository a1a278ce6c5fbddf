/**
 * The token never comes back out, whatever form the server echoes it in and however it was saved: the redaction is
 * built from the token as the Authorization header carries it (without the spaces and line breaks around the saved
 * text), and covers the node's output items as well as its errors (message, description, the response body they
 * keep, Continue On Fail error items). Node runs go through n8n's execution engine over real HTTP, against servers
 * that echo the Authorization header they received, and against the simulator.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { redactor, tokenAsSent } from '../../nodes/shared/transport/credential';
import { resetCallers } from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { byId, runBacklog, TOKEN, useSimulator } from '../helpers/backlog';
import { runNode } from '../helpers/run-node';
import { pollTrigger, serviceApi } from '../triggers/harness';
import { startServer, type LocalServer } from '../helpers/servers';

const UID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';

/** A token with every character the encodings treat apart: / + " \ = a space and a Latin-1 letter. */
const SENT = 'tk/9F+q"z\\\u00e9 w=Lm0pX';

/** The ways a token can be saved around the same sent token. */
const SAVED: Array<[string, string]> = [
	['as is', SENT],
	['with a trailing space', `${SENT} `],
	['with a trailing newline', `${SENT}\n`],
	['with spaces, a tab and a line break around it', `  \t${SENT}\r\n`],
];

/** What an echoing server puts in its answer, from the token it received. */
function echoesOf(token: string): string[] {
	return [
		`Bearer ${token}`,
		encodeURIComponent(token),
		encodeURIComponent(encodeURIComponent(token)),
		new URLSearchParams({ access_token: token }).toString(),
		JSON.stringify({ authorization: `Bearer ${token}` }),
		JSON.stringify(JSON.stringify({ token })),
		Buffer.from(token).toString('base64'),
		Buffer.from(`Bearer ${token}`).toString('base64'),
		Buffer.from(`api:${token}`).toString('base64url'),
	];
}

/** Every string in a value, keys included, and its JSON text. */
function textsOf(value: unknown): string[] {
	const texts: string[] = [];
	const walk = (entry: unknown) => {
		if (typeof entry === 'string') texts.push(entry);
		else if (Array.isArray(entry)) entry.forEach(walk);
		else if (entry && typeof entry === 'object')
			for (const [key, inner] of Object.entries(entry)) {
				texts.push(key);
				walk(inner);
			}
	};
	walk(value);
	texts.push(JSON.stringify(value) ?? '');
	return texts;
}

/** Texts decoded from each run of base64 characters, at each of its first 4 offsets, in both alphabets. */
function decodedRuns(text: string): string[] {
	const decoded: string[] = [];
	for (const [run] of text.matchAll(/[A-Za-z0-9+/_-]{8,}/g))
		for (let offset = 0; offset < 4; offset++)
			decoded.push(
				Buffer.from(run.slice(offset).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString(
					'utf8',
				),
			);
	return decoded;
}

/** The forms of `token` found in `value`: as is, URL-encoded, JSON-escaped, or recoverable from base64. */
function exposed(value: unknown, token: string): string[] {
	const middle = token.slice(3, -3);
	const forms = [
		token,
		middle,
		encodeURIComponent(middle),
		JSON.stringify(middle).slice(1, -1),
		...echoesOf(token),
	];
	const found = new Set<string>();
	for (const text of textsOf(value)) {
		for (const form of forms) if (text.includes(form)) found.add(form);
		if (decodedRuns(text).some((decoded) => decoded.includes(middle)))
			found.add(`base64 of ${middle}`);
	}
	return [...found];
}

const servers: LocalServer[] = [];
afterEach(async () => {
	await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A server that answers every request with `status`, echoing the token it received in every form (echoesOf). */
async function echoingServer(status: number) {
	const server = await startServer((req, res) => {
		const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
		const echoes = echoesOf(token);
		const body =
			status < 300
				? {
						uid: UID,
						status: 'TODO',
						fields: { title: echoes[0], echoes, [token]: 'a key that is the token' },
						legacy_data: { request: echoes.join(' ') },
					}
				: { message: `rejected: ${echoes.join(' | ')}`, detail: echoes, [token]: true };
		res.writeHead(status, { 'content-type': 'application/json' });
		res.end(JSON.stringify(body));
	});
	servers.push(server);
	return server;
}

/** Task > Get (not simplified: every field of the answer) against `baseUrl`, one attempt. */
async function getTask(baseUrl: string, token: string, continueOnFail: boolean) {
	resetCallers();
	const result = await runNode({
		nodeType: new TaskBacklog(),
		parameters: {
			resource: 'task',
			operation: 'get',
			task: byId(UID),
			simplify: false,
			requestOptions: { maxAttempts: 1 },
		},
		credentials: {
			type: 'taskBacklogApi',
			data: { baseUrl, token, requestsPerMinute: 10000, rateLimitWindowSeconds: 60 },
		},
		credentialType: new TaskBacklogApi(),
		continueOnFail,
	});
	return { ...result, json: (result.output[0] ?? []).map((item) => item.json) };
}

describe('the token as the HTTP layer sends it', () => {
	it.each(SAVED)(
		'a token saved %s is sent without the spaces and line breaks around it',
		async (_, saved) => {
			const server = await echoingServer(200);
			await getTask(`${server.origin}/api/v1`, saved, false);
			expect(server.received.map((request) => request.headers.authorization)).toEqual([
				`Bearer ${SENT}`,
			]);
			expect(tokenAsSent(saved)).toBe(SENT);
		},
	);

	it('every echoed form of the sent token is redacted, whichever way the token was saved', () => {
		for (const [, saved] of SAVED) {
			const redact = redactor(saved);
			for (const echo of echoesOf(SENT)) expect(exposed(redact(echo), SENT)).toEqual([]);
		}
	});
});

describe('a server echoing the token in a 200: the output items never carry it', () => {
	it.each(SAVED)(
		'a token saved %s never appears in the output of a successful Get',
		async (_, saved) => {
			const server = await echoingServer(200);
			const run = await getTask(`${server.origin}/api/v1`, saved, false);
			expect(run.error).toBeUndefined();
			expect(run.json).toHaveLength(1);
			expect(run.json[0]).toMatchObject({
				uid: UID,
				status: 'TODO',
				fields: { title: 'Bearer ***' },
			});
			expect(exposed([run.json, run.taskData], SENT)).toEqual([]);
		},
	);
});

describe('a server echoing the token in a 4xx or 5xx: no error carries it', () => {
	const cases = SAVED.flatMap(([how, saved]) =>
		[404, 422, 500].map((status) => [how, status, saved] as const),
	);

	it.each(cases)(
		'a token saved %s never appears in a Continue On Fail error item of a %i',
		async (_, status, saved) => {
			const server = await echoingServer(status);
			const run = await getTask(`${server.origin}/api/v1`, saved, true);
			expect(run.json).toHaveLength(1);
			expect(run.json[0].httpCode).toBe(String(status));
			expect(String(run.json[0].error)).toContain('rejected: Bearer ***');
			expect(exposed([run.json, run.taskData], SENT)).toEqual([]);
		},
	);

	it.each(cases)(
		'a token saved %s never appears in the error of a %i: message, description, response body, recorded error',
		async (_, status, saved) => {
			const server = await echoingServer(status);
			const run = await getTask(`${server.origin}/api/v1`, saved, false);
			expect(run.error).toBeInstanceOf(NodeApiError);
			const error = run.error as NodeApiError;
			expect(error.httpCode).toBe(String(status));
			expect(error.message).toContain('rejected: Bearer ***');
			expect(
				exposed(
					[
						error.message,
						error.description,
						error.messages,
						error.errorResponse,
						(error as unknown as IDataObject).context,
						run.taskData,
						run.run.data.resultData.error,
					],
					SENT,
				),
			).toEqual([]);
		},
	);
});

describe('against the simulator, with the token saved with a trailing newline', () => {
	let sim: Simulator;
	useSimulator((started) => (sim = started));
	const saved = `${TOKEN}\n`;

	it('a token saved with a trailing newline never appears in a Continue On Fail error item', async () => {
		sim.failNext(
			{ status: 500, body: { message: `upstream said: Authorization: Bearer ${TOKEN}` } },
			{ status: 404, body: { message: `no task for ${encodeURIComponent(TOKEN)}`, token: TOKEN } },
		);
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'get', task: byId(UID), requestOptions: { maxAttempts: 1 } },
			{ items: [{}, {}], continueOnFail: true, credentials: { token: saved } },
		);
		expect(run.json.map((item) => item.httpCode)).toEqual(['500', '404']);
		expect(String(run.json[0].error)).toContain('upstream said: Authorization: Bearer ***');
		expect(JSON.stringify(run.json)).not.toContain(TOKEN);
	});

	it('a token saved with a trailing newline never appears in the output of Get and Get Many, when a task holds it', async () => {
		const title = `copied from a log: Authorization: Bearer ${TOKEN}`;
		const [task] = sim.seedTasks(1, () => ({
			uid: UID,
			fields: { title, note: encodeURIComponent(TOKEN) },
		}));
		expect(task.uid).toBe(UID);
		const got = await runBacklog(
			sim,
			{ resource: 'task', operation: 'get', task: byId(UID), simplify: false },
			{ credentials: { token: saved } },
		);
		const listed = await runBacklog(
			sim,
			{ resource: 'task', operation: 'getAll', returnAll: true, simplify: false },
			{ credentials: { token: saved } },
		);
		for (const run of [got, listed]) {
			expect(run.error).toBeUndefined();
			expect(JSON.stringify(run.json)).toContain('Authorization: Bearer ***');
			expect(JSON.stringify(run.json)).not.toContain(TOKEN);
		}
	});
	it('a token saved with a trailing newline never appears in the items of the Poll Trigger, when a new task holds it', async () => {
		const poller = pollTrigger(sim, saved, { event: 'newTask' });
		expect(await poller.poll()).toBeNull();
		const api = serviceApi(() => sim.url, TOKEN);
		await api('POST', '/tasks', {
			fields: { title: `from a log: Authorization: Bearer ${TOKEN}` },
		});
		const emitted = await poller.poll();
		expect(emitted?.[0]).toHaveLength(1);
		expect(JSON.stringify(emitted)).toContain('Authorization: Bearer ***');
		expect(JSON.stringify(emitted)).not.toContain(TOKEN);
	});
});
