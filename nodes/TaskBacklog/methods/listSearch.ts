import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { BacklogClient } from '../../shared/transport/client';
import type { Page } from '../../shared/transport/client';

/** "From List" of the task locator: one page of tasks, searched by the service, newest cursor kept for "more". */
export async function searchTasks(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const client = new BacklogClient(this);
	const qs: IDataObject = { limit: 50 };
	if (filter) qs.search = filter;
	if (paginationToken) qs.cursor = paginationToken;
	let page: Page;
	try {
		// The titles are shown in the editor: never with the token, should the service echo it.
		page = await client.redactOutput(
			await client.request<Page>({ method: 'GET', path: '/tasks', qs }),
		);
	} finally {
		// Its one request is over: its hold on the token's rate limiter ends.
		client.done();
	}
	return {
		results: (page.items ?? []).map((task) => {
			const fields = (task.fields ?? {}) as IDataObject;
			return {
				name: `${String(fields.title ?? task.uid)} (${String(task.status ?? '')})`,
				value: String(task.uid),
				url: typeof fields.url === 'string' ? fields.url : undefined,
			};
		}),
		paginationToken: page.meta?.next_cursor || undefined,
	};
}
