import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, randomUid, uuidV5 } from '../../transport/uuid';
import { showFor } from '../shared/descriptions';
import { requireUuid } from '../shared/parameters';
import { customFieldsProperties, readFields, readTaskProperties, requireTitle, taskPropertiesCollection } from '../shared/taskBody';
import { writeEachItem } from '../shared/writes';

export const batched = true;

const show = { resource: ['task'], operation: ['create'] };

/** UUID v5 of "n8n-nodes-task-backlog:create" in the package's namespace: keeps create uids apart from external-id ones. */
const CREATE_UID_NAMESPACE = uuidV5('n8n-nodes-task-backlog:create', DEFAULT_EXTERNAL_ID_NAMESPACE);

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
			description:
				'UID to give the task. Leave empty for one derived from the execution, the node and the item, so that a retry within the same execution (Retry On Fail) finds the task it already created instead of making a second one.',
		},
	]),
];

/**
 * The uid of a create without one: the same for a repeat of the same execution's item (n8n's Retry On Fail, or a
 * retried request), different for every other run. Random only when n8n gives no execution id.
 */
function defaultUid(ctx: IExecuteFunctions, itemIndex: number): string {
	const executionId = ctx.getExecutionId?.();
	if (!executionId) return randomUid();
	return uuidV5(`create:${executionId}:${ctx.getNode().id ?? ctx.getNode().name}:${itemIndex}`, CREATE_UID_NAMESPACE);
}

/**
 * Every create carries a client-chosen uid and is written with PUT, so a retried request cannot duplicate the task.
 * The transport refuses a uid that is already taken (Create never changes an existing task).
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	return await writeEachItem(this, client, itemIndexes, (itemIndex) => {
		const title = requireTitle(this, itemIndex, this.getNodeParameter('title', itemIndex));
		const url = this.getNodeParameter('url', itemIndex, '') as string;
		const additional = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const uid = additional.uid ? requireUuid(this, itemIndex, 'UID', additional.uid) : defaultUid(this, itemIndex);
		const fields = readFields(this, itemIndex, { title, url });
		return { mode: 'create', uid, body: { ...readTaskProperties(this, itemIndex, additional), fields } };
	});
}
