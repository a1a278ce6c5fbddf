import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { showFor, taskLocator } from '../shared/descriptions';
import { invalidParameter, taskUid } from '../shared/parameters';
import { customFieldsProperties, readFields, readTaskProperties, requireTitle, taskPropertiesCollection } from '../shared/taskBody';
import { writeEachItem } from '../shared/writes';

export const batched = true;

const show = { resource: ['task'], operation: ['update'] };

export const description: INodeProperties[] = [
	taskLocator('update'),
	taskPropertiesCollection('updateFields', 'Update Fields', show, [
		{ displayName: 'Title', name: 'title', type: 'string', default: '', description: 'New title (fields.title)' },
		{ displayName: 'URL', name: 'url', type: 'string', default: '', description: 'New URL the operator client opens with the task' },
	]),
	...customFieldsProperties(show),
	{
		displayName: 'Keep Other Custom Fields',
		name: 'mergeFields',
		type: 'boolean',
		default: false,
		displayOptions: showFor('task', 'update'),
		description:
			'Whether to read the task first and send its other custom fields along, for servers that replace the whole fields object on update (costs one more request per item)',
	},
];

/** PATCH with only the given keys. */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	return await writeEachItem(this, client, itemIndexes, async (itemIndex) => {
		const uid = taskUid(this, itemIndex);
		const { title, url, ...properties } = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
		const body = readTaskProperties(this, itemIndex, properties);
		const given = { title: title === undefined ? undefined : requireTitle(this, itemIndex, title), url };
		const fields = readFields(this, itemIndex, given);
		if (Object.keys(fields).length > 0) body.fields = fields;
		if (Object.keys(body).length === 0) {
			throw invalidParameter(this, itemIndex, 'Update Fields', 'are empty: add at least one field to change');
		}
		if (body.fields && this.getNodeParameter('mergeFields', itemIndex, false)) {
			const current = await client.request<IDataObject>({ method: 'GET', path: `/tasks/${uid}`, itemIndex });
			body.fields = { ...((current.fields ?? {}) as IDataObject), ...fields };
		}
		return { mode: 'patch', uid, body };
	});
}
