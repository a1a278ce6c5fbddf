/**
 * Query's condition rows, Value Type (issue 18, case 10). The service keeps each custom field's JSON type and may
 * compare types strictly (spec 2.3): a condition `fields.priority == "1"` then finds no task whose priority is the
 * number 1. From node version 2 on, Value Type defaults to Automatic: a text that spells a number or a boolean also
 * matches the number or boolean, as Get Many's custom-field filters do, and a text stored as text (a ticket "007")
 * is still found. Version 1 (workflows saved before) keeps String as the default and sends the text as typed.
 */
import type {
	IDataObject,
	INodeParameters,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';
import { NodeApiError, NodeHelpers } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { sent, TOKEN, useSimulator } from '../helpers/backlog';
import { runNode } from '../helpers/run-node';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;
useSimulator((started) => (sim = started));
beforeEach(() => sim.configure({ readings: undefined }));

type Row = {
	field: string;
	operator?: string;
	value: string;
	valueType?: string;
	negated?: boolean;
};

/** Runs Query (builder) at a node version; rows without an operator use the default (equals). */
async function query(typeVersion: number, rows: Row[], extra: IDataObject = {}) {
	const result = await runNode({
		nodeType: new TaskBacklog(),
		typeVersion,
		parameters: {
			resource: 'task',
			operation: 'query',
			conditions: { condition: rows },
			returnAll: true,
			requestOptions: { retryDelayMs: 5 },
			...extra,
		} as INodeParameters,
		items: [{}],
		credentials: {
			type: 'taskBacklogApi',
			data: {
				baseUrl: sim.url,
				token: TOKEN,
				requestsPerMinute: 10000,
				rateLimitWindowSeconds: 60,
			},
		},
		credentialType: new TaskBacklogApi(),
	});
	const json = (result.output[0] ?? []).map((item) => item.json);
	return { json, error: result.error, titles: json.map((task) => String(task.title)).sort() };
}

/** The conditions of the first POST /tasks/query (the user's, before any paging condition). */
function conditionsSent(): IDataObject[] {
	const body = sent(sim, 'POST', '/tasks/query')[0].body as IDataObject;
	return (body.condition as IDataObject).conditions as IDataObject[];
}

const seed = (fields: IDataObject[]) => {
	for (const [i, f] of fields.entries())
		sim.seedTasks(1, () => ({ fields: { title: `T${i}`, ...f } }));
};

const comparisons = ['strict', 'loose'] as const;

describe('version 2 (Value Type Automatic by default)', () => {
	it.each(comparisons)(
		'a number typed as text matches the task that stores the number (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ priority: 0 }, { priority: 1 }, { priority: 2 }, { priority: 10 }]);
			const run = await query(2, [{ field: 'fields.priority', value: '1' }]);
			expect(run.error).toBeUndefined();
			expect(run.titles).toEqual(['T1']);
			expect(conditionsSent()).toEqual([
				{ field: 'fields.priority', operator: 'in', value: ['1', 1], negated: false },
			]);
		},
	);

	it.each(comparisons)(
		'true typed as text matches the task that stores the boolean, and one that stores the text (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ urgent: true }, { urgent: false }, { urgent: 'true' }, {}]);
			const run = await query(2, [{ field: 'fields.urgent', value: 'true' }]);
			expect(run.error).toBeUndefined();
			expect(run.titles).toEqual(['T0', 'T2']);
		},
	);

	it.each(comparisons)(
		'a text that looks numeric but is stored as text (ticket "007") is still found, and not the number 7 (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ ticket: '007' }, { ticket: 7 }, { ticket: '7' }]);
			const run = await query(2, [{ field: 'fields.ticket', value: '007' }]);
			expect(run.error).toBeUndefined();
			expect(run.titles).toEqual(['T0']);
			expect(conditionsSent()).toEqual([
				{ field: 'fields.ticket', operator: '==', value: '007', negated: false },
			]);
		},
	);

	it.each(comparisons)(
		'a number typed as text finds it stored either way: as the number and as the text (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ ticket: 42 }, { ticket: '42' }, { ticket: 43 }]);
			const run = await query(2, [{ field: 'fields.ticket', value: '42' }]);
			expect(run.titles).toEqual(['T0', 'T1']);
		},
	);

	it.each(comparisons)(
		'!= leaves out both forms; Negate turns it back (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ priority: 1 }, { priority: '1' }, { priority: 2 }]);
			const notOne = await query(2, [
				{ field: 'fields.priority', operator: 'notEquals', value: '1' },
			]);
			expect(notOne.titles).toEqual(['T2']);
			const negated = await query(2, [
				{ field: 'fields.priority', operator: 'notEquals', value: '1', negated: true },
			]);
			expect(negated.titles).toEqual(['T0', 'T1']);
		},
	);

	it.each(comparisons)(
		'in: each entry matches its number as well as its text (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ priority: 1 }, { priority: '2' }, { priority: 3 }, { priority: 'high' }]);
			const run = await query(2, [
				{ field: 'fields.priority', operator: 'in', value: '1, 2, high' },
			]);
			expect(run.titles).toEqual(['T0', 'T1', 'T3']);
			expect(conditionsSent()[0].value).toEqual(['1', 1, '2', 2, 'high']);
		},
	);

	it.each(comparisons)(
		'ordering operators compare the number typed: > 2 finds 10 (%s types)',
		async (typeComparison) => {
			sim.configure({ readings: { typeComparison } });
			seed([{ priority: 1 }, { priority: 2 }, { priority: 10 }]);
			const run = await query(2, [
				{ field: 'fields.priority', operator: 'greaterThan', value: '2' },
			]);
			expect(run.titles).toEqual(['T2']);
			expect(conditionsSent()).toEqual([
				{ field: 'fields.priority', operator: '>', value: 2, negated: false },
			]);
		},
	);

	it('text that spells nothing else, and contains, are sent as typed', async () => {
		seed([{ team: 'red 1' }]);
		const run = await query(2, [
			{ field: 'fields.team', value: 'red 1' },
			{ field: 'fields.team', operator: 'contains', value: '1' },
		]);
		expect(run.titles).toEqual(['T0']);
		expect(conditionsSent()).toEqual([
			{ field: 'fields.team', operator: '==', value: 'red 1', negated: false },
			{ field: 'fields.team', operator: 'contains', value: '1', negated: false },
		]);
	});

	it('Value Type String, chosen, still sends only the text (strict types: the number is not matched)', async () => {
		sim.configure({ readings: { typeComparison: 'strict' } });
		seed([{ priority: 1 }, { priority: '1' }]);
		const run = await query(2, [{ field: 'fields.priority', value: '1', valueType: 'string' }]);
		expect(run.titles).toEqual(['T1']);
		expect(conditionsSent()).toEqual([
			{ field: 'fields.priority', operator: '==', value: '1', negated: false },
		]);
	});

	it('on a service that takes only "==" (queryOperators documented), the error says what Automatic sent and how to send "=="', async () => {
		sim.configure({ readings: { queryOperators: 'documented', typeComparison: 'strict' } });
		seed([{ priority: 1 }]);
		const run = await query(2, [{ field: 'fields.priority', value: '1' }]);
		expect(run.error).toBeInstanceOf(NodeApiError);
		expect((run.error as NodeApiError).description).toMatch(
			/Value Type Automatic sent condition row 1 as "in".*set that row's Value Type/,
		);
		// Limit 1: a server without a query cursor is paged with `uid >`, which this one refuses too.
		const typed = await query(2, [{ field: 'fields.priority', value: '1', valueType: 'number' }], {
			returnAll: false,
			limit: 1,
		});
		expect(typed.error).toBeUndefined();
		expect(typed.titles).toEqual(['T0']);
	});
});

