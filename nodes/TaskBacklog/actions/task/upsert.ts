import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { DEFAULT_EXTERNAL_ID_NAMESPACE } from '../../transport/uuid';
import { showFor } from '../shared/descriptions';
import { externalIdProperties, readIdentity } from '../shared/externalId';
import { customFieldsProperties, readFields, readTaskProperties, requireTitle, taskPropertiesCollection } from '../shared/taskBody';
import { writeEachItem } from '../shared/writes';

export const batched = true;

const show = { resource: ['task'], operation: ['upsert'] };

export const description: INodeProperties[] = [
	...externalIdProperties('upsert'),
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		required: true,
		default: '',
		displayOptions: showFor('task', 'upsert'),
		description: 'Human-readable title of the task (fields.title)',
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		displayOptions: showFor('task', 'upsert'),
		description: 'URL the operator client opens with the task',
	},
	...customFieldsProperties(show),
	taskPropertiesCollection('additionalFields', 'Additional Fields', show),
];

/**
 * The task ends with the given values whether it existed or not. Its uid is either given or derived from the
 * caller's ticket id (UUID v5), so running the workflow twice never makes two tasks.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	return await writeEachItem(this, client, itemIndexes, (itemIndex) => {
		const { uid, externalFields } = readIdentity(this, itemIndex, DEFAULT_EXTERNAL_ID_NAMESPACE);
		const title = requireTitle(this, itemIndex, this.getNodeParameter('title', itemIndex));
		const url = this.getNodeParameter('url', itemIndex, '') as string;
		const additional = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const fields = { ...readFields(this, itemIndex, { title, url }), ...externalFields };
		return { mode: 'upsert', uid, body: { ...readTaskProperties(this, itemIndex, additional), fields } };
	});
}
