import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import type { TaskWrite } from '../../../shared/transport/writeTasks';
import { writeTasks } from '../../../shared/transport/writeTasks';
import { batchSize } from './requestOptions';

/** Errors keep their class (and an API error its HTTP status); anything else becomes a NodeOperationError. */
export function asNodeError(ctx: IExecuteFunctions, error: unknown, itemIndex: number): Error {
	return error instanceof NodeApiError || error instanceof NodeOperationError
		? error
		: new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}

/**
 * The shape of every batched write operation: read and check every item first, then one call to the transport.
 * Without Continue On Fail a bad item stops the node before anything is sent.
 */
export async function writeEachItem(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	itemIndexes: number[],
	toWrite: (itemIndex: number) => Omit<TaskWrite, 'itemIndex'> | Promise<Omit<TaskWrite, 'itemIndex'>>,
): Promise<Array<IDataObject | Error>> {
	const prepared: Array<TaskWrite | Error> = [];
	for (const itemIndex of itemIndexes) {
		try {
			// One pass over the items; a reader that needs no await (Map Automatically, most of Define Below) costs none.
			const write = toWrite(itemIndex);
			prepared.push({ ...(write instanceof Promise ? await write : write), itemIndex });
		} catch (error) {
			if (!ctx.continueOnFail()) throw asNodeError(ctx, error, itemIndex);
			prepared.push(error as Error);
		}
	}
	const writes = prepared.filter((entry): entry is TaskWrite => !(entry instanceof Error));
	const written = await writeTasks(client, writes, { batchSize: batchSize(ctx), stopOnError: !ctx.continueOnFail() });
	let next = 0;
	return prepared.map((entry) => {
		if (entry instanceof Error) return entry;
		const result = written[next++];
		return 'task' in result ? result.task : result.error;
	});
}
