import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { queryTasks, refusesCondition } from '../../../shared/tasks/queryTasks';
import {
	invalidParameter,
	isExpression,
	jsonObject,
	parseJson,
	readBoolean,
} from '../../../shared/parameters';
import {
	expandProperty,
	forOperation,
	returnAllAndLimit,
	simplifyProperty,
} from '../shared/descriptions';
import { checkExpand, maxResults, pick, simplifyTask } from '../shared/read';
import { TASK_EXPAND } from '../../../shared/tasks/fields';

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

/** Value Type as version 1 has it (its default, String, sends the text as typed). */
const VALUE_TYPE_V1: INodeProperties = {
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
};

export const description = forOperation('task', 'query', [
	{
		displayName: 'Define Query',
		name: 'queryMode',
		type: 'options',
		default: 'builder',
		options: [
			{
				name: 'Using Conditions',
				value: 'builder',
				description: 'Conditions as rows, joined by AND or OR',
			},
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
						options: Object.entries(OPERATORS).map(([value, operator]) => ({
							name: operator,
							value,
						})),
					},
					{
						displayName: 'Value',
						name: 'value',
						type: 'string',
						default: '',
						description: 'For "in", a comma-separated list',
					},
					// Version 1 (workflows saved before version 2): the text is sent as typed unless the row says otherwise.
					{ ...VALUE_TYPE_V1, displayOptions: { show: { '@version': [1] } } },
					// Version 2 on: Automatic, so a number or a boolean typed as text matches it as stored.
					{
						displayName: 'Value Type',
						name: 'valueType',
						type: 'options',
						default: 'auto',
						description:
							'How the value is sent. The service may compare a custom field with the type it was stored with. Automatic: text that spells a number (as JSON writes it: 1, 2.5, not 007) or true/false matches it stored as a number or boolean or as that text (1 finds 1 and "1"), and the ordering operators compare the number; other text is sent as typed.',
						displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } },
						options: [
							{
								name: 'Automatic',
								value: 'auto',
								description: 'Text like 1, 2.5 or true also matches a stored number or boolean',
							},
							...(VALUE_TYPE_V1.options ?? []),
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
		default:
			'{\n  "condition": {\n    "combinator": "and",\n    "conditions": [\n      { "field": "status", "operator": "==", "value": "TODO" }\n    ]\n  }\n}',
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
				description:
					'Whether to query archived tasks (query parameter archived) instead of the others',
			},
			expandProperty(TASK_EXPAND),
		],
	},
]);

/** A condition's value with the type the row asks for (rows from before Value Type existed send strings, as then). */
function typedValue(
	ctx: IExecuteFunctions,
	itemIndex: number,
	row: number,
	type: unknown,
	raw: unknown,
): unknown {
	const parameter = `Conditions (row ${row}) > Value`;
	const text = typeof raw === 'string' ? raw.trim() : raw;
	switch (type) {
		case 'number': {
			const number = typeof text === 'number' ? text : text === '' ? NaN : Number(text);
			if (!Number.isFinite(number))
				throw invalidParameter(
					ctx,
					itemIndex,
					parameter,
					`is not a number: ${JSON.stringify(raw)}`,
				);
			return number;
		}
		case 'boolean':
			if (text === true || text === 'true') return true;
			if (text === false || text === 'false') return false;
			throw invalidParameter(
				ctx,
				itemIndex,
				parameter,
				`is not true or false: ${JSON.stringify(raw)}`,
			);
		case 'null':
			return null;
		case 'json':
			return parseJson(ctx, itemIndex, parameter, raw);
		default:
			return typeof raw === 'string' ? raw : String(raw ?? '');
	}
}

/** A number in JSON's syntax ("1", "-2.5", "1e3"; not "007", "0x10" or ""): the types the service stores (spec 2.3). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The number or boolean a text spells in JSON, if any. */
function spelled(text: string): number | boolean | undefined {
	const trimmed = text.trim();
	if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
	if (!JSON_NUMBER.test(trimmed)) return undefined;
	const number = Number(trimmed);
	return Number.isFinite(number) ? number : undefined;
}

/**
 * Value Type Automatic (version 2 on). The service keeps each custom field's JSON type and may compare types strictly
 * (spec 2.3), so a text that spells a number or a boolean is looked for in both forms, as Get Many's custom-field
 * filters do: `==` and `!=` become `in [text, value]` (negated for `!=`), each entry of `in` adds its typed form. A
 * text stored as text ("1", or "007", which is no JSON number) is still found. Ordering operators compare the typed
 * value (a number typed for `>` means a number); `contains` and any other text are sent as typed.
 */
