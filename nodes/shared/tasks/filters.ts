import type { IDataObject, INode, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isExpression } from '../parameters';
import { customFieldRows, statusOptions } from './fields';

/** Filters of GET /tasks shared by Get Many and the Poll Trigger. */
export const taskFilterOptions: INodeProperties[] = [
	{
		displayName: 'Archived',
		name: 'archived',
		type: 'boolean',
		default: false,
		description: 'Whether to look at archived tasks instead of the others',
	},
	{
		displayName: 'Assignee UID',
		name: 'assignee_uid',
		type: 'string',
		default: '',
		description: 'Only tasks assigned to this user (query parameter assignee_uid)',
	},
	customFieldRows({
		displayName: 'Custom Fields',
		name: 'customFields',
		placeholder: 'Add Custom Field Filter',
		description: 'Only tasks whose custom field equals the value',
	}),
	{
		displayName: 'Status',
		name: 'status',
		type: 'multiOptions',
		options: statusOptions,
		default: [],
		description: 'Only tasks in one of these states',
	},
];

/** The display name of each option, for messages. */
export const labelsOf = (options: INodeProperties[]): Record<string, string> =>
	Object.fromEntries(options.map((option) => [option.name, option.displayName]));

const isEmpty = (value: unknown) =>
	value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * Refuses a filter whose expression resolved to nothing (undefined, null, '' or whitespace), and a custom field filter
 * value that is not text, a number or a boolean, before any request: dropped, the filter would list every task (a
 * typo in `{{ $json.assignee }}` returns the whole backlog, and a Poll Trigger emits it); sent, "" or "[object Object]"
 * would list none. A filter left empty without an expression is no filter, as before. `labels` names the filters by
 * their display names; `itemIndex` is the item of Get Many (none for the Poll Trigger).
 */
export function checkFilters(
	node: INode,
	filters: IDataObject,
	labels: Record<string, string>,
	itemIndex?: number,
): void {
	const fail = (what: string, problem: string) =>
		new NodeOperationError(
			node,
			`${itemIndex === undefined ? '' : `Item ${itemIndex}: `}the filter ${what} ${problem}`,
			{
				itemIndex,
				description:
					'Fix the expression (a key typo resolves to nothing), or remove the filter to list every task.',
			},
		);
	for (const [key, value] of Object.entries(filters)) {
		if (key === 'customFields') continue;
		if (isExpression(node, ['filters', key]) && isEmpty(value))
			throw fail(`"${labels[key] ?? key}"`, 'is empty: its expression resolved to nothing');
	}
	const rows = ((filters.customFields as IDataObject)?.field ?? []) as IDataObject[];
	rows.forEach((row, index) => {
		const name = `Custom Fields "${String(row.name ?? '').trim()}"`;
		if (row.value !== null && typeof row.value === 'object')
			throw fail(name, `is not a text, number or boolean: ${JSON.stringify(row.value)}`);
		const expression = isExpression(node, ['filters', 'customFields', 'field', index, 'value']);
		if (row.value === undefined || row.value === null || (expression && isEmpty(row.value)))
			throw fail(name, 'is empty: its expression resolved to nothing');
	});
}

/** Query parameters our nodes set themselves; a custom field filter may not take their names. */
const RESERVED = new Set([
	'limit',
	'cursor',
	'status',
	'assignee_uid',
	'archived',
	'order_by',
	'created_at_after',
	'updated_at_after',
	'search',
	'expand',
]);

function customFieldFilters(filters: IDataObject): Array<{ name: string; value: string }> {
	const rows = ((filters.customFields as IDataObject)?.field ?? []) as Array<{
		name?: unknown;
		value?: unknown;
	}>;
	return rows.map((row) => ({
		name: String(row.name ?? '').trim(),
		value: String(row.value ?? ''),
	}));
}

function statusFilter(filters: IDataObject): string[] {
	const value = filters.status;
	return (Array.isArray(value) ? value : value ? [value] : []).map(String);
}

/**
 * GET /tasks parameters from the filters; custom fields filter by equality under their own names (spec 4.2 rule 3).
 * `statuses` overrides the Status filter (the Poll Trigger's Closed Task watches DONE tasks).
 */
