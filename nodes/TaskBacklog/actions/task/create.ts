import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { randomUid } from '../../transport/uuid';
import { showFor } from '../shared/descriptions';
import { requireUuid } from '../shared/parameters';
import { customFieldsProperties, readFields, readTaskProperties, requireTitle, taskPropertiesCollection } from '../shared/taskBody';
import { writeEachItem } from '../shared/writes';

export const batched = true;

const show = { resource: ['task'], operation: ['create'] };

export const description: INodeProperties[] = [
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		required: true,
		default: '',
		displayOptions: showFor('task', 'create'),
		description: 'Human-readable title of the task (fields.title)',
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		displayOptions: showFor('task', 'create'),
		description: 'URL the operator client opens with the task',
	},
	...customFieldsProperties(show),
	taskPropertiesCollection('additionalFields', 'Additional Fields', show, [
		{
			displayName: 'UID',
			name: 'uid',
			type: 'string',
			default: '',
			description: 'UID to give the task. Leave empty for a new random one; either way a retry cannot create a second task.',
		},
	]),
];

/** Every create carries a client-chosen uid and is written with PUT, so a retried request cannot duplicate the task. */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	return await writeEachItem(this, client, itemIndexes, (itemIndex) => {
		const title = requireTitle(this, itemIndex, this.getNodeParameter('title', itemIndex));
		const url = this.getNodeParameter('url', itemIndex, '') as string;
		const additional = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const uid = additional.uid ? requireUuid(this, itemIndex, 'UID', additional.uid) : randomUid();
		const fields = readFields(this, itemIndex, { title, url });
		return { mode: 'create', uid, body: { ...readTaskProperties(this, itemIndex, additional), fields } };
	});
}
