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
 * One transport call for the items of a batched operation, read and checked first by the router (an Error stands for
 * an item that failed there): the result of each item, or its Error, in input order.
 */
export async function writePrepared(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	prepared: Array<TaskWrite | Error>,
): Promise<Array<IDataObject | Error>> {
	const writes = prepared.filter((entry): entry is TaskWrite => !(entry instanceof Error));
	const written = await writeTasks(client, writes, { batchSize: batchSize(ctx), stopOnError: !ctx.continueOnFail() });
	let next = 0;
	return prepared.map((entry) => {
		if (entry instanceof Error) return entry;
		const result = written[next++];
		return 'task' in result ? result.task : result.error;
	});
}
