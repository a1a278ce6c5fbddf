// Issue 44: every boolean parameter of the Task Backlog node is read through one reader (booleanSetting, nodes/shared/parameters.ts).
// An expression hands n8n's boolean parameters over as it spells them: the text "false" was truthy (read as on where
// the node checked truthiness or `!== false`), "true" was read as off where it checked `=== true`. Text is converted
// where reading it as spelled starts no write or close a saved workflow does not do today; refused (before any request)
// for Dry Run and for the booleans sent to the service as task or comment values.
import { NodeOperationError } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
import { byId, runBacklog, uidOf, useSimulator, writesSent } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const sync = (dryRun: unknown) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	dryRun,
});
const tickets = (n: number) =>
	Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, title: `Ticket ${i + 1}` }));
/** The source's open tasks T-1 ... T-3, an hour old; a sync of T-1 and T-2 updates nothing and closes T-3. */
const seedSource = () => {
	const seeded = sim.seedTasks(3, (i) => ({
		uid: uidOf(`T-${i + 1}`),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
	}));
	ageTasks(sim);
	return seeded;
};
const closed = () => [...sim.tasks.values()].filter((task) => task.status === 'DONE').length;

describe('Sync Backlog: Dry Run takes a boolean only', () => {
	it('Dry Run given the text "false" by an expression is refused before any request, naming the item and the field', async () => {
		seedSource();
		sim.clearRequests();
		const run = await runBacklog(sim, sync('={{ "false" }}'), { items: tickets(2) });
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toBe(
			'Item 0: Dry Run must be true or false (a boolean); the expression gave the text "false"',
		);
		const description = String((run.error as NodeOperationError).description);
		expect(description).toMatch(/^Nothing was sent\./);
		expect(description).toMatch(/make the expression give a boolean/);
		expect(sim.requests).toHaveLength(0);
		expect(closed()).toBe(0);
	});

	it.each([
		['the text "true"', '={{ "true" }}', 'the text "true"'],
		['the text "FALSE"', '={{ "FALSE" }}', 'the text "FALSE"'],
		['nothing (a key that is not there)', '={{ $json.dryRunMissing }}', 'nothing (undefined)'],
		['null', '={{ null }}', 'null'],
		['empty text', '={{ "" }}', 'empty text'],
		['a number', '={{ 0 }}', 'the number 0'],
		['"yes"', '={{ "yes" }}', 'the text "yes"'],
	])(
		'Dry Run given %s by an expression is refused before any request',
		async (_case, dryRun, said) => {
			seedSource();
			sim.clearRequests();
			const run = await runBacklog(sim, sync(dryRun), { items: tickets(2) });
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toBe(
				`Item 0: Dry Run must be true or false (a boolean); the expression gave ${said}`,
			);
			expect(sim.requests).toHaveLength(0);
			expect(closed()).toBe(0);
		},
	);

	it('Dry Run as a boolean, set or from an expression, and Dry Run left unset, are read as before', async () => {
		seedSource();
		const dry = await runBacklog(sim, sync('={{ true }}'), { items: tickets(2) });
		expect(dry.error).toBeUndefined();
		expect(dry.json.map((json) => [json.action, json.dry_run])).toContainEqual(['close', true]);
		expect(writesSent(sim)).toHaveLength(0);

		const unset = { ...sync(undefined) } as Record<string, unknown>;
		delete unset.dryRun;
		const real = await runBacklog(sim, unset, { items: tickets(2) });
		expect(real.error).toBeUndefined();
		expect(real.json.find((json) => json.action === 'close')?.dry_run).toBe(false);
		expect(closed()).toBe(1);
	});
});

