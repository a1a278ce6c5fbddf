/* eslint-disable @typescript-eslint/no-explicit-any -- tool code, never ships */
// Workflow and credential JSON for running the Task Backlog node (and, for comparison, n8n's HTTP Request node) in a
// real n8n, plus readers for what `n8n execute --rawOutput` prints. Shared by the harness's queue mode, the benchmark
// and the e2e tests.
// Node type versions used here exist in both n8n 1.123 and 2.41.
import { randomUUID } from 'crypto';

export const PACKAGE = 'n8n-nodes-task-backlog';
export const TASK_BACKLOG_TYPE = `${PACKAGE}.taskBacklog`;
export const CREDENTIAL_TYPE = 'taskBacklogApi';

export type Json = Record<string, any>;

export interface CredentialRef {
	id: string;
	name: string;
}

export interface BacklogCredentialData {
	baseUrl: string;
	token: string;
	requestsPerMinute?: number;
	rateLimitWindowSeconds?: number;
}

/** One credential for `n8n import:credentials` (plain data; n8n encrypts it on import). */
export function backlogCredential(ref: CredentialRef, data: BacklogCredentialData) {
	return { ...ref, type: CREDENTIAL_TYPE, data: { ...data } };
}

/** A Header Auth credential (what a user of the HTTP Request node keeps the bearer token in). */
export function headerAuthCredential(ref: CredentialRef, token: string) {
	return {
		...ref,
		type: 'httpHeaderAuth',
		data: { name: 'Authorization', value: `Bearer ${token}` },
	};
}

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Json;
	credentials?: Record<string, CredentialRef>;
	[setting: string]: unknown;
}

export interface Workflow {
	id: string;
	name: string;
	active: false;
	settings: Json;
	pinData: Json;
	nodes: WorkflowNode[];
	connections: Json;
}

let column = 0;
function node(
	name: string,
	type: string,
	typeVersion: number,
	parameters: Json,
	extra: Partial<WorkflowNode> = {},
): WorkflowNode {
	column += 1;
	return {
		id: randomUUID(),
		name,
		type,
		typeVersion,
		position: [column * 220, 0],
		parameters,
		...extra,
	};
}

export const manualTrigger = (name = 'Manual') => node(name, 'n8n-nodes-base.manualTrigger', 1, {});

/** A Code node that returns the items the JavaScript expression `expression` evaluates to (an array of objects). */
export function codeNode(name: string, expression: string): WorkflowNode {
	return node(name, 'n8n-nodes-base.code', 2, {
		jsCode: `return (${expression}).map((json) => ({ json }));`,
	});
}

/** A Code node that returns these items. */
export function itemsNode(name: string, items: Json[]): WorkflowNode {
	return codeNode(name, JSON.stringify(items));
}

/**
 * Tickets T-1 … T-n as a Code node: `{ id, title, uid }`. `uid` is a fixed UUID per ticket number, for the HTTP
 * Request contender (which has to name the task in its URL); the Task Backlog node derives its own from `id`.
 */
export function ticketsNode(
	name: string,
	n: number,
	prefix = 'T',
	titlePrefix = 'Ticket',
): WorkflowNode {
	return codeNode(
		name,
		`Array.from({ length: ${n} }, (_, i) => ({ id: '${prefix}-' + (i + 1), title: '${titlePrefix} ' + (i + 1), ` +
			`uid: '00000000-0000-4000-8000-' + (i + 1).toString(16).padStart(12, '0') }))`,
	);
}

/** The Task Backlog node: `parameters` as in the node's own tests (resource, operation, …). */
export function backlogNode(
	name: string,
	credential: CredentialRef,
	parameters: Json,
	settings: Json = {},
): WorkflowNode {
	return node(name, TASK_BACKLOG_TYPE, 1, parameters, {
		credentials: { [CREDENTIAL_TYPE]: credential },
		...settings,
	});
}

/** Create or Update by external id from `$json.id` / `$json.title`. */
export function upsertParameters(requestOptions: Json = {}, extra: Json = {}): Json {
	return {
		resource: 'task',
		operation: 'upsert',
		identifyBy: 'externalId',
		externalId: '={{ $json.id }}',
		title: '={{ $json.title }}',
		...extra,
		requestOptions,
	};
}

/**
 * Create or Update with Input Data "Map Automatically": each ticket's keys read as they are (`id` the external ID,
 * `title`), its `uid` (there for the HTTP Request contender) ignored, so the task uid is derived from `id` as with
 * Define Below: the same work, without per-item expressions.
 */
export function autoMapParameters(requestOptions: Json = {}, extra: Json = {}): Json {
	return {
		resource: 'task',
		operation: 'upsert',
		inputData: 'autoMap',
		autoMapOptions: { keysToIgnore: 'uid' },
		...extra,
		requestOptions,
	};
}

