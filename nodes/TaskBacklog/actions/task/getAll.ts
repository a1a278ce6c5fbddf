import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { listTasks } from '../../../shared/tasks/listTasks';
import { queryTasks } from '../../../shared/tasks/queryTasks';
import { invalidParameter, readBoolean } from '../../../shared/parameters';
import {
	expandOptions,
	forOperation,
	returnAllAndLimit,
	simplifyProperty,
} from '../shared/descriptions';
import {
	checkExpand,
	expandQuery,
	maxResults,
	PAGE_SIZE,
	pick,
	simplifyTask,
} from '../shared/read';
import { TASK_EXPAND } from '../../../shared/tasks/fields';
import {
	checkFilters,
	customFieldQuery,
	labelsOf,
	needsTaskQuery,
	taskFilterOptions,
	taskMatcher,
	taskQueryCondition,
} from '../../../shared/tasks/filters';

/** Get Many's filters: the shared task filters, Search and Updated After. */
const filterOptions = (
	[
		...taskFilterOptions,
		{
			displayName: 'Search',
			name: 'search',
			type: 'string',
			default: '',
			description:
				'Full-text search (query parameter search; the spec does not name it, so when nothing is found the node checks that the service searches at all). The service searches at most 10 × the page size of tasks. With Search, the other filters except custom fields are applied by the node.',
		},
		{
			displayName: 'Updated After',
			name: 'updated_at_after',
			type: 'dateTime',
			default: '',
			description:
				'Only tasks updated after this time (a condition on updated_at of POST /tasks/query)',
		},
	] as INodeProperties[]
).sort((a, b) => a.displayName.localeCompare(b.displayName));

export const description = forOperation('task', 'getAll', [
	...returnAllAndLimit(),
	simplifyProperty(),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: filterOptions,
	},
	expandOptions(TASK_EXPAND),
]);

/**
 * GET /tasks for what the spec documents on it (custom field filters, search, paging); POST /tasks/query for status,
 * assignee, archived and time, which GET /tasks has no documented parameter for (a server may read an unknown
 * parameter as a custom field filter and return nothing). Either way the node checks each task against the filters.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const max = maxResults(this, itemIndex) ?? Infinity;
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	checkFilters(this.getNode(), filters, labelsOf(filterOptions), itemIndex);
	// Read as a boolean once, here: the filter helpers check `archived === true`.
	if ('archived' in filters)
		filters.archived = readBoolean(this, itemIndex, 'Filters > Archived', filters.archived, false);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand, TASK_EXPAND);
	const simplify = readBoolean(
		this,
		itemIndex,
		'Simplify',
		this.getNodeParameter('simplify', itemIndex, true),
		true,
	);
	const updatedAfter = filters.updated_at_after
		? new Date(String(filters.updated_at_after))
		: undefined;
	if (updatedAfter && Number.isNaN(updatedAfter.getTime())) {
		throw invalidParameter(
			this,
			itemIndex,
			'Updated After',
			`is not a date and time: ${JSON.stringify(filters.updated_at_after)}`,
		);
	}
	const matches = taskMatcher(filters);
	const newEnough = (task: IDataObject) =>
		!updatedAfter || Date.parse(String(task.updated_at)) > updatedAfter.getTime();
	const wanted = (task: IDataObject) => matches(task) && newEnough(task);
	let tasks: IDataObject[];
	if (!filters.search && (needsTaskQuery(filters) || updatedAfter)) {
		const extra = updatedAfter
			? [{ field: 'updated_at', operator: '>', value: updatedAfter.toISOString() }]
			: [];
		const body: IDataObject = {
			condition: taskQueryCondition(this.getNode(), filters, undefined, extra),
		};
		if (expand.length > 0) body.expand = expand;
		const read = (maxItems: number, stopAfter?: (page: IDataObject[]) => boolean) =>
			queryTasks(client, {
				body,
				archived: filters.archived === true,
				maxItems,
				stopAfter,
				itemIndex,
			});
		let returned = await read(max);
		tasks = returned.filter(wanted);
		if (tasks.length < max && returned.length >= max) {
			// The Limit counts tasks that match, and the server returned some that do not (it left a condition out): read
			// on until as many match, rather than return fewer than exist.
			let matched = 0;
			returned = await read(Infinity, (page) => (matched += page.filter(wanted).length) >= max);
			tasks = returned.filter(wanted);
		}
		tasks = tasks.slice(0, max);
	} else {
		const qs: IDataObject = {
			...customFieldQuery(this.getNode(), filters),
			...expandQuery(expand),
		};
		if (filters.search) qs.search = filters.search;
		if (filters.archived === true) qs.archived = true;
		if (max === Infinity) {
			// Return All: through whichever endpoint carries the most tasks per request (a search only GET /tasks has).
			const condition = taskQueryCondition(
				this.getNode(),
				{ customFields: filters.customFields },
				[],
			);
			const query: IDataObject = Object.keys(condition).length > 0 ? { condition } : {};
			if (expand.length > 0) query.expand = expand;
			const listing = { qs, query: filters.search ? undefined : query, itemIndex };
			tasks = (await listTasks(client, listing)).filter(wanted);
		} else {
			tasks = [];
			// Read until Limit tasks match, not until Limit were returned: a server may leave a filter out (or list
			// archived tasks too), and the tasks our side then drops are not counted. A search keeps the full page size:
			// the service searches at most 10 × the page size.
			for await (const page of client.pages(
				{ method: 'GET', path: '/tasks', qs, itemIndex },
				filters.search ? PAGE_SIZE : Math.min(PAGE_SIZE, max),
			)) {
				tasks.push(...page.filter(wanted));
				if (tasks.length >= max) break;
			}
			tasks = tasks.slice(0, max);
		}
		if (filters.search && tasks.length === 0)
			await checkSearchUnderstood(this, client, qs, itemIndex);
	}
	return simplify ? tasks.map((task) => ({ ...simplifyTask(task), ...pick(task, expand) })) : tasks;
}

/**
 * The spec names no search parameter, and a server may read a parameter it does not know as a custom-field filter
 * (spec 4.2 rule 3), which answers every search with nothing. So when a search found nothing, the node searches for
 * the title of a task the same listing holds: if that finds nothing either, the search was not understood, and the
 * node says so instead of returning an empty list as if nothing matched. Two requests, only when a search is empty.
 */
async function checkSearchUnderstood(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	qs: IDataObject,
	itemIndex: number,
) {
	const { search, ...listing } = qs;
	const [task] = await client.list({ method: 'GET', path: '/tasks', qs: listing, itemIndex }, 1, 1);
	const title = ((task?.fields ?? {}) as IDataObject).title;
	if (typeof title !== 'string' || title.trim() === '') return; // nothing to search in, or nothing to search for
	const found = await client.list(
		{ method: 'GET', path: '/tasks', qs: { ...listing, search: title }, itemIndex },
		PAGE_SIZE,
		PAGE_SIZE,
	);
	if (found.length > 0) return;
	throw new NodeOperationError(
		ctx.getNode(),
		`Search for ${JSON.stringify(search)} found nothing, and the service does not seem to search: a search for the title of task ${String(task.uid)} ("${title}") found nothing either`,
		{
			itemIndex,
			description:
				'The spec does not name the service\'s search parameter; the node sends "search", which this service reads as something else (likely a filter on a custom field named search). Filter with Custom Fields, or use the Query operation.',
		},
	);
}
