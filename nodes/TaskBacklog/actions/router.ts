import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { asNodeError, booleanSetting, numberSetting } from '../../shared/parameters';
import { sharedGateway } from '../../shared/sharing/coalesce';
import type { TaskGateway, TaskWrite } from '../../shared/tasks/writeTasks';
import { directGateway, isNotSent, writeTasks } from '../../shared/tasks/writeTasks';
import type { RetryPolicy } from '../../shared/transport/client';
import { BacklogClient, DEFAULT_RETRY_POLICY } from '../../shared/transport/client';
import { operations as commentOperations } from './comment';
import { operations as taskOperations } from './task';
import type { Operation } from './types';

// Request Options: how this node's requests are sent, read once per execution (for item 0).

export const DEFAULT_BATCH_SIZE = 100;

/** Request Options; Batching and Batch Size are shown for the task operations that write in batches. */
export const requestOptionsProperty = (batchedOperations: string[]): INodeProperties => ({
	displayName: 'Request Options',
	name: 'requestOptions',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Batch Size',
			name: 'batchSize',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 1000 },
			default: 100,
			description: 'How many tasks one batch request carries',
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
		{
			displayName: 'Batching',
			name: 'batching',
			type: 'boolean',
			default: true,
			description:
				'Whether to send the writes of many input items through /tasks/batch in groups instead of one request per item',
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
		{
			displayName: 'Max Attempts',
			name: 'maxAttempts',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 10 },
			default: 5,
			description:
				'Attempts per request, the first included. 429, 500, 502, 503, 504 and network errors are retried with exponential backoff; writes are idempotent, so a retry never duplicates a task.',
		},
		{
			displayName: 'Retry Delay (Ms)',
			name: 'retryDelayMs',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 2000,
			description:
				'First wait before a retry; it doubles with each attempt, up to 15 seconds. A Retry-After header from the service wins.',
		},
		{
			displayName: 'Share Requests Across Executions',
			name: 'shareRequests',
			type: 'boolean',
			default: true,
			description:
				"Whether this node's reads and batch writes may go in one request with those of other executions running at once in this n8n process on the same credential (many one-ticket webhook executions then cost a few requests instead of two each). Each execution still gets only its own results and errors. Turn off to send only this execution's own requests.",
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
	],
});

function options(ctx: IExecuteFunctions): IDataObject {
	return ctx.getNodeParameter('requestOptions', 0, {}) as IDataObject;
}

/**
 * A number of Request Options, read once (for item 0): its default when not set, otherwise the number it spells if
 * `valid` accepts it, or an error naming the option.
 */
function optionNumber(
	ctx: IExecuteFunctions,
	value: unknown,
	name: string,
	fallback: number,
	valid: (number: number) => boolean,
	rule: string,
): number {
	return numberSetting(ctx.getNode(), value, {
		label: `Item 0: Request Options › ${name}`,
		fallback,
		valid,
		rule,
		description: `Set ${name} under Request Options to ${rule} (the expression is read for the first item).`,
		itemIndex: 0,
	});
}

export function retryPolicy(ctx: IExecuteFunctions): RetryPolicy {
	const { maxAttempts, retryDelayMs } = options(ctx);
	return {
		maxAttempts: optionNumber(
			ctx,
			maxAttempts,
			'Max Attempts',
			DEFAULT_RETRY_POLICY.maxAttempts,
			(number) => Number.isInteger(number) && number >= 1,
			'a whole number of 1 or more',
		),
		baseDelayMs: optionNumber(
			ctx,
			retryDelayMs,
			'Retry Delay (Ms)',
			DEFAULT_RETRY_POLICY.baseDelayMs,
			(number) => Number.isFinite(number) && number >= 0,
			'a number of milliseconds, 0 or more',
		),
		maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs,
	};
}

/** 1 when batching is off: each write goes to /tasks/{uid}. */
export function batchSize(ctx: IExecuteFunctions): number {
	const { batching, batchSize: size } = options(ctx);
	if (!optionBoolean(ctx, batching, 'Batching', true)) return 1;
	return Number(size ?? DEFAULT_BATCH_SIZE);
}

/**
 * A yes/no of Request Options, read once (for item 0): its default when not set, true or false as given or as the text
 * an expression gives, anything else an error naming the option (booleanSetting).
 */
function optionBoolean(
	ctx: IExecuteFunctions,
	value: unknown,
	name: string,
	fallback: boolean,
): boolean {
	return booleanSetting(ctx.getNode(), value, {
		label: `Item 0: Request Options › ${name}`,
		fallback,
		description: `Set ${name} under Request Options to true or false (the expression is read for the first item).`,
		itemIndex: 0,
	});
}

