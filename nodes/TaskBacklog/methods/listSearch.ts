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
	// The titles are shown in the editor: never with the token, should the service echo it.
	const page = await client.redactOutput(
		await client.request<Page>({ method: 'GET', path: '/tasks', qs }),
	);
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
