import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { forOperation, taskLocator } from '../shared/descriptions';
import { invalidParameter, taskUid } from '../../../shared/parameters';
import {
	customFieldsProperties,
	readFields,
	readTaskProperties,
	requireTitle,
	taskPropertiesCollection,
} from '../shared/taskInput';
import type { ItemWrite } from '../types';

export const batched = true;

export const description = forOperation('task', 'update', [
	taskLocator(),
	taskPropertiesCollection('updateFields', 'Update Fields', [
		{
			displayName: 'Title',
			name: 'title',
			type: 'string',
			default: '',
			description: 'New title (fields.title)',
		},
		{
			displayName: 'URL',
			name: 'url',
			type: 'string',
			default: '',
			description: 'New URL the operator client opens with the task',
		},
	]),
	...customFieldsProperties(),
	{
		displayName: 'Keep Other Custom Fields',
		name: 'mergeFields',
		type: 'boolean',
		default: false,
		description:
			'Whether to keep the other custom fields. They are now always kept: the node reads the tasks in bulk before writing and sends their other custom fields along, whichever way the server treats fields. This option stays for saved workflows and no longer changes anything.',
		// Version 1 only: workflows saved with it may hold the option; as it changes nothing, later versions omit it.
		displayOptions: { show: { '@version': [1] } },
	},
]);

/** PATCH with only the given keys; the transport keeps the task's other custom fields (read in bulk first). */
export function writeFor(this: IExecuteFunctions) {
	return (itemIndex: number): ItemWrite => {
		const uid = taskUid(this, itemIndex);
		const { title, url, ...properties } = this.getNodeParameter(
			'updateFields',
			itemIndex,
			{},
		) as IDataObject;
		const body = readTaskProperties(this, itemIndex, properties);
		const given = {
			title: title === undefined ? undefined : requireTitle(this, itemIndex, title),
			url,
		};
		const fields = readFields(this, itemIndex, given);
		if (Object.keys(fields).length > 0) body.fields = fields;
		if (Object.keys(body).length === 0) {
			throw invalidParameter(
				this,
				itemIndex,
				'Update Fields',
				'are empty: add at least one field to change',
			);
		}
		return { mode: 'patch', uid, body };
	};
}
