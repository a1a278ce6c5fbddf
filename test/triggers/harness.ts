/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * Runs the triggers' poll() and webhook() the way n8n does, in-process.
 *
 * The shared runner (test/helpers/run-node.ts) drives execute() through WorkflowExecute; a poll node there only
 * runs in manual mode, and webhooks are not run at all. n8n itself calls `nodeType.poll.call(new PollContext(...))`
 * (n8n-core TriggersAndPollers) and `nodeType.webhook.call(new WebhookContext(...))` (packages/cli WebhookService),
 * so that is what this file does, with n8n-core's real contexts: real getNodeParameter (defaults applied by
 * Workflow), real static data, real httpRequestWithAuthentication over a socket. The credential store is the
 * shared runner's in-memory TestCredentialsHelper. For webhooks, a node:http server stands in for n8n's webhook
 * route: it reads the raw body and parses JSON as n8n's body parser does, gives the node the request, and answers
 * the way packages/cli webhook-helpers does for responseMode onReceived.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	INodeTypes,
	IWebhookData,
	IWebhookResponseData,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { Expression, NodeHelpers, UnexpectedError, Workflow } from 'n8n-workflow';
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import { HookContext, PollContext, WebhookContext } from 'n8n-core';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklogWebhookApi } from '../../credentials/TaskBacklogWebhookApi.credentials';
import { TaskBacklogPollTrigger } from '../../nodes/TaskBacklogPollTrigger/TaskBacklogPollTrigger.node';
import type { Simulator, Task } from '../../tools/simulator/simulator';
import { clockPastStamps } from '../helpers/clock';
import { TestCredentialsHelper } from '../helpers/credentials';

export interface TriggerSetup {
	nodeType: INodeType;
	parameters: INodeParameters;
	/** Credential data for `taskBacklogApi` (the only credential the triggers use). */
	credentials?: ICredentialDataDecryptedObject;
	/** Node static data; updated in place, as n8n keeps it on the active workflow between polls. */
	staticData?: IDataObject;
	/** The node's typeVersion as saved in the workflow. Default 1. */
	typeVersion?: number;
	/** Credential data for `taskBacklogWebhookApi` (the webhook trigger's secret), assigned to the node when given. */
	webhookCredentials?: ICredentialDataDecryptedObject;
}

class Types implements INodeTypes {
	constructor(
		private readonly name: string,
		private readonly type: INodeType,
	) {}

	getByName(name: string) {
		if (name !== this.name) throw new UnexpectedError(`Unknown node type ${name}`);
		return this.type;
	}

	getByNameAndVersion(name: string, version?: number) {
		return NodeHelpers.getVersionedNodeType(this.getByName(name), version);
	}

	getKnownTypes() {
		return {};
	}
}

function credentialsHelper(
	data: ICredentialDataDecryptedObject | undefined,
	webhookData?: ICredentialDataDecryptedObject,
) {
	const type: ICredentialType = new TaskBacklogApi();
	const webhookType: ICredentialType = new TaskBacklogWebhookApi();
	const types = new Map([type, webhookType].map((known) => [known.name, known]));
	// The shared helper's registry class is not exported; this object has the two methods it calls.
	const registry = { get: (name: string) => types.get(name), parentTypes: () => [] };
	return new TestCredentialsHelper(
		registry as unknown as ConstructorParameters<typeof TestCredentialsHelper>[0],
		{
			...(data && { [type.name]: data }),
			...(webhookData && { [webhookType.name]: webhookData }),
		},
	);
}

function build(setup: TriggerSetup) {
	if ((Expression as unknown as { expressionEngine: string }).expressionEngine !== 'legacy') {
		Expression.setExpressionEngine('legacy');
	}
	const typeName = `n8n-nodes-task-backlog.${setup.nodeType.description.name}`;
	const name = setup.nodeType.description.defaults.name ?? setup.nodeType.description.displayName;
	const node: INode = {
		id: 'trigger-node',
		name,
		webhookId: 'b5a1c7e2-3f5d-4a8e-9c1b-2d7e6f0a9b31',
		type: typeName,
		typeVersion: setup.typeVersion ?? 1,
		position: [0, 0],
		parameters: structuredClone(setup.parameters),
		...((setup.credentials || setup.webhookCredentials) && {
			credentials: {
				...(setup.credentials && { taskBacklogApi: { id: 'cred-1', name: 'Task Backlog' } }),
				...(setup.webhookCredentials && {
					taskBacklogWebhookApi: { id: 'cred-2', name: 'Task Backlog Webhook' },
				}),
			},
		}),
	};
	const staticData: IDataObject = {};
	if (setup.staticData) staticData[`node:${name}`] = setup.staticData;
	const workflow = new Workflow({
		id: 'trigger-workflow',
		name: 'Trigger test',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes: new Types(typeName, setup.nodeType),
		staticData,
		settings: { executionOrder: 'v1' },
	});
	const additionalData = {
		credentialsHelper: credentialsHelper(setup.credentials, setup.webhookCredentials),
		executionId: 'trigger-execution',
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://localhost:5678/rest',
		instanceBaseUrl: 'http://localhost:5678/',
		webhookBaseUrl: 'http://localhost:5678/webhook',
		webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://localhost:5678/webhook-test',
		formWaitingBaseUrl: 'http://localhost:5678/form-waiting',
		variables: {},
		userId: 'trigger-user',
		workflowId: 'trigger-workflow',
	} as unknown as IWorkflowExecuteAdditionalData;
	// Workflow applied the description's defaults to node.parameters; read them from the workflow's copy.
	return { workflow, node: workflow.getNode(name) as INode, additionalData };
}

