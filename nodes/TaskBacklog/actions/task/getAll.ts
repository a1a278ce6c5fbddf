import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { expandProperty, returnAllAndLimit, showFor, simplifyProperty } from '../shared/descriptions';
import { invalidParameter } from '../shared/parameters';
import { checkExpand, expandQuery, maxResults, PAGE_SIZE } from '../shared/read';
import { simplifyTask } from '../shared/simplify';
import { statusOptions } from '../shared/taskBody';
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
		options: [
			{
				displayName: 'Archived',
				name: 'archived',
				type: 'boolean',
				default: false,
				description: 'Whether to list archived tasks instead of the others',
			},
			{
				displayName: 'Assignee UID',
				name: 'assignee_uid',
				type: 'string',
				default: '',
				description: 'Only tasks assigned to this user (query parameter assignee_uid)',
			},
			{
				displayName: 'Custom Fields',
				name: 'customFields',
				type: 'fixedCollection',
				typeOptions: { multipleValues: true },
				placeholder: 'Add Custom Field Filter',
				default: {},
				description: 'Only tasks whose custom field equals the value',
				options: [
					{
						displayName: 'Field',
						name: 'field',
						values: [
							{ displayName: 'Name', name: 'name', type: 'string', default: '', placeholder: 'ticket_id' },
							{ displayName: 'Value', name: 'value', type: 'string', default: '' },
						],
					},
				],
			},
			{
				displayName: 'Search',
				name: 'search',
				type: 'string',
				default: '',
				description: 'Full-text search. The service searches at most 10 × the page size of tasks.',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: statusOptions,
				default: 'TODO',
			},
			{
				displayName: 'Updated After',
				name: 'updated_at_after',
				type: 'dateTime',
				default: '',
				description: 'Only tasks updated after this time (query parameter updated_at_after)',
			},
		],
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

/** Query parameters of GET /tasks; custom fields filter by equality under their own names (spec 4.2 rule 3). */
function listQuery(ctx: IExecuteFunctions, itemIndex: number, filters: IDataObject): IDataObject {
	const qs: IDataObject = {};
	const rows = ((filters.customFields as IDataObject)?.field ?? []) as Array<{ name: string; value: string }>;
	for (const { name, value } of rows) {
		if (!String(name ?? '').trim()) throw invalidParameter(ctx, itemIndex, 'Filters > Custom Fields', 'has a row without a name');
		qs[name.trim()] = value;
	}
	for (const key of ['status', 'assignee_uid', 'search'] as const) {
		if (filters[key]) qs[key] = filters[key];
	}
	if (filters.archived) qs.archived = true;
	if (filters.updated_at_after) qs.updated_at_after = new Date(String(filters.updated_at_after)).toISOString();
	return qs;
}

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const max = maxResults(this, itemIndex);
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand, TASK_EXPAND);
	const simplify = this.getNodeParameter('simplify', itemIndex, true) as boolean;
	const qs = { ...listQuery(this, itemIndex, filters), ...expandQuery(expand) };
	const tasks = await client.list({ method: 'GET', path: '/tasks', qs, itemIndex }, PAGE_SIZE, max);
	return simplify ? tasks.map((task) => ({ ...simplifyTask(task), ...pick(task, expand) })) : tasks;
}
