/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- test code, never ships */
import { randomUUID } from 'crypto';
/**
 * In-process harness: runs one node through n8n-core's real execution engine.
 *
 * A two-node workflow (`Input` → node under test) runs through `WorkflowExecute.processRunExecutionData`,
 * the same loop n8n uses. The node's `execute()` therefore gets n8n-core's real `ExecuteContext`:
 * `getNodeParameter` (defaults applied by `Workflow`, values resolved by the expression engine),
 * `continueOnFail`, `getWorkflowStaticData`, `helpers.httpRequest*` and pairedItem handling.
 * HTTP requests go out through n8n-core's own request helper over a real socket.
 *
 * Only these pieces are test doubles, because n8n keeps them in packages/cli (database, encryption):
 * - `TestCredentialsHelper` (credentials.ts): returns the credential data from memory and applies the credential type's
 *   `authenticate` the way packages/cli `CredentialsHelper.authenticate` does (for `generic` auth, each
 *   `={{...}}` key and value is resolved with `workflow.expression.getSimpleParameterValue` and
 *   `{ $credentials }`, the real n8n-workflow expression evaluator).
 * - `additionalData`: the minimum `WorkflowExecute` and the contexts read, plus real `ExecutionLifecycleHooks`.
 *
 * Expressions: n8n-workflow 2.x evaluates through the `legacy` engine (tournament + `new Function`) unless
 * `Expression.initExpressionEngine({ engine: 'vm' | 'quickjs' })` is called. The harness does not call it,
 * and forces `legacy` in case another test changed the global, so isolated-vm (not built on Node 20) is
 * never loaded. Expressions in node parameters and credentials therefore work.
 */
import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	ICredentialType,
	IDataObject,
	IExecuteData,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	INodeTypes,
	IRun,
	IRunExecutionData,
	ITaskData,
	ITaskDataConnections,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	IExecuteFunctions,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import {
	createRunExecutionData,
	Expression,
	ICredentialsHelper,
	NodeHelpers,
	UnexpectedError,
	Workflow,
} from 'n8n-workflow';
import { Container } from '@n8n/di';
import {
	ErrorReporter,
	ExecuteContext,
	ExecutionLifecycleHooks,
	RoutingNode,
	WorkflowExecute,
} from 'n8n-core';

import { applyCredentialDefaults, TestCredentialsHelper, TestCredentialTypes } from './credentials';

export const SOURCE_NODE_NAME = 'Input';
const SOURCE_NODE_TYPE = 'n8n-nodes-task-backlog-harness.items';
const CREDENTIAL_ID = 'harness-credential-1';

export interface RunNodeOptions {
	/** Instance of the node class, e.g. `new TaskBacklog()`. */
	nodeType: INodeType;
	/** Default: `n8n-nodes-task-backlog.<description.name>`. */
	typeName?: string;
	/** Default: the description's (highest) version. */
	typeVersion?: number;
	/** Default: `description.defaults.name` or the display name. */
	nodeName?: string;
	/** Node parameters; defaults of the description are applied as n8n does. Expressions (`={{...}}`) are allowed. */
	parameters: INodeParameters;
	/** Input items, fed to the node by a source node `Input`. Default: one empty item. */
	items?: INodeExecutionData[] | IDataObject[];
	/** Credential assigned to the node, e.g. `{ type: 'taskBacklogApi', data: { baseUrl, token } }`. */
	credentials?: { type: string; data: ICredentialDataDecryptedObject } | null;
	/** The credential class instance; its `authenticate` is applied to `httpRequestWithAuthentication` requests. */
	credentialType?: ICredentialType;
	/** Sets the node's `onError` to `continueRegularOutput` (what "On Error: Continue" does in the editor). */
	continueOnFail?: boolean;
	/** Node static data (`getWorkflowStaticData('node')`); the object is updated in place by the run. */
	staticData?: IDataObject;
	/** Global static data (`getWorkflowStaticData('global')`); updated in place. */
	globalStaticData?: IDataObject;
	/** Execution mode. Default `manual`. */
	mode?: WorkflowExecuteMode;
	/** Execution id; default a new one per run, as n8n gives every execution its own. Pass the same to replay one. */
	executionId?: string;
	/** The node's Execute Once setting: n8n then hands it only the first input item. */
	executeOnce?: boolean;
	/** Cancels the execution this long after it started, as n8n's Stop button or a timeout does. */
	cancelAfterMs?: number;
	/** Cancels the execution when this settles (e.g. once a request of its is seen on the server). */
	cancelWhen?: Promise<unknown>;
	/**
	 * Runs of the node before this one in the same execution (Loop Over Items runs a node once per batch): the node
	 * then runs with `$runIndex` = runIndex, and the result read is that run's.
	 */
	runIndex?: number;
	/**
	 * Sees the execution context n8n hands the node under test (its `this` in execute), e.g. to hold it weakly and
	 * check that nothing keeps it once the execution has ended.
	 */
	onContext?: (context: IExecuteFunctions) => void;
}

