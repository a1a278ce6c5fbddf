import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BatchOperation } from '../types';
import { forOperation, taskLocator } from './descriptions';
import { taskUid } from './parameters';

/** Close, Reopen, Archive, Unarchive: one fixed change to the chosen task (PATCH, batched). */
export function taskChange(operation: string, change: IDataObject): BatchOperation {
	const description: INodeProperties[] = forOperation('task', operation, [taskLocator()]);
	return {
		batched: true,
		description,
		writeFor(this: IExecuteFunctions) {
			return (itemIndex) => ({ mode: 'patch', uid: taskUid(this, itemIndex), body: { ...change } });
		},
	};
}