export interface Poller {
	/** One poll, as n8n's poll job runs it; returns what the node returned (null = no execution). */
	poll(): Promise<INodeExecutionData[][] | null>;
	/** The node's static data as n8n would store it after the last poll. */
	staticData(): IDataObject;
}

/** A poll trigger kept "active": its static data lives on between polls, as on an active workflow. */
export function activePoller(
	setup: TriggerSetup,
	options: {
		mode?: WorkflowExecuteMode;
		/** n8n 2.x's poll budget; its own default is 5 minutes. */ budgetMs?: number;
		/** As n8n 1.x: the context has no getPollBudgetMs at all. */
		withoutBudget?: boolean;
		/**
		 * As n8n 2.x's durable scheduler (without durable cursors): every poll starts from the static data as last
		 * saved, which is saved after the first poll (the activation's) and then only after a poll that emits.
		 */
		savedOnlyWhenEmitting?: boolean;
		/** Awaited before the first poll (the activation), e.g. clockPastStamps. */
		beforeFirstPoll?: () => Promise<void>;
	} = {},
): Poller {
	const { workflow, node, additionalData } = build(setup);
	const mode = options.mode ?? 'trigger';
	const key = `node:${node.name}`;
	let saved: string | undefined;
	let polled = false;
	return {
		async poll() {
			if (!polled) {
				polled = true;
				await options.beforeFirstPoll?.();
			}
			if (options.savedOnlyWhenEmitting && saved !== undefined)
				(workflow.staticData as IDataObject)[key] = JSON.parse(saved) as IDataObject;
			const context = new PollContext(
				workflow,
				node,
				additionalData,
				mode,
				mode === 'manual' ? 'manual' : 'activate',
				undefined,
				undefined,
				undefined,
				undefined,
				undefined,
				options.budgetMs === undefined ? undefined : () => options.budgetMs!,
			);
			if (options.withoutBudget) delete (context as { getPollBudgetMs?: unknown }).getPollBudgetMs;
			const output = (await setup.nodeType.poll!.call(context)) ?? null;
			if (saved === undefined || output !== null)
				saved = JSON.stringify(workflow.getStaticData('node', node));
			return output;
		},
		staticData() {
			return JSON.parse(JSON.stringify(workflow.getStaticData('node', node))) as IDataObject;
		},
	};
}

/**
 * The service's API as another system uses it (the simulator at `baseUrl`, with `token`): a request that answers other
 * than 200 throws with its status and body.
 */