/** How this node's task reads and writes are sent: shared with other executions at once (the default), or its own. */
export function taskGateway(ctx: IExecuteFunctions): TaskGateway {
	const share = optionBoolean(
		ctx,
		options(ctx).shareRequests,
		'Share Requests Across Executions',
		true,
	);
	return share ? sharedGateway : directGateway;
}

const resources: Record<'task' | 'comment', Record<string, Operation>> = {
	task: taskOperations,
	comment: commentOperations,
};

function errorItem(error: Error, itemIndex: number): INodeExecutionData {
	const json: IDataObject = { error: error.message };
	const { description, httpCode } = error as {
		description?: string | null;
		httpCode?: string | null;
	};
	if (description) json.description = description;
	if (httpCode) json.httpCode = httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

/** Marks which input item an error belongs to, so n8n's error view points at it. */
function forItem(error: Error, itemIndex: number): Error {
	const context = (error as { context?: IDataObject }).context;
	if (context && context.itemIndex === undefined) context.itemIndex = itemIndex;
	return error;
}

/**
 * One transport call for the items of a batched operation, read and checked first by the router (an Error stands for
 * an item that failed there): the result of each item, or its Error, in input order.
 */
async function writePrepared(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	prepared: Array<TaskWrite | Error>,
): Promise<Array<IDataObject | Error>> {
	const writes = prepared.filter((entry): entry is TaskWrite => !(entry instanceof Error));
	const written = await writeTasks(client, writes, {
		batchSize: batchSize(ctx),
		stopOnError: !ctx.continueOnFail(),
		gateway: taskGateway(ctx),
	});
	let next = 0;
	return prepared.map((entry) => {
		if (entry instanceof Error) return entry;
		const result = written[next++];
		return 'task' in result ? result.task : result.error;
	});
}

/**
 * The item contract for the three kinds of operation (actions/types.ts): an item operation is called once per item;
 * a batched one says what to write for each item, and the router reads every item before one transport call writes
 * them all; for both the router pairs each result with its item and applies Continue On Fail. A whole-input operation
 * (Sync Backlog) pairs its own output items, since a row of its output may stand for several input items or none.
 */
export async function route(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const client = new BacklogClient(this, retryPolicy(this));
	try {
		return await routeWith.call(this, client);
	} finally {
		// The execution is over: its hold on the token's rate limiter ends (a request still under way keeps it busy).
		client.done();
	}
}

async function routeWith(
	this: IExecuteFunctions,
	client: BacklogClient,
): Promise<INodeExecutionData[][]> {
	const itemIndexes = this.getInputData().map((_, index) => index);
	const resource = this.getNodeParameter('resource', 0) as string;
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operation = resources[resource as keyof typeof resources]?.[operationName];
	if (!operation) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operationName}" of "${resource}" is not known`,
		);
	}
	client.prepare();

	if ('wholeInput' in operation) {
		// The service may echo the token in any answer: the output never carries it (client.redactOutput).
		const sending = () => ({ batchSize: batchSize(this), gateway: taskGateway(this) });
		return [
			await client.redactOutput(await operation.execute.call(this, client, itemIndexes, sending)),
		];
	}

	const output: INodeExecutionData[] = [];
	if ('batched' in operation) {
		// Every item is read and checked before anything is sent: without Continue On Fail a bad item stops the node
		// before the first request; then one transport call writes them all.
		const writeFor = operation.writeFor.call(this);
		const prepared: Array<TaskWrite | Error> = [];
		for (const itemIndex of itemIndexes) {
			try {
				// A reader that needs no await (Map Automatically, most of Define Below) costs none.
				const write = writeFor(itemIndex);
				prepared.push({ ...(write instanceof Promise ? await write : write), itemIndex });
			} catch (error) {
				if (!this.continueOnFail()) throw forItem(asNodeError(this, error, itemIndex), itemIndex);
				prepared.push(error as Error);
			}
		}
		const results = await writePrepared(this, client, prepared);
		if (!this.continueOnFail()) {
			// The node stops at the first error that caused the others, not at a write held back because of it.
			const errors = results.filter((result): result is Error => result instanceof Error);
			const stop = errors.find((error) => !isNotSent(error)) ?? errors[0];
			if (stop) throw forItem(stop, results.indexOf(stop));
		}
		results.forEach((result, itemIndex) =>
			output.push(
				result instanceof Error
					? errorItem(result, itemIndex)
					: { json: result, pairedItem: { item: itemIndex } },
			),
		);
		return [await client.redactOutput(output)];
	}

	for (const itemIndex of itemIndexes) {
		try {
			const results = await operation.execute.call(this, client, itemIndex);
			for (const json of results) output.push({ json, pairedItem: { item: itemIndex } });
		} catch (error) {
			if (!this.continueOnFail()) throw forItem(error as Error, itemIndex);
			output.push(errorItem(error as Error, itemIndex));
		}
	}
	return [await client.redactOutput(output)];
}
