import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { expandProperty, returnAllAndLimit, showFor, simplifyProperty } from '../shared/descriptions';
import { checkExpand, expandQuery, maxResults, PAGE_SIZE } from '../shared/read';
import { simplifyTask } from '../shared/simplify';
import { taskFilterOptions, taskListQuery } from '../shared/taskFilters';
import { pick, TASK_EXPAND } from './get';

export const description: INodeProperties[] = [
	...returnAllAndLimit('task', 'getAll'),
	simplifyProperty('task', 'getAll'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: showFor('task', 'getAll'),
		options: ([
			...taskFilterOptions,
			{
				displayName: 'Search',
				name: 'search',
				type: 'string',
				default: '',
				description: 'Full-text search. The service searches at most 10 × the page size of tasks.',
			},
			{
				displayName: 'Updated After',
				name: 'updated_at_after',
				type: 'dateTime',
				default: '',
				description: 'Only tasks updated after this time (query parameter updated_at_after)',
			},
		] as INodeProperties[]).sort((a, b) => a.displayName.localeCompare(b.displayName)),
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: showFor('task', 'getAll'),
		options: [expandProperty(TASK_EXPAND)],
	},
];

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const max = maxResults(this, itemIndex);
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand, TASK_EXPAND);
	const simplify = this.getNodeParameter('simplify', itemIndex, true) as boolean;
	const qs: IDataObject = { ...taskListQuery(this.getNode(), filters), ...expandQuery(expand) };
	if (filters.search) qs.search = filters.search;
	if (filters.updated_at_after) qs.updated_at_after = new Date(String(filters.updated_at_after)).toISOString();
	const tasks = await client.list({ method: 'GET', path: '/tasks', qs, itemIndex }, PAGE_SIZE, max);
	return simplify ? tasks.map((task) => ({ ...simplifyTask(task), ...pick(task, expand) })) : tasks;
}
