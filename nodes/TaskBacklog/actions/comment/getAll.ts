import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import {
	expandOptions,
	forOperation,
	returnAllAndLimit,
	taskLocator,
} from '../shared/descriptions';
import { taskUid } from '../../../shared/parameters';
import { checkExpand, expandQuery, maxResults, PAGE_SIZE } from '../shared/read';
import { COMMENT_EXPAND } from './shared';

export const description = forOperation('comment', 'getAll', [
	taskLocator(),
	...returnAllAndLimit(),
	expandOptions(COMMENT_EXPAND),
]);

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const task = taskUid(this, itemIndex);
	const max = maxResults(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const qs = expandQuery(checkExpand(this, itemIndex, options.expand, COMMENT_EXPAND));
	return await client.list(
		{ method: 'GET', path: `/tasks/${task}/comments`, qs, itemIndex },
		PAGE_SIZE,
		max,
	);
}
