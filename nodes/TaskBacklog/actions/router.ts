import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { BacklogClient } from '../../shared/transport/client';
import { operations as commentOperations } from './comment';
import { batchSize, retryPolicy, taskGateway } from './shared/requestOptions';
import { asNodeError } from './shared/parameters';
import { operations as taskOperations } from './task';
import type { TaskWrite } from '../../shared/tasks/writeTasks';
import { isNotSent, writeTasks } from '../../shared/tasks/writeTasks';
import type { Operation } from './types';

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
		return [await client.redactOutput(await operation.execute.call(this, client, itemIndexes))];
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
