import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../shared/transport/client';

/** Handles one input item; the router adds pairedItem and Continue On Fail. */
export interface ItemOperation {
	description: INodeProperties[];
	execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number): Promise<IDataObject[]>;
}

/** Handles every input item at once (batched writes): one result per item, an Error for an item that failed. */
export interface BatchOperation {
	batched: true;
	description: INodeProperties[];
	execute(
		this: IExecuteFunctions,
		client: BacklogClient,
		itemIndexes: number[],
	): Promise<Array<IDataObject | Error>>;
}

/** Works on the input as a whole (Sync Backlog): its output items carry their own pairedItem. */
export interface WholeInputOperation {
	wholeInput: true;
	description: INodeProperties[];
	execute(
		this: IExecuteFunctions,
		client: BacklogClient,
		itemIndexes: number[],
	): Promise<INodeExecutionData[]>;
}

export type Operation = ItemOperation | BatchOperation | WholeInputOperation;
