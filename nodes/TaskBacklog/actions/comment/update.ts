import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { forOperation, taskLocator } from '../shared/descriptions';
import { booleanValue, invalidParameter, requireUuid, taskUid } from '../../../shared/parameters';
import { commentUidProperty, readCommentBody } from './shared';

export const description = forOperation('comment', 'update', [
	taskLocator(),
	commentUidProperty(),
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		description: 'New text of the comment; its blocks are rebuilt from it unless given',
	},
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Archived',
				name: 'archived',
				type: 'boolean',
				default: false,
				description: 'Whether the comment is archived',
			},
			{
				displayName: 'Blocks (JSON)',
				name: 'blocks',
				type: 'json',
				default: '[]',
				description: 'Rich-text blocks (spec 2.4)',
			},
		],
	},
]);

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const task = taskUid(this, itemIndex);
	const uid = requireUuid(
		this,
		itemIndex,
		'Comment UID',
		this.getNodeParameter('commentUid', itemIndex),
	);
	const text = String(this.getNodeParameter('text', itemIndex, ''));
	if (!text.trim()) throw invalidParameter(this, itemIndex, 'Text', 'is empty');
	const updateFields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const body = readCommentBody(this, itemIndex, text, updateFields);
	// A boolean only: the service refuses text, so converting an expression's "true" would start archiving.
	if ('archived' in updateFields)
		body.archived = booleanValue(this, itemIndex, 'Archived', updateFields.archived);
	return [
		await client.request<IDataObject>({
			method: 'PATCH',
			path: `/tasks/${task}/comments/${uid}`,
			body,
			itemIndex,
		}),
	];
}