function automaticCondition(
	field: string,
	operator: string,
	raw: unknown,
	negated: boolean,
): IDataObject {
	const text = typeof raw === 'string' ? raw : String(raw ?? '');
	const forms = (entry: string) => {
		const value = spelled(entry);
		return value === undefined ? [entry] : [entry, value];
	};
	if (operator === 'in') {
		const value = text.split(',').flatMap((entry) => forms(entry.trim()));
		return { field, operator, value, negated };
	}
	const value = spelled(text);
	if (value === undefined || operator === 'contains')
		return { field, operator, value: text, negated };
	if (operator === '==') return { field, operator: 'in', value: [text, value], negated };
	if (operator === '!=') return { field, operator: 'in', value: [text, value], negated: !negated };
	return { field, operator, value, negated };
}

/** The body from the condition rows, and the rows Automatic sent as `in` where the row says `==` or `!=`. */
function builtQuery(
	ctx: IExecuteFunctions,
	itemIndex: number,
): { body: IDataObject; widened: number[] } {
	const automaticTyping = ctx.getNode().typeVersion >= 2;
	const widened: number[] = [];
	const rows = ctx.getNodeParameter('conditions.condition', itemIndex, []) as IDataObject[];
	const conditions = rows.map((row, position) => {
		const field = String(row.field ?? '').trim();
		if (!field)
			throw invalidParameter(
				ctx,
				itemIndex,
				`Conditions (row ${position + 1}) > Field`,
				'is empty',
			);
		const operator = OPERATORS[String(row.operator)] ?? String(row.operator);
		const type = row.valueType ?? (automaticTyping ? 'auto' : 'string');
		// A value whose expression resolved to nothing would look for "" (or "undefined"): an empty result, not an error.
		const resolvedToNothing =
			row.value === undefined ||
			row.value === null ||
			(isExpression(ctx.getNode(), ['conditions', 'condition', position, 'value']) &&
				String(row.value).trim() === '');
		if (type !== 'null' && resolvedToNothing)
			throw invalidParameter(
				ctx,
				itemIndex,
				`Conditions (row ${position + 1}) > Value`,
				'is empty: its expression resolved to nothing',
			);
		const negated = readBoolean(
			ctx,
			itemIndex,
			`Conditions (row ${position + 1}) > Negate`,
			row.negated,
			false,
		);
		if (automaticTyping && type === 'auto') {
			const condition = automaticCondition(field, operator, row.value, negated);
			if (condition.operator !== operator) widened.push(position + 1);
			return condition;
		}
		const value =
			operator === 'in' && type !== 'json'
				? String(row.value ?? '')
						.split(',')
						.map((entry) => typedValue(ctx, itemIndex, position + 1, type, entry.trim()))
				: typedValue(ctx, itemIndex, position + 1, type, row.value);
		return { field, operator, value, negated };
	});
	const sorts = (ctx.getNodeParameter('sorts.sort', itemIndex, []) as IDataObject[]).map(
		({ field, direction }) => ({
			field,
			direction,
		}),
	);
	const body: IDataObject = {};
	if (conditions.length > 0) {
		body.condition = {
			combinator: ctx.getNodeParameter('combinator', itemIndex, 'and'),
			conditions,
		};
	}
	if (sorts.length > 0) body.sorts = sorts;
	return { body, widened };
}

export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const { body, widened } =
		this.getNodeParameter('queryMode', itemIndex) === 'json'
			? {
					body: jsonObject(
						this,
						itemIndex,
						'Query (JSON)',
						this.getNodeParameter('queryJson', itemIndex),
					),
					widened: [],
				}
			: builtQuery(this, itemIndex);
	const max = maxResults(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const expand = checkExpand(this, itemIndex, options.expand ?? body.expand, TASK_EXPAND);
	if (expand.length > 0) body.expand = expand;
	const simplify = readBoolean(
		this,
		itemIndex,
		'Simplify',
		this.getNodeParameter('simplify', itemIndex, true),
		true,
	);
	// Every match or the first `max`, paged whichever way the server allows (never a silent first page).
	const tasks = await queryTasks(client, {
		body,
		archived: readBoolean(this, itemIndex, 'Options > Include Archived', options.archived, false),
		maxItems: max,
		itemIndex,
	}).catch((error: unknown) => {
		// The spec documents only `==`: say what Automatic sent, and how to send `==` instead.
		if (refusesCondition(error) && widened.length > 0) {
			const [rows, those] =
				widened.length > 1
					? [`rows ${widened.join(', ')}`, "those rows'"]
					: [`row ${widened[0]}`, "that row's"];
			const hint = `Value Type Automatic sent condition ${rows} as "in" [text, number or boolean], to match the value stored either way. If the service does not take "in" (the spec documents only "=="), set ${those} Value Type to the type the field is stored with (Number, Boolean or String).`;
			error.description = error.description ? `${error.description} ${hint}` : hint;
		}
		throw error;
	});
	return simplify ? tasks.map((task) => ({ ...simplifyTask(task), ...pick(task, expand) })) : tasks;
}
