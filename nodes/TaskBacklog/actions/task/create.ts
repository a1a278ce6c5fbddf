import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, randomUid, uuidV5 } from '../../../shared/tasks/identity';
import { forOperation } from '../shared/descriptions';
import { autoMapProperties, defineOnly, inputDataProperty } from '../shared/inputData';
import { parametersReadOnce } from '../shared/readOnce';
import {
	readTaskProperties,
	taskContentProperties,
	taskPropertiesCollection,
} from '../shared/taskBody';
import { taskInputReader } from '../shared/taskInput';
import type { ItemWrite } from '../types';

export const batched = true;

/** UUID v5 of "n8n-nodes-task-backlog:create" in the package's namespace: keeps create uids apart from external-id ones. */
const CREATE_UID_NAMESPACE = uuidV5('n8n-nodes-task-backlog:create', DEFAULT_EXTERNAL_ID_NAMESPACE);

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
 * The uid of a create without one: the same for a repeat of the same execution's run of the node and item (n8n's
 * Retry On Fail runs the node again with the same run index, and a retried request carries the same uid), different
 * for every other run: Loop Over Items runs the node once per batch, with run index 0, 1, 2 ... Random only when
 * n8n gives no execution id. The execution, the node and the run are read once; only the item index varies.
 */
function defaultUids(ctx: IExecuteFunctions): (itemIndex: number) => string {
	const executionId = ctx.getExecutionId?.();
	if (!executionId) return () => randomUid();
	const node = ctx.getNode();
	const runIndex = Number(ctx.getWorkflowDataProxy(0).$runIndex) || 0;
	const prefix = `create:${executionId}:${node.id ?? node.name}:${runIndex}:`;
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
	const readTask = taskInputReader(ctx, 'create');
	return (itemIndex) => {
		const { uid, fields } = readTask(itemIndex);
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const body = { ...readTaskProperties(ctx, itemIndex, additional), fields };
		return { mode: 'create', uid: uid ?? defaultUid(itemIndex), body };
	};
}
