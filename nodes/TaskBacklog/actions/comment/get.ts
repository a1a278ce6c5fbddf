import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { expandOptions, forOperation, taskLocator } from '../shared/descriptions';
import { requireUuid, taskUid } from '../../../shared/parameters';
import { checkExpand, expandQuery } from '../shared/read';
import { COMMENT_EXPAND, commentUidProperty } from './shared';

export const description = forOperation('comment', 'get', [
	taskLocator(),
	commentUidProperty(),
	expandOptions(COMMENT_EXPAND),
]);

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const task = taskUid(this, itemIndex);
	const uid = requireUuid(
		this,
		itemIndex,
		'Comment UID',
		this.getNodeParameter('commentUid', itemIndex),
	);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const qs = expandQuery(checkExpand(this, itemIndex, options.expand, COMMENT_EXPAND));
	return [
		await client.request<IDataObject>({
			method: 'GET',
			path: `/tasks/${task}/comments/${uid}`,
			qs,
			itemIndex,
		}),
	];
}
