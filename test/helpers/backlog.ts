/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- test code, never ships */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import type { Readings, Simulator, SimulatorOptions } from '../../tools/simulator/simulator';
import { readingsFor, startSimulator } from '../../tools/simulator/simulator';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { resetCallers } from '../../nodes/shared/callers/registry';
import type { RunNodeOptions } from './run-node';
import { runNode } from './run-node';

export const TOKEN = 'test-token-5f1c9e';

/** The uid the node derives from a ticket id (External ID, default namespace). */
export const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);

/** Create or Update by External ID, of items `{id, title}`: the spec's event-driven usage. */
export const upsertByTicket = {
	resource: 'task',
	operation: 'upsert',
	identifyBy: 'externalId',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
};

/** Create from the item's `title`, with the task uid the item gives in `uid`. */
export const createWithItemUid = {
	resource: 'task',
	operation: 'create',
	title: '={{ $json.title }}',
	additionalFields: { uid: '={{ $json.uid }}' },
};

export interface BacklogRun {
	items: INodeExecutionData[];
	json: IDataObject[];
	error?: Error;
}

/**
 * Runs the Task Backlog node in-process through n8n's execution engine, against the simulator over real HTTP.
 * Retries wait milliseconds instead of seconds, so tests stay fast; everything else is as a user has it.
 */
export async function runBacklog(
	sim: Simulator,
	parameters: Record<string, unknown>,
	options: {
		items?: IDataObject[];
		continueOnFail?: boolean;
		credentials?: IDataObject;
		/** Same id = a repeat of the same execution (Retry On Fail); default a new id per run. */
		executionId?: string;
		/** The node's Execute Once setting. */
		executeOnce?: boolean;
		/** The node's run in its execution (Loop Over Items: 0, 1, 2 ...). */
		runIndex?: number;
		/** The node's static data, kept from run to run as n8n keeps it for a production run (updated in place). */
		staticData?: IDataObject;
		/** How the execution was started (default `manual`, a run from the editor). */
		mode?: RunNodeOptions['mode'];
		/** The node's version (default the latest): a workflow saved with an earlier one. */
		typeVersion?: number;
		/** Cancel the execution this long after it started. */
		cancelAfterMs?: number;
		/** Cancel the execution when this settles. */
		cancelWhen?: Promise<unknown>;
		/** Sees the execution context n8n hands the node (RunNodeOptions.onContext). */
		onContext?: RunNodeOptions['onContext'];
	} = {},
): Promise<BacklogRun> {
	const requestOptions = { retryDelayMs: 5, ...((parameters.requestOptions as IDataObject) ?? {}) };
	const result = await runNode({
		nodeType: new TaskBacklog(),
		parameters: { ...parameters, requestOptions } as INodeParameters,
		items: options.items ?? [{}],
		credentials: {
			type: 'taskBacklogApi',
			data: {
				baseUrl: sim.url,
				token: TOKEN,
				requestsPerMinute: 10000,
				rateLimitWindowSeconds: 60,
				...options.credentials,
			},
		},
		credentialType: new TaskBacklogApi(),
		continueOnFail: options.continueOnFail,
		executionId: options.executionId,
		executeOnce: options.executeOnce,
		runIndex: options.runIndex,
		staticData: options.staticData,
		mode: options.mode,
		typeVersion: options.typeVersion,
		cancelAfterMs: options.cancelAfterMs,
		cancelWhen: options.cancelWhen,
		onContext: options.onContext,
	});
	const items = result.output[0] ?? [];
	return { items, json: items.map((item) => item.json), error: result.error };
}

/** Requests that reached the API, by method and a path pattern (the simulator logs paths below /api/v1). */
export function sent(sim: Simulator, method?: string, path?: RegExp | string) {
	return sim.requests.filter(
		(request) =>
			(!method || request.method === method) &&
			(!path || (typeof path === 'string' ? request.path === path : path.test(request.path))),
	);
}

export const byId = (uid: string) => ({ __rl: true, mode: 'id', value: uid });

/** Requests that write: everything but GET and POST /tasks/query (the bulk reads before a write). */
export function writesSent(sim: Simulator) {
	return sim.requests.filter(
		(request) => request.method !== 'GET' && request.path !== '/tasks/query',
	);
}

/** The simulator's effective readings of the spec's open points (the profile, and any reading set alone). */
export function readingsOf(sim: Simulator): Readings {
	return readingsFor(sim.options);
}

/**
 * One simulator for the enclosing describe block (or file): started once, stopped after, and before each test reset,
 * with its window limit off and no Retry-After on a 429 (the tests that want either set them). `use` receives it.
 * `options` are the simulator's for every test: given at start and again before each test, so what one test changes
 * does not reach the next.
 */
export function useSimulator(use: (sim: Simulator) => void, options: SimulatorOptions = {}): void {
	let sim: Simulator | undefined;
	beforeAll(async () => {
		sim = await startSimulator({ tokens: [TOKEN], ...options });
		use(sim);
	});
	afterAll(async () => await sim?.stop());
	beforeEach(() => {
		sim!.reset();
		sim!.configure({ requestsPerWindow: 0, retryAfterOnLimit: false, ...options });
		// Each test starts as a process's first execution: nothing learnt of the server by an earlier test.
		resetCallers();
	});
}
