import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { expandOptions, forOperation, simplifyProperty, taskLocator } from '../shared/descriptions';
import { readBoolean, taskUid } from '../../../shared/parameters';
import { checkExpand, expandQuery, pick, simplifyTask } from '../shared/read';
import { TASK_EXPAND } from '../../../shared/tasks/fields';

export const description = forOperation('task', 'get', [
	taskLocator(),
	simplifyProperty(),
	expandOptions(TASK_EXPAND),
]);

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const uid = taskUid(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand, TASK_EXPAND);
	const simplify = readBoolean(
		this,
		itemIndex,
		'Simplify',
		this.getNodeParameter('simplify', itemIndex, true),
		true,
	);
	const task = await client.request<IDataObject>({
		method: 'GET',
		path: `/tasks/${uid}`,
		qs: expandQuery(expand),
		itemIndex,
	});
	return [simplify ? { ...simplifyTask(task), ...pick(task, expand) } : task];
}