export interface RunNodeResult {
	/** The node's output per output index (empty when it failed). */
	output: INodeExecutionData[][];
	/** The error the node threw, as the original object (NodeApiError / NodeOperationError instance with its fields). */
	error?: Error;
	/** The node's task data as n8n records it (status, hints, the serialised error copy, ...). */
	taskData?: ITaskData;
	/** Node static data after the run (plain copy). */
	staticData: IDataObject;
	/** Global static data after the run (plain copy). */
	globalStaticData: IDataObject;
	/** The whole run as WorkflowExecute returns it. */
	run: IRun;
}

class HarnessNodeTypes implements INodeTypes {
	constructor(private readonly types: Record<string, INodeType | IVersionedNodeType>) {}

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		return this.types[nodeType];
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		const type = this.types[nodeType];
		if (type === undefined) throw new UnexpectedError(`Unknown node type "${nodeType}"`);
		return NodeHelpers.getVersionedNodeType(type, version);
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

/** Pass-through node that emits the harness's input items. */
const sourceNodeType: INodeType = {
	description: {
		displayName: 'Harness Input',
		name: 'items',
		group: ['transform'],
		version: 1,
		description: 'Emits the items the harness put on its input',
		defaults: { name: SOURCE_NODE_NAME },
		inputs: [],
		outputs: ['main'],
		properties: [],
	},
	async execute(this: IExecuteFunctions) {
		return [this.getInputData()];
	},
};

function toItems(items: RunNodeOptions['items']): INodeExecutionData[] {
	if (!items) return [{ json: {} }];
	return (items as Array<INodeExecutionData | IDataObject>).map((item) =>
		item && typeof item === 'object' && 'json' in item && typeof item.json === 'object'
			? ({ ...item } as INodeExecutionData)
			: { json: item as IDataObject },
	);
}

function latestVersion(nodeType: INodeType): number {
	const { version } = nodeType.description;
	return Array.isArray(version) ? Math.max(...version) : version;
}

function plain(data: unknown): IDataObject {
	return JSON.parse(JSON.stringify(data ?? {})) as IDataObject;
}

/**
 * WorkflowExecute hands every node error to n8n-core's ErrorReporter (Sentry in production), which
 * without Sentry logs the error and its stack to the console. Expected failures in tests would flood
 * the output, so that side channel is muted unless HARNESS_LOG_ERRORS=1. Execution is unaffected.
 */
function muteErrorReporter() {
	if (process.env.HARNESS_LOG_ERRORS === '1') return;
	const reporter = Container.get(ErrorReporter) as unknown as {
		report: (...args: unknown[]) => void;
	};
	reporter.report = () => {};
}

function useLegacyExpressionEngine() {
	// A process-wide setting; 'legacy' needs no isolated-vm. Never switch to 'vm' on Node 20.
	if ((Expression as unknown as { expressionEngine: string }).expressionEngine !== 'legacy') {
		Expression.setExpressionEngine('legacy');
	}
}

function buildAdditionalData(
	credentialsHelper: ICredentialsHelper,
	hooks: ExecutionLifecycleHooks | undefined,
	executionId: string,
): IWorkflowExecuteAdditionalData {
	const additionalData: Partial<IWorkflowExecuteAdditionalData> = {
		credentialsHelper,
		hooks,
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://localhost:5678/rest',
		instanceBaseUrl: 'http://localhost:5678/',
		formBaseUrl: 'http://localhost:5678/form',
		formWaitingBaseUrl: 'http://localhost:5678/form-waiting',
		formTestBaseUrl: 'http://localhost:5678/form-test',
		webhookBaseUrl: 'http://localhost:5678/webhook',
		webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://localhost:5678/webhook-test',
		mcpBaseUrl: 'http://localhost:5678/mcp',
		mcpTestBaseUrl: 'http://localhost:5678/mcp-test',
		variables: {},
		userId: 'harness-user',
		workflowId: 'harness-workflow',
		logAiEvent: () => {},
		executeWorkflow: async () => {
			throw new UnexpectedError('executeWorkflow is not available in the harness');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		startRunnerTask: async () => {
			throw new UnexpectedError('Task runners are not available in the harness');
		},
	};
	return additionalData as IWorkflowExecuteAdditionalData;
}

/** Runs `options.nodeType` once through `WorkflowExecute`, fed by a source node with `options.items`. */
export async function runNode(options: RunNodeOptions): Promise<RunNodeResult> {
	useLegacyExpressionEngine();
	muteErrorReporter();

	const original = options.nodeType;
	const typeName = options.typeName ?? `n8n-nodes-task-backlog.${original.description.name}`;
	const typeVersion = options.typeVersion ?? latestVersion(original);
	const nodeName =
		options.nodeName ?? original.description.defaults?.name ?? original.description.displayName;
	if (nodeName === SOURCE_NODE_NAME)
		throw new UnexpectedError(`"${SOURCE_NODE_NAME}" is reserved by the harness`);

	// Delegate to the real node, only noting the error it throws: WorkflowExecute records a
	// spread copy of the error (`{ ...e, message, stack }`), which loses the class.
	let thrown: unknown;
	const wrapped = Object.create(original) as INodeType;
	if (typeof original.execute === 'function') {
		const execute = original.execute;
		const onContext = options.onContext;
		wrapped.execute = async function (this: unknown, ...args: unknown[]) {
			onContext?.(this as IExecuteFunctions);
			try {
				return await (execute as (...a: unknown[]) => Promise<INodeExecutionData[][]>).apply(
					this,
					args,
				);
			} catch (error) {
				thrown = error;
				throw error;
			}
		} as INodeType['execute'];
	}

	const nodeTypes = new HarnessNodeTypes({
		[SOURCE_NODE_TYPE]: sourceNodeType,
		[typeName]: wrapped,
	});

	const credentialTypes = new TestCredentialTypes();
	credentialTypes.add(options.credentialType);
	const credentialData: Record<string, ICredentialDataDecryptedObject> = {};
	if (options.credentials) credentialData[options.credentials.type] = options.credentials.data;

	const sourceNode: INode = {
		id: 'harness-input',
		name: SOURCE_NODE_NAME,
		type: SOURCE_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const node: INode = {
		id: 'harness-node',
		name: nodeName,
		type: typeName,
		typeVersion,
		position: [200, 0],
		parameters: structuredClone(options.parameters),
		...(options.credentials && {
			credentials: {
				[options.credentials.type]: { id: CREDENTIAL_ID, name: 'Harness credential' },
			},
		}),
		...(options.continueOnFail && { onError: 'continueRegularOutput' as const }),
		...(options.executeOnce && { executeOnce: true }),
	};

	const staticData: IDataObject = {};
	if (options.globalStaticData) staticData.global = options.globalStaticData;
	if (options.staticData) staticData[`node:${nodeName}`] = options.staticData;

	const mode = options.mode ?? 'manual';
	const workflow = new Workflow({
		id: 'harness-workflow',
		name: 'Harness',
		nodes: [sourceNode, node],
		connections: { [SOURCE_NODE_NAME]: { main: [[{ node: nodeName, type: 'main', index: 0 }]] } },
		active: false,
		nodeTypes,
		staticData,
		settings: { executionOrder: 'v1' },
	});

	const workflowData: IWorkflowBase = {
		id: 'harness-workflow',
		name: 'Harness',
		active: false,
		activeVersionId: null,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
		nodes: [sourceNode, node],
		connections: workflow.connectionsBySourceNode,
		settings: { executionOrder: 'v1' },
	};
	const executionId = options.executionId ?? `harness-${randomUUID()}`;
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
	let resolveDone: (run: IRun) => void = () => {};
	const done = new Promise<IRun>((resolve) => (resolveDone = resolve));
	hooks.addHandler('workflowExecuteAfter', (fullRunData) => resolveDone(fullRunData));

	const credentialsHelper = new TestCredentialsHelper(credentialTypes, credentialData);
	const additionalData = buildAdditionalData(credentialsHelper, hooks, executionId);

	const runIndex = options.runIndex ?? 0;
	const earlierRuns: ITaskData[] = Array.from({ length: runIndex }, () => ({
		startTime: Date.now(),
		executionTime: 0,
		executionIndex: 0,
		executionStatus: 'success',
		source: [],
		data: { main: [[]] },
	}));
	const runExecutionData = createRunExecutionData({
		...(runIndex > 0 && { resultData: { runData: { [nodeName]: earlierRuns } } }),
		executionData: {
			nodeExecutionStack: [
				{ node: sourceNode, data: { main: [toItems(options.items)] }, source: null },
			],
		},
	});

	const workflowExecute = new WorkflowExecute(additionalData, mode, runExecutionData);
	const running = workflowExecute.processRunExecutionData(workflow);
	if (options.cancelAfterMs !== undefined)
		setTimeout(() => running.cancel(), options.cancelAfterMs);
	if (options.cancelWhen) void options.cancelWhen.then(() => running.cancel());
	const cancellable = options.cancelAfterMs !== undefined || options.cancelWhen !== undefined;
	// A cancelled run does not settle; n8n reports it through its workflowExecuteAfter hook instead.
	const run = cancellable ? await Promise.race([running, done]) : await running;
	await done;

	const taskData = run.data.resultData.runData[nodeName]?.[runIndex];
	const output = (taskData?.data?.main ?? []).map((items) => items ?? []);

	let error: Error | undefined;
	if (taskData?.error || (run.data.resultData.error && !taskData?.data)) {
		error =
			thrown instanceof Error
				? thrown
				: ((taskData?.error ?? run.data.resultData.error) as unknown as Error);
	}

	const finalStatic = workflow.staticData as IDataObject;
	return {
		output,
		error,
		taskData,
		staticData: plain(finalStatic[`node:${nodeName}`]),
		globalStaticData: plain(finalStatic.global),
		run,
	};
}

export interface CredentialTestResult {
	status: 'OK' | 'Error';
	message: string;
}

/**
 * Performs the credential type's `test.request` over real HTTP the way packages/cli `CredentialsTester` does:
 * a temporary declarative node whose single property routes `test.request`, run by n8n-core's `RoutingNode`
 * (base URL and url resolved with `$credentials`, `authenticate` applied), then `test.rules` evaluated.
 */
export async function testCredential(
	credentialType: ICredentialType,
	data: ICredentialDataDecryptedObject,
): Promise<CredentialTestResult> {
	useLegacyExpressionEngine();
	const test = credentialType.test;
	if (!test) return { status: 'Error', message: 'No testing function found for this credential.' };

	const credentialTypes = new TestCredentialTypes();
	credentialTypes.add(credentialType);
	const credentialsHelper = new TestCredentialsHelper(credentialTypes, {
		[credentialType.name]: data,
	});

	const tempTypeName = 'n8n-nodes-task-backlog-harness.credentialTest';
	const tempNodeType: INodeType = {
		description: {
			displayName: 'Temp',
			name: 'credentialTest',
			group: ['transform'],
			version: 1,
			description: 'Credential test',
			defaults: { name: 'Temp-Node' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: credentialType.name, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: test.request },
					default: '',
				},
			],
		},
	};
	const node: INode = {
		id: 'temp',
		name: 'Temp-Node',
		type: tempTypeName,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { [credentialType.name]: { id: CREDENTIAL_ID, name: 'Harness credential' } },
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new HarnessNodeTypes({ [tempTypeName]: tempNodeType }),
	});
	const additionalData = buildAdditionalData(
		credentialsHelper,
		undefined,
		'harness-credential-test',
	);
	const mode: WorkflowExecuteMode = 'internal';
	const credentialsDecrypted: ICredentialsDecrypted = {
		id: CREDENTIAL_ID,
		name: 'Harness credential',
		type: credentialType.name,
		data: applyCredentialDefaults(credentialType, data, mode, workflow),
	};
	const runExecutionData: IRunExecutionData = createRunExecutionData({ executionData: null });
	const inputData: ITaskDataConnections = { main: [[{ json: {} }]] };
	const executeData: IExecuteData = { node, data: {}, source: null };
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		mode,
		runExecutionData,
		0,
		[],
		inputData,
		executeData,
		[],
	);
	const routingNode = new RoutingNode(context, tempNodeType, credentialsDecrypted);

	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await routingNode.runNode();
	} catch (e) {
		const error = e as Error & {
			httpCode?: string;
			cause?: { code?: string; response?: { status?: number; statusText?: string } };
		};
		const status =
			error.cause?.response?.status ?? (error.httpCode ? Number(error.httpCode) : undefined);
		if (status !== undefined && !Number.isNaN(status)) {
			for (const rule of test.rules ?? []) {
				if (rule.type === 'responseCode' && rule.properties.value === status) {
					return { status: 'Error', message: String(rule.properties.message) };
				}
			}
			if (status < 199 || status > 299) {
				return {
					status: 'Error',
					message: error.cause?.response?.statusText || `Received HTTP status code: ${status}`,
				};
			}
		} else if (error.cause?.code) {
			return { status: 'Error', message: error.cause.code };
		}
		return { status: 'Error', message: String(error.message) };
	}

	for (const rule of test.rules ?? []) {
		if (rule.type === 'responseSuccessBody') {
			const json = response?.[0]?.[0]?.json as IDataObject | undefined;
			const value = String(rule.properties.key)
				.split('.')
				.reduce<unknown>((acc, key) => (acc as IDataObject | undefined)?.[key], json);
			if (value === rule.properties.value) {
				return { status: 'Error', message: String(rule.properties.message) };
			}
		}
	}
	return { status: 'OK', message: 'Connection successful!' };
}