describe('version 1 (workflows saved before version 2): as before', () => {
	it('a number typed as text is sent as text: on a service that compares types it matches nothing', async () => {
		sim.configure({ readings: { typeComparison: 'strict' } });
		seed([{ priority: 1 }, { priority: 2 }]);
		const run = await query(1, [{ field: 'fields.priority', value: '1' }]);
		expect(run.error).toBeUndefined();
		expect(run.json).toEqual([]);
		expect(conditionsSent()).toEqual([
			{ field: 'fields.priority', operator: '==', value: '1', negated: false },
		]);
	});

	it('every row is sent as it was: text as typed, in as a list of texts, ordering with the text', async () => {
		seed([{ priority: 1 }]);
		await query(1, [
			{ field: 'fields.priority', operator: 'in', value: '1, 2' },
			{ field: 'fields.priority', operator: 'notEquals', value: 'true' },
			{ field: 'fields.priority', operator: 'greaterThan', value: '0' },
			{ field: 'fields.priority', value: '1', valueType: 'number' },
		]);
		expect(conditionsSent()).toEqual([
			{ field: 'fields.priority', operator: 'in', value: ['1', '2'], negated: false },
			{ field: 'fields.priority', operator: '!=', value: 'true', negated: false },
			{ field: 'fields.priority', operator: '>', value: '0', negated: false },
			{ field: 'fields.priority', operator: '==', value: 1, negated: false },
		]);
	});

	it('a value type a version-1 node cannot offer ("auto", pasted) is read as String, as version 1 always did', async () => {
		seed([{ priority: 1 }]);
		await query(1, [{ field: 'fields.priority', value: '1', valueType: 'auto' }]);
		expect(conditionsSent()).toEqual([
			{ field: 'fields.priority', operator: '==', value: '1', negated: false },
		]);
	});
});

