import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { queryTasks } from '../../../shared/transport/queryTasks';
import { expandProperty, forOperation, returnAllAndLimit, simplifyProperty } from '../shared/descriptions';
import { invalidParameter, jsonObject } from '../shared/parameters';
import { checkExpand, maxResults } from '../shared/read';
import { simplifyTask } from '../shared/simplify';
import { pick, TASK_EXPAND } from './get';

/** Option values name the operators: n8n reads a parameter value that starts with "=" as an expression. */
const OPERATORS: Record<string, string> = {
	equals: '==',
	notEquals: '!=',
	lessThan: '<',
	lessThanOrEqual: '<=',
	greaterThan: '>',
	greaterThanOrEqual: '>=',
	in: 'in',
	contains: 'contains',
};

export const description = forOperation('task', 'query', [
	{
		displayName: 'Define Query',
		name: 'queryMode',
		type: 'options',
		default: 'builder',
		options: [
			{ name: 'Using Conditions', value: 'builder', description: 'Conditions as rows, joined by AND or OR' },
			{ name: 'Using JSON', value: 'json', description: 'The whole body of POST /tasks/query' },
		],
	},
	{
		displayName: 'Combine Conditions',
		name: 'combinator',
		type: 'options',
		default: 'and',
		displayOptions: { show: { queryMode: ['builder'] } },
		options: [
			{ name: 'AND', value: 'and', description: 'Tasks that match every condition' },
			{ name: 'OR', value: 'or', description: 'Tasks that match at least one condition' },
		],
	},
	{
		displayName: 'Conditions',
		name: 'conditions',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Condition',
		default: {},
		displayOptions: { show: { queryMode: ['builder'] } },
		options: [
			{
				displayName: 'Condition',
				name: 'condition',
				values: [
					{
						displayName: 'Field',
						name: 'field',
						type: 'string',
						default: '',
						placeholder: 'e.g. status or fields.ticket_id',
					},
					{
						displayName: 'Negate',
						name: 'negated',
						type: 'boolean',
						default: false,
						description: 'Whether to match tasks that do NOT meet the condition',
					},
					{
						displayName: 'Operator',
						name: 'operator',
						type: 'options',
						default: 'equals',
						options: Object.entries(OPERATORS).map(([value, operator]) => ({ name: operator, value })),
					},
					{
						displayName: 'Value',
						name: 'value',
						type: 'string',
						default: '',
						description: 'For "in", a comma-separated list',
					},
					{
						displayName: 'Value Type',
						name: 'valueType',
						type: 'options',
						default: 'string',
						description:
							'How the value is sent. The service compares a custom field with the type it was stored with, so a number stored as 1 is matched by Number, not by String.',
						options: [
							{ name: 'Boolean', value: 'boolean', description: 'True or false' },
							{ name: 'JSON', value: 'json', description: 'Any JSON value, e.g. {"a": 1} or [1, 2]' },
							{ name: 'Null', value: 'null', description: 'The value is ignored; null is sent' },
							{ name: 'Number', value: 'number', description: 'A number such as 1 or 2.5' },
							{ name: 'String', value: 'string', description: 'The text as typed' },
						],
					},
				],
			},
		],
	},
	{
		displayName: 'Sort',
		name: 'sorts',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Sort',
		default: {},
		displayOptions: { show: { queryMode: ['builder'] } },
		options: [
			{
				displayName: 'Sort',
				name: 'sort',
				values: [
					{ displayName: 'Field', name: 'field', type: 'string', default: 'created_at' },
					{
						displayName: 'Direction',
						name: 'direction',
						type: 'options',
						default: 'ascending',
						options: [
							{ name: 'Ascending', value: 'ascending' },
							{ name: 'Descending', value: 'descending' },
						],
					},
				],
			},
		],
	},
	{
		displayName: 'Query (JSON)',
		name: 'queryJson',
		type: 'json',
		default: '{\n  "condition": {\n    "combinator": "and",\n    "conditions": [\n      { "field": "status", "operator": "==", "value": "TODO" }\n    ]\n  }\n}',
		displayOptions: { show: { queryMode: ['json'] } },
		description: 'Body of POST /tasks/query (spec section 4.3)',
	},
	...returnAllAndLimit(),
	simplifyProperty(),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Include Archived',
				name: 'archived',
				type: 'boolean',
				default: false,
				description: 'Whether to query archived tasks (query parameter archived) instead of the others',
			},
			expandProperty(TASK_EXPAND),
		],
	},
]);

