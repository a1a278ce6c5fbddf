/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/node-connection-type-literal, @n8n/community-nodes/node-usable-as-tool, @n8n/community-nodes/require-node-api-error -- test code, never ships */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IAuthenticateGeneric,
	ICredentialTestRequest,
	ICredentialType,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypeDescription,
	JsonObject,
} from 'n8n-workflow';
import { Expression, NodeApiError, NodeOperationError } from 'n8n-workflow';

import { runNode, testCredential } from './run-node';

// ---- throwaway credential + node ------------------------------------------------------------

class DemoApi implements ICredentialType {
	name = 'demoApi';

	displayName = 'Demo API';

	properties: INodeProperties[] = [
		{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: '' },
		{
			displayName: 'Token',
			name: 'token',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{ displayName: 'Account', name: 'account', type: 'string', default: 'default-account' },
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '={{"Bearer " + $credentials.token}}',
				'X-Account': '={{$credentials.account}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/me',
			method: 'GET',
		},
		rules: [{ type: 'responseCode', properties: { value: 401, message: 'Token rejected (401)' } }],
	};
}

class Demo implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Demo',
		name: 'demo',
		group: ['transform'],
		version: [1, 2],
		description: 'Throwaway node for the harness test',
		defaults: { name: 'Demo' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'demoApi', required: true }],
		properties: [
			{ displayName: 'Field', name: 'field', type: 'string', default: 'default-field' },
			{ displayName: 'Path', name: 'path', type: 'string', default: '/echo' },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const { baseUrl } = await this.getCredentials<{ baseUrl: string }>('demoApi');
		const out: INodeExecutionData[] = [];
		for (let i = 0; i < items.length; i++) {
			try {
				const field = this.getNodeParameter('field', i) as string;
				const path = this.getNodeParameter('path', i) as string;
				if (field === 'throw-operation-error') {
					throw new NodeOperationError(this.getNode(), 'Field is not allowed', {
						itemIndex: i,
						description: 'pick another field',
					});
				}
				let response: Record<string, unknown>;
				try {
					response = (await this.helpers.httpRequestWithAuthentication.call(this, 'demoApi', {
						method: 'GET',
						url: baseUrl + path,
						qs: { field, n: items[i].json.n as number | undefined },
						json: true,
					})) as Record<string, unknown>;
				} catch (error) {
					// httpRequestWithAuthentication already throws a NodeApiError, and in n8n-workflow 2.x
					// `new NodeApiError(node, aNodeApiError, options)` returns that same error and ignores
					// the options, so the item index has to be set on the error itself.
					if (error instanceof NodeApiError) {
						error.context.itemIndex = i;
						throw error;
					}
					throw new NodeApiError(this.getNode(), error as JsonObject, { itemIndex: i });
				}
				const staticData = this.getWorkflowStaticData('node');
				staticData.calls = ((staticData.calls as number) ?? 0) + 1;
				out.push({
					json: { ...response, field, version: this.getNode().typeVersion },
					pairedItem: { item: i },
				});
			} catch (error) {
				if (this.continueOnFail()) {
					out.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
					continue;
				}
				throw error;
			}
		}
		return [out];
	}
}

// ---- echo server ------------------------------------------------------------------------------

let server: Server;
let baseUrl: string;
const seen: Array<{ url: string; authorization?: string; account?: string }> = [];