describe('the description', () => {
	const description = new TaskBacklog().description;
	const conditions = description.properties.find((p) => p.name === 'conditions') as INodeProperties;
	const rowValues = (conditions.options as Array<{ values: INodeProperties[] }>)[0].values;
	const valueTypes = rowValues.filter((p) => p.name === 'valueType');

	it('version 3 is the default (Sync Backlog outputs changes and a summary); versions 1 and 2 stay available', () => {
		expect(description.version).toEqual([1, 2, 3]);
		expect(description.defaultVersion).toBe(3);
	});

	it('version 1 shows Value Type as it was (default String, five types); version 2 adds Automatic, its default', () => {
		const node = (typeVersion: number) => ({ typeVersion }) as never;
		const shown = (typeVersion: number) =>
			valueTypes.filter((p) => NodeHelpers.displayParameter({}, p, node(typeVersion), description));
		const [v1] = shown(1);
		expect(shown(1)).toHaveLength(1);
		const { displayOptions, ...asBefore } = v1;
		expect(displayOptions).toEqual({ show: { '@version': [1] } });
		expect(asBefore).toEqual({
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
		});
		for (const version of [2, 3]) {
			const [v2] = shown(version);
			expect(shown(version)).toHaveLength(1);
			expect(v2.default).toBe('auto');
			expect((v2.options as INodePropertyOptions[]).map((o) => o.value)).toEqual([
				'auto',
				'boolean',
				'json',
				'null',
				'number',
				'string',
			]);
		}
	});

	it('n8n fills in a row saved without a Value Type with String at version 1 and Automatic at version 2', () => {
		const parameters = {
			resource: 'task',
			operation: 'query',
			conditions: { condition: [{ field: 'fields.a', value: '1' }] },
		};
		const filled = (typeVersion: number) =>
			NodeHelpers.getNodeParameters(
				description.properties,
				parameters,
				true,
				false,
				{ typeVersion } as never,
				description,
			) as IDataObject;
		const row = (typeVersion: number) =>
			((filled(typeVersion).conditions as IDataObject).condition as IDataObject[])[0];
		expect(row(1).valueType).toBe('string');
		expect(row(2).valueType).toBe('auto');
	});
});
