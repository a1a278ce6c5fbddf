import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, randomUid, uuidV5 } from '../../../shared/transport/uuid';
import { forOperation } from '../shared/descriptions';
import { autoMapProperties, defineOnly, inputDataProperty, mapItem, readAutoMapSettings, readInputData } from '../shared/inputData';
import { requireUuid } from '../shared/parameters';
import { parametersReadOnce } from '../shared/readOnce';
import { readFields, readTaskProperties, requireTitle, taskContentProperties, taskPropertiesCollection } from '../shared/taskBody';
import type { ItemWrite } from '../types';

export const batched = true;


/** UUID v5 of "n8n-nodes-task-backlog:create" in the package's namespace: keeps create uids apart from external-id ones. */
const CREATE_UID_NAMESPACE = uuidV5('n8n-nodes-task-backlog:create', DEFAULT_EXTERNAL_ID_NAMESPACE);

export const description = forOperation('task', 'create', [
	inputDataProperty(),
	...autoMapProperties('create'),
	...defineOnly([
		...taskContentProperties(),
	]),
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
 * The uid of a create without one: the same for a repeat of the same execution's item (n8n's Retry On Fail, or a
 * retried request), different for every other run. Random only when n8n gives no execution id. The execution and
 * the node are read once; only the item index varies.
 */
function defaultUids(ctx: IExecuteFunctions): (itemIndex: number) => string {
	const executionId = ctx.getExecutionId?.();
	if (!executionId) return () => randomUid();
	const node = ctx.getNode();
	const prefix = `create:${executionId}:${node.id ?? node.name}:`;
	return (itemIndex) => uuidV5(`${prefix}${itemIndex}`, CREATE_UID_NAMESPACE);
}

/**
 * Every create carries a client-chosen uid and is written with PUT, so a retried request cannot duplicate the task.
 * The transport refuses a uid that is already taken (Create never changes an existing task).
 * Parameters that hold no expression are read once per execution (parametersReadOnce).
 */
export function writeFor(this: IExecuteFunctions): (itemIndex: number) => ItemWrite {
	const ctx = parametersReadOnce(this);
	const defaultUid = defaultUids(this);
	if (readInputData(this) === 'autoMap') {
		const settings = readAutoMapSettings(this);
		const items = this.getInputData();
		return (itemIndex) => {
			const item = mapItem(this, settings, itemIndex, items[itemIndex].json);
			if (item.externalId !== undefined) item.fields[settings.externalIdField] = item.externalId;
			const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
			const uid = item.uid ?? defaultUid(itemIndex);
			return { mode: 'create', uid, body: { ...readTaskProperties(ctx, itemIndex, additional), fields: item.fields } };
		};
	}
	return (itemIndex) => {
		const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
		const url = ctx.getNodeParameter('url', itemIndex, '') as string;
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const uid = additional.uid ? requireUuid(ctx, itemIndex, 'UID', additional.uid) : defaultUid(itemIndex);
		const fields = readFields(ctx, itemIndex, { title, url });
		return { mode: 'create', uid, body: { ...readTaskProperties(ctx, itemIndex, additional), fields } };
	};
}