export interface HttpContenderOptions {
	/** Items per batch of the HTTP Request node's Batching option (0: option off). */
	itemsPerBatch: number;
	/** Batch Interval (ms) of that option. */
	batchIntervalMs: number;
	/** Node setting Retry On Fail with these values (n8n defaults: 3 tries, 1000 ms). */
	retryOnFail?: { maxTries: number; waitBetweenTries: number };
}

/**
 * What users do today without our node: the HTTP Request node sends `PUT {base}/tasks/{uid}` per item with the bearer
 * token from a Header Auth credential.
 */
export function httpPutNode(
	name: string,
	baseUrl: string,
	credential: CredentialRef,
	options: HttpContenderOptions,
): WorkflowNode {
	const settings: Json = {};
	if (options.retryOnFail) {
		settings.retryOnFail = true;
		settings.maxTries = options.retryOnFail.maxTries;
		settings.waitBetweenTries = options.retryOnFail.waitBetweenTries;
	}
	return node(
		name,
		'n8n-nodes-base.httpRequest',
		4.2,
		{
			method: 'PUT',
			url: `=${baseUrl}/tasks/{{ $json.uid }}`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody: '={{ JSON.stringify({ fields: { title: $json.title, ticket_id: $json.id } }) }}',
			options:
				options.itemsPerBatch > 0
					? {
							batching: {
								batch: { batchSize: options.itemsPerBatch, batchInterval: options.batchIntervalMs },
							},
						}
					: {},
		},
		{ credentials: { httpHeaderAuth: credential }, ...settings },
	);
}

/** n8n's Set node (Edit Fields) assigning string fields, e.g. `{ title: '={{ $json.title }}' }`. */
export function setNode(name: string, fields: Record<string, string>): WorkflowNode {
	const assignments = Object.entries(fields).map(([field, value]) => ({
		id: randomUUID(),
		name: field,
		value,
		type: 'string',
	}));
	return node(name, 'n8n-nodes-base.set', 3.4, {
		mode: 'manual',
		assignments: { assignments },
		options: {},
	});
}

/** A Webhook trigger answering when the workflow has finished (responseMode lastNode). */
export function webhookNode(name: string, path: string): WorkflowNode {
	return node(
		name,
		'n8n-nodes-base.webhook',
		2,
		{ httpMethod: 'POST', path, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
		{ webhookId: randomUUID() },
	);
}

/** A workflow whose nodes run in a chain, each into the next; `branches` are further chains from the first node. */
export function workflow(
	id: string,
	name: string,
	chain: WorkflowNode[],
	branches: WorkflowNode[][] = [],
): Workflow {
	const connections: Json = {};
	const link = (from: WorkflowNode, to: WorkflowNode) => {
		connections[from.name] ??= { main: [[]] };
		connections[from.name].main[0].push({ node: to.name, type: 'main', index: 0 });
	};
	for (let i = 1; i < chain.length; i++) link(chain[i - 1], chain[i]);
	const nodes = [...chain];
	for (const branch of branches) {
		if (branch.length === 0) continue;
		link(chain[0], branch[0]);
		for (let i = 1; i < branch.length; i++) link(branch[i - 1], branch[i]);
		nodes.push(...branch);
	}
	return {
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		nodes,
		connections,
	};
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading a run printed by `n8n execute --rawOutput`

export interface NodeRun {
	/** Items of the first output, as JSON */
	items: Json[];
	/** ms since the epoch when n8n started the node */
	startTime: number;
	/** ms n8n measured for the node */
	executionTime: number;
	error?: Json;
}

function runData(run: any): Json | undefined {
	return run?.data?.resultData?.runData ?? run?.resultData?.runData;
}

/** The first run of a node, or undefined when it did not run. */
export function nodeRun(run: any, nodeName: string): NodeRun | undefined {
	const entry = runData(run)?.[nodeName]?.[0];
	if (!entry) return undefined;
	const items = (entry.data?.main?.[0] ?? []) as Array<{ json: Json }>;
	return {
		items: items.map((item) => item.json),
		startTime: Number(entry.startTime),
		executionTime: Number(entry.executionTime),
		error: entry.error,
	};
}

/** Every run of a node (a node re-run by Retry On Fail still has one entry; a node in a loop has several). */
export function nodeRuns(run: any, nodeName: string): NodeRun[] {
	const entries = (runData(run)?.[nodeName] ?? []) as any[];
	return entries.map((entry) => ({
		items: ((entry.data?.main?.[0] ?? []) as Array<{ json: Json }>).map((item) => item.json),
		startTime: Number(entry.startTime),
		executionTime: Number(entry.executionTime),
		error: entry.error,
	}));
}

/** The error that stopped the run, if any. */
export function runError(run: any): Json | undefined {
	return run?.data?.resultData?.error ?? run?.resultData?.error;
}