beforeAll(async () => {
	server = createServer((req: IncomingMessage, res: ServerResponse) => {
		seen.push({
			url: req.url ?? '',
			authorization: req.headers.authorization,
			account: req.headers['x-account'] as string | undefined,
		});
		const url = new URL(req.url ?? '/', 'http://x');
		if (req.headers.authorization !== 'Bearer secret-token') {
			res.writeHead(401, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ error: 'unauthorized' }));
			return;
		}
		if (url.pathname === '/echo' || url.pathname === '/me') {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(
				JSON.stringify({
					authorization: req.headers.authorization,
					account: req.headers['x-account'],
					query: Object.fromEntries(url.searchParams),
				}),
			);
			return;
		}
		res.writeHead(422, { 'content-type': 'application/json' });
		res.end(JSON.stringify({ message: 'validation failed', path: url.pathname }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	await new Promise<void>((resolve, reject) =>
		server.close((err) => (err ? reject(err) : resolve())),
	);
});

beforeEach(() => {
	seen.length = 0;
});

const credentials = () => ({ type: 'demoApi', data: { baseUrl, token: 'secret-token' } });

// ---- tests ------------------------------------------------------------------------------------

describe('runNode', () => {
	it('runs execute() through WorkflowExecute with real HTTP and the credential authenticate applied', async () => {
		const staticData = { calls: 10 };
		const result = await runNode({
			nodeType: new Demo(),
			parameters: { field: 'abc' },
			items: [{ n: 1 }, { json: { n: 2 } }],
			credentials: credentials(),
			credentialType: new DemoApi(),
			staticData,
		});

		expect(result.error).toBeUndefined();
		expect(seen).toHaveLength(2);
		expect(seen[0].authorization).toBe('Bearer secret-token');
		expect(seen[0].account).toBe('default-account'); // credential default applied
		expect(result.output).toHaveLength(1);
		expect(result.output[0]).toEqual([
			{
				json: {
					authorization: 'Bearer secret-token',
					account: 'default-account',
					query: { field: 'abc', n: '1' },
					field: 'abc',
					version: 2,
				},
				pairedItem: { item: 0 },
			},
			{
				json: expect.objectContaining({ query: { field: 'abc', n: '2' } }),
				pairedItem: { item: 1 },
			},
		]);
		expect(result.taskData?.executionStatus).toBe('success');
		expect(result.staticData).toEqual({ calls: 12 });
	});

	it('applies parameter defaults, typeVersion, and resolves expressions in parameters', async () => {
		const result = await runNode({
			nodeType: new Demo(),
			typeVersion: 1,
			parameters: { field: '={{ "item-" + $json.n }}' },
			items: [{ n: 7 }],
			credentials: credentials(),
			credentialType: new DemoApi(),
		});
		expect(result.error).toBeUndefined();
		expect(result.output[0][0].json).toMatchObject({ field: 'item-7', version: 1 });
		expect(seen[0].url).toBe('/echo?field=item-7&n=7');
	});

	it('returns the original NodeApiError with its fields when the node fails', async () => {
		const result = await runNode({
			nodeType: new Demo(),
			parameters: { field: 'x', path: '/invalid' },
			items: [{ n: 1 }, { n: 2 }],
			credentials: credentials(),
			credentialType: new DemoApi(),
		});
		expect(result.output).toEqual([]);
		expect(result.error).toBeInstanceOf(NodeApiError);
		const error = result.error as NodeApiError;
		expect(error.httpCode).toBe('422');
		// n8n's own wording for the status code; the response body's `message` becomes the description.
		expect(error.message).toBe('Your request is invalid or could not be processed by the service');
		expect(error.description).toBe('validation failed');
		expect(error.context.itemIndex).toBe(0);
		expect(error.context.data).toEqual({ message: 'validation failed', path: '/invalid' });
		expect(error.node.name).toBe('Demo');
		expect(result.taskData?.executionStatus).toBe('error');
	});

	it('returns a NodeApiError for a 401 when the token is wrong (authenticate really used)', async () => {
		const result = await runNode({
			nodeType: new Demo(),
			parameters: {},
			credentials: { type: 'demoApi', data: { baseUrl, token: 'wrong' } },
			credentialType: new DemoApi(),
		});
		expect(seen[0].authorization).toBe('Bearer wrong');
		expect(result.error).toBeInstanceOf(NodeApiError);
		expect((result.error as NodeApiError).httpCode).toBe('401');
	});

	it('returns a NodeOperationError with its itemIndex', async () => {
		const result = await runNode({
			nodeType: new Demo(),
			parameters: { field: 'throw-operation-error' },
			credentials: credentials(),
			credentialType: new DemoApi(),
		});
		expect(result.error).toBeInstanceOf(NodeOperationError);
		expect(result.error?.message).toBe('Field is not allowed');
		expect((result.error as NodeOperationError).description).toBe('pick another field');
		expect((result.error as NodeOperationError).context.itemIndex).toBe(0);
	});

	it('with continueOnFail a failing item becomes an error item, the others succeed', async () => {
		const result = await runNode({
			nodeType: new Demo(),
			parameters: { field: '={{ $json.n === 2 ? "throw-operation-error" : "ok" }}' },
			items: [{ n: 1 }, { n: 2 }, { n: 3 }],
			credentials: credentials(),
			credentialType: new DemoApi(),
			continueOnFail: true,
		});
		expect(result.error).toBeUndefined();
		expect(result.output[0]).toHaveLength(3);
		expect(result.output[0][0].json.field).toBe('ok');
		expect(result.output[0][1]).toEqual({
			json: { error: 'Field is not allowed' },
			pairedItem: { item: 1 },
		});
		expect(result.output[0][2].pairedItem).toEqual({ item: 2 });
	});

	it('continueOnFail on a node that does not catch: n8n passes the input on and still records the error', async () => {
		const thrower = new Demo();
		thrower.execute = async function (this: IExecuteFunctions) {
			throw new NodeOperationError(this.getNode(), 'boom', { itemIndex: 0 });
		};
		const result = await runNode({
			nodeType: thrower,
			parameters: {},
			items: [{ n: 1 }],
			continueOnFail: true,
		});
		expect(result.error).toBeInstanceOf(NodeOperationError);
		expect(result.taskData?.executionStatus).toBe('error');
		expect(result.output).toEqual([[{ json: { n: 1 }, pairedItem: { item: 0 } }]]);
	});

	it('uses the legacy expression engine (no isolated-vm)', () => {
		expect(Expression.getActiveImplementation()).toBe('legacy');
	});

	it('reports a missing credential the way n8n does', async () => {
		const result = await runNode({ nodeType: new Demo(), parameters: {} });
		expect(result.error).toBeInstanceOf(NodeOperationError);
		expect(result.error?.message).toBe('Node does not have any credentials set');
	});
});

describe('testCredential', () => {
	it('performs test.request over HTTP with authenticate applied', async () => {
		await expect(
			testCredential(new DemoApi(), { baseUrl: baseUrl + '//', token: 'secret-token' }),
		).resolves.toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
		expect(seen[0]).toMatchObject({ url: '/me', authorization: 'Bearer secret-token' });
	});

	it('maps a 401 through the responseCode rule', async () => {
		await expect(testCredential(new DemoApi(), { baseUrl, token: 'nope' })).resolves.toEqual({
			status: 'Error',
			message: 'Token rejected (401)',
		});
	});

	it('reports a connection error', async () => {
		const result = await testCredential(new DemoApi(), {
			baseUrl: 'http://127.0.0.1:1',
			token: 'x',
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/ECONNREFUSED/);
	});
});