/** A condition's value with the type the row asks for (rows from before Value Type existed send strings, as then). */
function typedValue(ctx: IExecuteFunctions, itemIndex: number, row: number, type: unknown, raw: unknown): unknown {
	const parameter = `Conditions (row ${row}) > Value`;
	const text = typeof raw === 'string' ? raw.trim() : raw;
	switch (type) {
		case 'number': {
			const number = typeof text === 'number' ? text : text === '' ? NaN : Number(text);
			if (!Number.isFinite(number)) throw invalidParameter(ctx, itemIndex, parameter, `is not a number: ${JSON.stringify(raw)}`);
			return number;
		}
		case 'boolean':
			if (text === true || text === 'true') return true;
			if (text === false || text === 'false') return false;
			throw invalidParameter(ctx, itemIndex, parameter, `is not true or false: ${JSON.stringify(raw)}`);
		case 'null':
			return null;
		case 'json':
			if (typeof raw !== 'string') return raw;
			try {
				return JSON.parse(raw);
			} catch (error) {
				throw invalidParameter(ctx, itemIndex, parameter, `is not valid JSON (${(error as Error).message})`);
			}
		default:
			return typeof raw === 'string' ? raw : String(raw ?? '');
	}
}

function builtQuery(ctx: IExecuteFunctions, itemIndex: number): IDataObject {
	const rows = ctx.getNodeParameter('conditions.condition', itemIndex, []) as IDataObject[];
	const conditions = rows.map((row, position) => {
		const field = String(row.field ?? '').trim();
		if (!field) throw invalidParameter(ctx, itemIndex, `Conditions (row ${position + 1}) > Field`, 'is empty');
		const operator = OPERATORS[String(row.operator)] ?? String(row.operator);
		const type = row.valueType ?? 'string';
		const value =
			operator === 'in' && type !== 'json'
				? String(row.value ?? '')
						.split(',')
						.map((entry) => typedValue(ctx, itemIndex, position + 1, type, entry.trim()))
				: typedValue(ctx, itemIndex, position + 1, type, row.value);
		return { field, operator, value, negated: row.negated === true };
	});
	const sorts = (ctx.getNodeParameter('sorts.sort', itemIndex, []) as IDataObject[]).map(({ field, direction }) => ({
		field,
		direction,
	}));
	const body: IDataObject = {};
	if (conditions.length > 0) {
		body.condition = { combinator: ctx.getNodeParameter('combinator', itemIndex, 'and'), conditions };
	}
	if (sorts.length > 0) body.sorts = sorts;
	return body;
}

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const body =
		this.getNodeParameter('queryMode', itemIndex) === 'json'
			? jsonObject(this, itemIndex, 'Query (JSON)', this.getNodeParameter('queryJson', itemIndex))
			: builtQuery(this, itemIndex);
	const max = maxResults(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand ?? body.expand, TASK_EXPAND);
	if (expand.length > 0) body.expand = expand;
	const simplify = this.getNodeParameter('simplify', itemIndex, true) as boolean;
	// Every match or the first `max`, paged whichever way the server allows (never a silent first page).
	const tasks = await queryTasks(client, { body, archived: options.archived === true, maxItems: max, itemIndex });
	return simplify ? tasks.map((task) => ({ ...simplifyTask(task), ...pick(task, expand) })) : tasks;
}
