import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import type { BatchOperation } from '../types';
import { taskLocator } from './descriptions';
import { taskUid } from './parameters';
import { writeEachItem } from './writes';

/** Close, Reopen, Archive, Unarchive: one fixed change to the chosen task (PATCH, batched). */
export function taskChange(operation: string, change: IDataObject): BatchOperation {
	const description: INodeProperties[] = [taskLocator(operation)];
	return {
		batched: true,
		description,
		async execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
			return await writeEachItem(this, client, itemIndexes, (itemIndex) => ({
				mode: 'patch',
				uid: taskUid(this, itemIndex),
				body: { ...change },
			}));
		},
	};
}