export function serviceApi(baseUrl: () => string, token: string) {
	return async function api<T = Task>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${baseUrl()}${path}`, {
			method,
			headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		if (response.status !== 200)
			throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
		return (await response.json()) as T;
	};
}

/**
 * The Poll Trigger, active, polling the simulator `sim` with `token` (no rate limit to speak of); activated after
 * the clock has passed the simulator's stamps (clockPastStamps).
 */
export function pollTrigger(sim: Simulator, token: string, parameters: INodeParameters): Poller {
	return activePoller(
		{
			nodeType: new TaskBacklogPollTrigger(),
			parameters,
			credentials: { baseUrl: sim.url, token, requestsPerMinute: 100000 },
		},
		{ beforeFirstPoll: () => clockPastStamps(sim) },
	);
}

/** The context n8n gives webhookMethods (checkExists, create, delete) when it activates the workflow. */
export function hookContext(setup: TriggerSetup, mode: WorkflowExecuteMode = 'trigger') {
	const { workflow, node, additionalData } = build(setup);
	return {
		context: new HookContext(workflow, node, additionalData, mode, 'activate'),
		staticData: () => workflow.getStaticData('node', node),
	};
}

export interface WebhookCall {
	status: number;
	body: unknown;
	/** Whether the node asked n8n to start an execution, and with what. */
	workflowData?: INodeExecutionData[][];
	error?: unknown;
}

export interface WebhookReceiver {
	/** The URL to send events to (the node's webhook path). */
	url: string;
	calls: WebhookCall[];
	/** Executions started, each the node's output items. */
	executions(): INodeExecutionData[][];
	stop(): Promise<void>;
}

/** Express's two response helpers the node uses on a rejected request; n8n hands nodes an express Response. */
function expressLike(res: ServerResponse) {
	const response = res as ServerResponse & {
		status(code: number): typeof response;
		json(body: unknown): typeof response;
	};
	response.status = (code: number) => {
		res.statusCode = code;
		return response;
	};
	response.json = (body: unknown) => {
		res.setHeader('content-type', 'application/json; charset=utf-8');
		res.end(JSON.stringify(body));
		return response;
	};
	return response;
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks);
}

/** Serves the webhook trigger on a local port the way n8n's webhook route does. */
export async function startWebhookReceiver(
	setup: TriggerSetup,
	mode: WorkflowExecuteMode = 'webhook',
): Promise<WebhookReceiver> {
	const { workflow, node, additionalData } = build(setup);
	const description = setup.nodeType.description.webhooks![0];
	const calls: WebhookCall[] = [];

	const server = createServer((req, res) => {
		void (async () => {
			const raw = await readRaw(req);
			const request = req as IncomingMessage & {
				rawBody: Buffer;
				body: unknown;
				params: IDataObject;
				query: IDataObject;
			};
			// n8n's body parser: keep the bytes, parse JSON bodies (content type without parameters).
			request.rawBody = raw;
			const contentType = String(req.headers['content-type'] ?? '')
				.split(';')[0]
				.trim();
			request.body =
				contentType === 'application/json' && raw.length > 0
					? JSON.parse(raw.toString('utf8'))
					: {};
			request.params = {};
			request.query = {};
			const response = expressLike(res);
			const webhookData = {
				httpMethod: description.httpMethod,
				node: node.name,
				path: String(description.path),
				webhookDescription: description,
				workflowId: workflow.id,
				workflowExecuteAdditionalData: additionalData,
			} as unknown as IWebhookData;
			const context = new WebhookContext(
				workflow,
				node,
				{
					...additionalData,
					httpRequest: request,
					httpResponse: response,
				} as unknown as IWorkflowExecuteAdditionalData,
				mode,
				webhookData,
				[],
				null,
			);
			let result: IWebhookResponseData;
			try {
				result = await setup.nodeType.webhook!.call(context);
			} catch (error) {
				// n8n answers 500 when webhook() throws.
				calls.push({ status: 500, body: undefined, error });
				response.status(500).json({ code: 0, message: 'Error in workflow' });
				return;
			}
			if (result.noWebhookResponse) {
				// The node answered itself.
				calls.push({ status: res.statusCode, body: undefined, workflowData: result.workflowData });
				if (!res.writableEnded) res.end();
				return;
			}
			// responseMode onReceived: the node's webhookResponse, else n8n's placeholder; 200 either way.
			const body = result.webhookResponse ?? {
				message: result.workflowData ? 'Workflow was started' : 'Webhook call received',
			};
			calls.push({ status: 200, body, workflowData: result.workflowData });
			response.status(200).json(body);
		})();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/webhook/trigger-workflow/${String(description.path)}`,
		calls,
		executions: () =>
			calls.filter((call) => call.workflowData).map((call) => call.workflowData![0]),
		stop: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * Webhook receivers of the Task Backlog Trigger for a test file: each stopped after its test, with n8n's warn and info
 * logs (a rejected delivery is logged) silenced meanwhile. Call once at the file's top level.
 */
export function useWebhookReceivers(
	nodeType: () => INodeType,
): (setup: Omit<TriggerSetup, 'nodeType'> & { nodeType?: INodeType }) => Promise<WebhookReceiver> {
	const logger = Container.get(Logger);
	let spies: jest.SpyInstance[] = [];
	const receivers: WebhookReceiver[] = [];
	beforeEach(() => {
		spies = (['warn', 'info'] as const).map((level) =>
			jest.spyOn(logger, level).mockImplementation(() => {}),
		);
	});
	afterEach(async () => {
		spies.forEach((spy) => spy.mockRestore());
		await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
	});
	return async (setup) => {
		const receiver = await startWebhookReceiver({
			...setup,
			nodeType: setup.nodeType ?? nodeType(),
		});
		receivers.push(receiver);
		return receiver;
	};
}

/** A POST of raw JSON text, as the service sends its events: the status and the parsed answer. */
export async function postRaw(url: string, raw: string, headers: Record<string, string> = {}) {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body: raw,
	});
	const text = await response.text();
	return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Now in whole seconds, as the service's x-backlog-timestamp. */
export const nowSeconds = () => String(Math.floor(Date.now() / 1000));

/** The service's signature headers: a sha256= hex HMAC over `timestamp.body`, or over the body alone. */
export function signedHeaders(
	secret: string,
	raw: string,
	options: { timestamp?: string; coversTimestamp?: boolean } = {},
) {
	const timestamp = options.timestamp ?? nowSeconds();
	const over = options.coversTimestamp === false ? raw : `${timestamp}.${raw}`;
	return {
		'x-backlog-timestamp': timestamp,
		'x-backlog-signature': `sha256=${createHmac('sha256', secret).update(over).digest('hex')}`,
	};
}
