import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import type { BacklogClient } from '../../shared/transport/client';
import type { TaskGateway, TaskWrite } from '../../shared/tasks/writeTasks';

/** Handles one input item; the router adds pairedItem and Continue On Fail. */
export interface ItemOperation {
	description: INodeProperties[];
	execute(
		this: IExecuteFunctions,
		client: BacklogClient,
		itemIndex: number,
	): Promise<IDataObject[]>;
}

/** What a batched operation writes for one item: the transport reads the tasks in bulk, then writes them in batches. */
export type ItemWrite = Omit<TaskWrite, 'itemIndex'>;

/**
 * Writes tasks in bulk (Create, Create or Update, Update, Close, ...). `writeFor` is called once per execution: it
 * reads what every item shares and returns what to write for one item (throwing for a bad item). The router calls it
 * for every item before anything is sent, then makes one transport call for all of them.
 */
export interface BatchOperation {
	batched: true;
	description: INodeProperties[];
	writeFor(this: IExecuteFunctions): (itemIndex: number) => ItemWrite | Promise<ItemWrite>;
}

/**
 * How the operation's writes are sent, from Request Options (the router reads them): called where they are needed, so
 * a bad option stops the node there and not before.
 */
export interface Sending {
	batchSize: number;
	gateway: TaskGateway;
}

/** Works on the input as a whole (Sync Backlog): its output items carry their own pairedItem. */
export interface WholeInputOperation {
	wholeInput: true;
	description: INodeProperties[];
	execute(
		this: IExecuteFunctions,
		client: BacklogClient,
		itemIndexes: number[],
		sending: () => Sending,
	): Promise<INodeExecutionData[]>;
}

export type Operation = ItemOperation | BatchOperation | WholeInputOperation;