describe('booleans whose text is converted: "true" and "false" from an expression are that value', () => {
	it('Simplify given the text "false" by an expression returns the whole task', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Raw' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'get',
			task: byId(task.uid),
			simplify: '={{ "false" }}',
		});
		expect(run.error).toBeUndefined();
		expect(run.json[0]).toHaveProperty('archived', false);
		expect(run.json[0]).toHaveProperty('created_at');
	});

	it('Return All given the text "false" by an expression stops at the Limit', async () => {
		sim.seedTasks(5, (i) => ({ fields: { title: `Listed ${i}`, group: 'limit' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'getAll',
			returnAll: '={{ "false" }}',
			limit: 2,
			filters: { customFields: { field: [{ name: 'group', value: 'limit' }] } },
		});
		expect(run.error).toBeUndefined();
		expect(run.json).toHaveLength(2);
	});

	it('Get Many with Filters › Archived given the text "true" by an expression lists the archived tasks', async () => {
		sim.seedTasks(2, (i) => ({ archived: i === 0, fields: { title: `Filtered ${i}` } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'getAll',
			returnAll: true,
			filters: { archived: '={{ "true" }}' },
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['Filtered 0']);
	});

	it('Query with Include Archived given the text "true" by an expression reads the archived tasks', async () => {
		sim.seedTasks(2, (i) => ({ archived: i === 0, fields: { title: `Queried ${i}`, group: 'q' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			queryMode: 'builder',
			conditions: { condition: [{ field: 'fields.group', operator: 'equals', value: 'q' }] },
			returnAll: true,
			options: { archived: '={{ "true" }}' },
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['Queried 0']);
	});

	it('a Query condition with Negate given the text "true" by an expression is negated', async () => {
		sim.seedTasks(2, (i) => ({ fields: { title: `Negated ${i}`, group: 'n', rank: String(i) } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			queryMode: 'builder',
			combinator: 'and',
			conditions: {
				condition: [
					{ field: 'fields.group', operator: 'equals', value: 'n' },
					{ field: 'fields.rank', operator: 'equals', value: '0', negated: '={{ "true" }}' },
				],
			},
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => json.title)).toEqual(['Negated 1']);
	});

	it('Allow Nested Values given the text "true" by an expression takes a nested value as a custom field', async () => {
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'upsert',
				inputData: 'autoMap',
				autoMapOptions: { allowNested: '={{ "true" }}' },
			},
			{ items: [{ id: 'N-1', title: 'Nested', meta: { a: 1 } }] },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(uidOf('N-1'))?.fields.meta).toEqual({ a: 1 });
	});

	it('Batching given the text " FALSE " (any case, spaces around) by an expression is off', async () => {
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'create',
				title: '={{ $json.title }}',
				requestOptions: { batching: '={{ " FALSE " }}' },
			},
			{ items: tickets(3) },
		);
		expect(run.error).toBeUndefined();
		expect(writesSent(sim).map((request) => request.path)).not.toContain('/tasks/batch');
		expect(writesSent(sim)).toHaveLength(3);
	});

	it('Simplify given "yes" by an expression is an error naming the item and the parameter', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Yes' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'get',
			task: byId(task.uid),
			simplify: '={{ "yes" }}',
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toBe('Item 0: Simplify is "yes": it must be true or false');
	});
});

describe('booleans sent to the service as values take a boolean only', () => {
	it('a task Update with Archived given the text "true" by an expression is refused before any request', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Kept' } }));
		sim.clearRequests();
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'update',
			task: byId(task.uid),
			updateFields: { archived: '={{ "true" }}' },
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toBe(
			'Item 0: "Archived" must be true or false (a boolean); the expression gave the text "true"',
		);
		expect(sim.requests).toHaveLength(0);
		expect(sim.tasks.get(task.uid)?.archived).toBe(false);
	});

	it('a task Update with Archived true from an expression archives it, and Is Assigned Player may be null', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Archived' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'update',
			task: byId(task.uid),
			updateFields: { archived: '={{ true }}', is_assigned_player: '={{ null }}' },
		});
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(task.uid)?.archived).toBe(true);
	});

	it('a comment Update with Archived given the text "false" by an expression is refused before any request', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Commented' } }));
		const commentUid = '0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e';
		const run = await runBacklog(sim, {
			resource: 'comment',
			operation: 'update',
			task: byId(task.uid),
			commentUid,
			text: 'Edited',
			updateFields: { archived: '={{ "false" }}' },
		});
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toBe(
			'Item 0: "Archived" must be true or false (a boolean); the expression gave the text "false"',
		);
		expect(sim.requests.filter((request) => request.path.includes('/comments'))).toHaveLength(0);
	});
});
