import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BatchOperation, Operation } from '../types';
import { forOperation, taskLocator } from '../shared/descriptions';
import { taskUid } from '../../../shared/parameters';
import * as create from './create';
import * as get from './get';
import * as getAll from './getAll';
import * as query from './query';
import * as syncBacklog from './syncBacklog';
import * as update from './update';
import * as upsert from './upsert';

/** Close, Reopen, Archive, Unarchive: one fixed change to the chosen task (PATCH, batched). */
function taskChange(operation: string, change: IDataObject): BatchOperation {
	const description: INodeProperties[] = forOperation('task', operation, [taskLocator()]);
	return {
		batched: true,
		description,
		writeFor(this: IExecuteFunctions) {
			return (itemIndex) => ({ mode: 'patch', uid: taskUid(this, itemIndex), body: { ...change } });
		},
	};
}

/** Spec section 3: PATCH with status DONE. */
const close = taskChange('close', { status: 'DONE' });

/** Spec section 3: PATCH with status TODO. */
const reopen = taskChange('reopen', { status: 'TODO' });

/** The service advises archiving or closing tasks rather than deleting them. */
const archive = taskChange('archive', { archived: true });

const unarchive = taskChange('unarchive', { archived: false });

export const operations = {
	create,
	upsert,
	update,
	close,
	reopen,
	archive,
	unarchive,
	get,
	getAll,
	query,
	syncBacklog,
} satisfies Record<string, Operation>;

/** The operations that write in batches (Sync Backlog too): Request Options shows Batching and Batch Size for them. */
export const batchedOperations = Object.entries(operations as Record<string, Operation>)
	.filter(([, operation]) => 'batched' in operation || 'wholeInput' in operation)
	.map(([name]) => name);

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['task'] } },
		default: 'upsert',
		options: [
			{
				name: 'Archive',
				value: 'archive',
				action: 'Archive a task',
				description: 'Archive a task, keeping its status',
			},
			{ name: 'Close', value: 'close', action: 'Close a task', description: 'Set a task to DONE' },
			{
				name: 'Create',
				value: 'create',
				action: 'Create a task',
				description: 'Create a new task (never twice, even on retries)',
			},
			{
				name: 'Create or Update',
				value: 'upsert',
				action: 'Create or update a task',
				description: 'Create a new record, or update the current one if it already exists (upsert)',
			},
			{ name: 'Get', value: 'get', action: 'Get a task', description: 'Get a task by UID' },
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many tasks',
				description: 'List tasks, with filters',
			},
			{
				name: 'Query',
				value: 'query',
				action: 'Query tasks',
				description: 'Find tasks with conditions and sorts',
			},
			{
				name: 'Reopen',
				value: 'reopen',
				action: 'Reopen a task',
				description: 'Set a task back to TODO',
			},
			{
				name: 'Sync Backlog',
				value: 'syncBacklog',
				action: 'Sync the backlog with a full set of tickets',
				description:
					'Upsert every input ticket and close the tasks of tickets no longer in the input',
			},
			{
				name: 'Unarchive',
				value: 'unarchive',
				action: 'Unarchive a task',
				description: 'Restore an archived task, keeping its status',
			},
			{
				name: 'Update',
				value: 'update',
				action: 'Update a task',
				description: 'Change some properties of a task',
			},
		],
	},
	...Object.values(operations).flatMap((operation) => operation.description),
];