export function taskListQuery(
	node: INode,
	filters: IDataObject,
	statuses = statusFilter(filters),
): IDataObject {
	const qs: IDataObject = {};
	for (const { name, value } of customFieldFilters(filters)) {
		if (!name) throw new NodeOperationError(node, 'A Custom Fields filter has no name');
		if (RESERVED.has(name)) {
			throw new NodeOperationError(
				node,
				`The Custom Fields filter "${name}" has the name of a query parameter`,
				{
					description: 'Filter on that property with the other filters instead.',
				},
			);
		}
		qs[name] = value;
	}
	if (statuses.length > 0) qs.status = statuses.length === 1 ? statuses[0] : statuses;
	const assignee = String(filters.assignee_uid ?? '').trim();
	if (assignee) qs.assignee_uid = assignee;
	if (filters.archived === true) qs.archived = true;
	return qs;
}

/** The same filters, checked on our side: a server may ignore any of the query parameters. */
export function taskMatcher(
	filters: IDataObject,
	statuses = statusFilter(filters),
): (task: IDataObject) => boolean {
	const archived = filters.archived === true;
	const assignee = String(filters.assignee_uid ?? '')
		.trim()
		.toLowerCase();
	const custom = customFieldFilters(filters);
	return (task) => {
		if (typeof task.archived === 'boolean' && task.archived !== archived) return false;
		if (statuses.length > 0 && !statuses.includes(String(task.status))) return false;
		if (assignee && String(task.assignee_uid ?? '').toLowerCase() !== assignee) return false;
		const fields = (task.fields ?? {}) as IDataObject;
		return custom.every(({ name, value }) => {
			const actual = fields[name];
			if (actual === undefined || actual === null) return false;
			return (typeof actual === 'object' ? JSON.stringify(actual) : String(actual)) === value;
		});
	};
}

/**
 * The values a custom field filter typed as text may be stored as: the service keeps each field's JSON type
 * (spec 2.3) and may compare types strictly, so "5" also looks for 5, and "true" for true.
 */
function storedForms(value: string): unknown[] {
	const forms: unknown[] = [value];
	const number = Number(value);
	if (value.trim() !== '' && Number.isFinite(number)) forms.push(number);
	if (value === 'true' || value === 'false') forms.push(value === 'true');
	return forms;
}

/** Whether the filters need more than GET /tasks can be relied on for (spec 4.2 rule 3 names only custom fields). */
export function needsTaskQuery(filters: IDataObject, statuses = statusFilter(filters)): boolean {
	return (
		statuses.length > 0 ||
		String(filters.assignee_uid ?? '').trim() !== '' ||
		filters.archived === true
	);
}

/**
 * The same filters as a POST /tasks/query condition (spec 4.3), for what GET /tasks has no documented parameter
 * for: status, assignee, a time. `extra` conditions (e.g. on updated_at) are added with AND.
 */
export function taskQueryCondition(
	node: INode,
	filters: IDataObject,
	statuses = statusFilter(filters),
	extra: IDataObject[] = [],
): IDataObject {
	const conditions: IDataObject[] = [];
	for (const { name, value } of customFieldFilters(filters)) {
		if (!name) throw new NodeOperationError(node, 'A Custom Fields filter has no name');
		const forms = storedForms(value);
		conditions.push(
			forms.length === 1
				? { field: `fields.${name}`, operator: '==', value }
				: { field: `fields.${name}`, operator: 'in', value: forms },
		);
	}
	if (statuses.length === 1)
		conditions.push({ field: 'status', operator: '==', value: statuses[0] });
	if (statuses.length > 1) conditions.push({ field: 'status', operator: 'in', value: statuses });
	const assignee = String(filters.assignee_uid ?? '').trim();
	if (assignee)
		conditions.push({ field: 'assignee_uid', operator: '==', value: assignee.toLowerCase() });
	conditions.push(...extra);
	if (conditions.length === 0) return {};
	return conditions.length === 1 ? conditions[0] : { combinator: 'and', conditions };
}

/** Only the custom field filters, as GET /tasks query parameters (the one kind of filter the spec names for it). */
export function customFieldQuery(node: INode, filters: IDataObject): IDataObject {
	return taskListQuery(node, { customFields: filters.customFields }, []);
}
