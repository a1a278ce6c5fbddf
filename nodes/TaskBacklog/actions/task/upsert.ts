import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { parametersReadOnce } from '../../../shared/parameters';
import { forOperation } from '../shared/descriptions';
import { externalIdProperties } from '../shared/externalId';
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

export const description = forOperation('task', 'upsert', [
	inputDataProperty(),
	...autoMapProperties('upsert'),
	...defineOnly([...externalIdProperties(), ...taskContentProperties()]),
	taskPropertiesCollection('additionalFields', 'Additional Fields'),
]);

/**
 * The task ends with the given values whether it existed or not. Its uid is either given or derived from the
 * caller's ticket id (UUID v5), so running the workflow twice never makes two tasks.
 * Parameters that hold no expression are read once per execution (parametersReadOnce).
 */
export function writeFor(this: IExecuteFunctions): (itemIndex: number) => ItemWrite {
	const ctx = parametersReadOnce(this);
	const readTask = taskInputReader(ctx, 'upsert');
	return (itemIndex) => {
		const { uid, fields } = readTask(itemIndex);
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		return {
			mode: 'upsert',
			uid: uid!,
			body: { ...readTaskProperties(ctx, itemIndex, additional), fields },
		};
	};
}
