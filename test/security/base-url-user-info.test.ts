/**
 * A Base URL with a user name or password (https://user:pw@host/api/v1) is refused before anything is sent, by the
 * node and by the credential test, with a message that says so and never shows the password. n8n's HTTP layer would
 * otherwise send them as Basic authentication, and every message naming the Base URL would show them.
 */
import { NodeOperationError } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { hasUserInfo, withoutUserInfo } from '../../nodes/shared/transport/credential';
import { resetCallers } from '../../nodes/shared/callers/registry';
import { byId, TOKEN } from '../helpers/backlog';
import { runNode, testCredential } from '../helpers/run-node';
import { json, startServer, type LocalServer } from '../helpers/servers';

const UID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
const PASSWORD = 'pw-7c1e-Secret';
const TASK = { uid: UID, status: 'TODO', fields: { title: 'A task' } };

const servers: LocalServer[] = [];
afterEach(async () => {
	await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function api() {
	const server = await startServer((req, res) =>
		json(res, 200, req.url?.endsWith('/accounts/me') ? { uid: 'me' } : TASK),
	);
	servers.push(server);
	return server;
}

/** The Base URL of `origin` (http://127.0.0.1:port) with `userInfo` written before the host. */
const withUserInfo = (origin: string, userInfo: string) =>
	`${origin.replace('http://', `http://${userInfo}@`)}/api/v1`;

const USER_INFOS: Array<[string, string]> = [
	['a user and a password', `robot:${PASSWORD}`],
	['a password alone', `:${PASSWORD}`],
	['a user alone', `robot-${PASSWORD}`],
	['a password holding an encoded @', `robot:${PASSWORD}%40x`],
	['an @ inside the user info', `robot@corp:${PASSWORD}`],
];

async function getTask(baseUrl: string, continueOnFail = false) {
	resetCallers();
	const result = await runNode({
		nodeType: new TaskBacklog(),
		parameters: { resource: 'task', operation: 'get', task: byId(UID) },
		credentials: {
			type: 'taskBacklogApi',
			data: { baseUrl, token: TOKEN, requestsPerMinute: 10000, rateLimitWindowSeconds: 60 },
		},
		credentialType: new TaskBacklogApi(),
		continueOnFail,
	});
	return { ...result, json: (result.output[0] ?? []).map((item) => item.json) };
}

describe('the node refuses a Base URL with a user name or password, before any request', () => {
	it.each(USER_INFOS)(
		'a Base URL with %s is refused with a message saying so, and nothing is sent',
		async (_, userInfo) => {
			const server = await api();
			const run = await getTask(withUserInfo(server.origin, userInfo));
			expect(server.received).toHaveLength(0);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/Base URL holds a user name or password/);
			expect((run.error as NodeOperationError).description).toMatch(
				/Remove the user name and password/,
			);
			expect(run.error!.message).toContain(`http://***@127.0.0.1:`);
			const everything = JSON.stringify([
				run.error!.message,
				(run.error as NodeOperationError).description,
				run.taskData,
				run.run.data.resultData.error,
			]);
			expect(everything).not.toContain(PASSWORD);
			expect(everything).not.toContain('robot');
		},
	);

	it('with Continue On Fail, the error item says so and never shows the password', async () => {
		const server = await api();
		const run = await getTask(withUserInfo(server.origin, `robot:${PASSWORD}`), true);
		expect(server.received).toHaveLength(0);
		expect(run.json).toHaveLength(1);
		expect(String(run.json[0].error)).toMatch(/Base URL holds a user name or password/);
		expect(JSON.stringify(run.json)).not.toContain(PASSWORD);
	});

	it('a Base URL that is not an http(s) address is not printed back with its password either', async () => {
		const run = await getTask(`ftp://robot:${PASSWORD}@files.example.com/api/v1`);
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/is not an http\(s\) address/);
		expect(run.error!.message).toContain('ftp://***@files.example.com/api/v1');
		expect(JSON.stringify([run.error!.message, run.taskData])).not.toContain(PASSWORD);
	});

	it('the same Base URL without the user info is used', async () => {
		const server = await api();
		const run = await getTask(`${server.origin}/api/v1`);
		expect(run.error).toBeUndefined();
		expect(server.received).toHaveLength(1);
		expect(server.received[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
	});

	it('reads the user info as a URL parser does, and shows it as ***', () => {
		expect(hasUserInfo('https://user:pw@api.example.com/api/v1')).toBe(true);
		expect(hasUserInfo('https://@api.example.com/api/v1')).toBe(true);
		expect(hasUserInfo('https://api.example.com/api/v1/users/@me')).toBe(false);
		expect(hasUserInfo('https://api.example.com?next=a@b')).toBe(false);
		expect(hasUserInfo('https://api.example.com\\@evil.example/api/v1')).toBe(false);
		expect(withoutUserInfo('https://a@b:pw@api.example.com/api/v1')).toBe(
			'https://***@api.example.com/api/v1',
		);
		expect(withoutUserInfo('htps:/user:pw@host')).toBe('***@host');
		expect(withoutUserInfo('https://api.example.com/api/v1')).toBe(
			'https://api.example.com/api/v1',
		);
	});
});

describe('the credential test refuses a Base URL with a user name or password, before any request', () => {
	it.each(USER_INFOS)(
		'a Base URL with %s fails the credential test with a message saying so, and nothing is sent',
		async (_, userInfo) => {
			const server = await api();
			const result = await testCredential(new TaskBacklogApi(), {
				baseUrl: withUserInfo(server.origin, userInfo),
				token: TOKEN,
			});
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(/must not hold a user name or password/);
			expect(result.message).not.toContain(PASSWORD);
			expect(result.message).not.toContain('robot');
			expect(server.received).toHaveLength(0);
		},
	);

	it('the same Base URL without the user info passes the credential test', async () => {
		const server = await api();
		const result = await testCredential(new TaskBacklogApi(), {
			baseUrl: `${server.origin}/api/v1`,
			token: `${TOKEN}\n`,
		});
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(server.received[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
	});
});
