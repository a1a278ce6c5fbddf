import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE } from '../../../shared/transport/uuid';
import { forOperation } from '../shared/descriptions';
import { externalIdProperties, readIdentity } from '../shared/externalId';
import { autoMapProperties, defineOnly, inputDataProperty, mappedUid, mapItem, readAutoMapSettings, readInputData } from '../shared/inputData';
import { parametersReadOnce } from '../shared/readOnce';
import { readFields, readTaskProperties, requireTitle, taskContentProperties, taskPropertiesCollection } from '../shared/taskBody';
import type { ItemWrite } from '../types';

export const batched = true;


export const description = forOperation('task', 'upsert', [
	inputDataProperty(),
	...autoMapProperties('upsert'),
	...defineOnly([
		...externalIdProperties(),
		...taskContentProperties(),
	]),
	taskPropertiesCollection('additionalFields', 'Additional Fields'),
]);

/**
 * The task ends with the given values whether it existed or not. Its uid is either given or derived from the
 * caller's ticket id (UUID v5), so running the workflow twice never makes two tasks.
 * Parameters that hold no expression are read once per execution (parametersReadOnce).
 */
export function writeFor(this: IExecuteFunctions): (itemIndex: number) => ItemWrite {
	const ctx = parametersReadOnce(this);
	if (readInputData(this) === 'autoMap') {
		const settings = readAutoMapSettings(this);
		const items = this.getInputData();
		return (itemIndex) => {
			const item = mapItem(this, settings, itemIndex, items[itemIndex].json);
			const uid = mappedUid(this, settings, itemIndex, item);
			if (item.externalId !== undefined) item.fields[settings.externalIdField] = item.externalId;
			const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
			return { mode: 'upsert', uid, body: { ...readTaskProperties(ctx, itemIndex, additional), fields: item.fields } };
		};
	}
	return (itemIndex) => {
		const { uid, externalFields } = readIdentity(ctx, itemIndex, DEFAULT_EXTERNAL_ID_NAMESPACE);
		const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
		const url = ctx.getNodeParameter('url', itemIndex, '') as string;
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const fields = { ...readFields(ctx, itemIndex, { title, url }), ...externalFields };
		return { mode: 'upsert', uid, body: { ...readTaskProperties(ctx, itemIndex, additional), fields } };
	};
}
