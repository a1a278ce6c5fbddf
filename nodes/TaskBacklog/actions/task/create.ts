import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { parametersReadOnce } from '../../../shared/parameters';
import { createdUids } from '../../../shared/identity';
import { forOperation } from '../shared/descriptions';
import {
	autoMapProperties,
	defineOnly,
	inputDataProperty,
	readTaskProperties,
	taskContentProperties,
	taskInputReader,
	taskPropertiesCollection,
} from '../shared/taskInput';
import type { ItemWrite } from '../types';

export const batched = true;

export const description = forOperation('task', 'create', [
	inputDataProperty(),
	...autoMapProperties('create'),
	...defineOnly([...taskContentProperties()]),
	taskPropertiesCollection('additionalFields', 'Additional Fields', [
		{
			displayName: 'UID',
			name: 'uid',
			type: 'string',
			default: '',
			// Under Map Automatically the uid is the input item's own "uid" key.
			displayOptions: { show: { '/inputData': ['define'] } },
			description:
				'UID to give the task. Leave empty for one derived from the execution, the node and the item, so that a retry within the same execution (Retry On Fail) finds the task it already created instead of making a second one.',
		},
	]),
]);

/**
 * Every create carries a client-chosen uid and is written with PUT, so a retried request cannot duplicate the task.
 * The transport refuses a uid that is already taken (Create never changes an existing task).
 * Parameters that hold no expression are read once per execution (parametersReadOnce).
 */
export function writeFor(this: IExecuteFunctions): (itemIndex: number) => ItemWrite {
	const ctx = parametersReadOnce(this);
	const defaultUid = createdUids(this, 'create');
	const readTask = taskInputReader(ctx, 'create');
	return (itemIndex) => {
		const { uid, fields } = readTask(itemIndex);
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const body = { ...readTaskProperties(ctx, itemIndex, additional), fields };
		return { mode: 'create', uid: uid ?? defaultUid(itemIndex), body };
	};
}
