// The one reader of task input (Create, Create or Update, Sync Backlog; Define Below and Map Automatically): what an
// n8n user's expressions and loops hand the node, and what the node must refuse before any request.
import type { IDataObject } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
/** Tickets whose id key is "ID", so that {{ $json.id }} (a key typo) resolves to undefined. */
const typoTickets = [
	{ ID: 'E-1', title: 'One' },
	{ ID: 'E-2', title: 'Two' },
];

describe('An External ID, UID, Title or Source Value that resolves to nothing is an error naming the item and the field, before any request', () => {
	const empties: Array<[string, unknown]> = [
		['undefined (a key typo)', undefined],
		['null', null],
		["''", ''],
		['whitespace', '   '],
	];

	describe.each(empties)('the value is %s', (_, value) => {
		const items = [{ title: 'One', id: value }] as IDataObject[];

		it('Create or Update by External ID', async () => {
			const run = await runBacklog(
				sim,
				{
					resource: 'task',
					operation: 'upsert',
					externalId: '={{ $json.id }}',
					title: '={{ $json.title }}',
				},
				{ items },
			);
			expect(run.error?.message).toMatch(/^Item 0: "External ID" is empty/);
			expect(sim.requests).toHaveLength(0);
		});

		it('Sync Backlog refuses the whole input', async () => {
			const run = await runBacklog(
				sim,
				{
					resource: 'task',
					operation: 'syncBacklog',
					externalId: '={{ $json.id }}',
					title: '={{ $json.title }}',
					sourceValue: 'helpdesk',
				},
				{ items: [{ title: 'Fine', id: 'E-0' }, ...items], continueOnFail: true },
			);
			expect(run.error?.message).toMatch(/^Item 1: "External ID" is empty/);
			expect(sim.requests).toHaveLength(0);
		});

		it('Create: Title', async () => {
			const run = await runBacklog(
				sim,
				{ resource: 'task', operation: 'create', title: '={{ $json.id }}' },
				{ items },
			);
			expect(run.error?.message).toMatch(/^Item 0: "Title" is empty/);
			expect(sim.requests).toHaveLength(0);
		});

		it('Create: a UID option whose expression resolves to nothing (never a silently derived one)', async () => {
			const run = await runBacklog(
				sim,
				{
					resource: 'task',
					operation: 'create',
					title: 'One',
					additionalFields: { uid: '={{ $json.id }}' },
				},
				{ items },
			);
			expect(run.error?.message).toMatch(/^Item 0: "UID" must be a UID/);
			expect(sim.requests).toHaveLength(0);
		});

		it('Sync Backlog: Source Value', async () => {
			const run = await runBacklog(
				sim,
				{
					resource: 'task',
					operation: 'syncBacklog',
					externalId: 'E-1',
					title: 'One',
					sourceValue: '={{ $json.id }}',
				},
				{ items },
			);
			expect(run.error?.message).toMatch(/^Item 0: "Source Value" is empty/);
			expect(sim.requests).toHaveLength(0);
		});
	});

	it('Sync Backlog with External ID {{ $json.id }} on items keyed "ID" closes nothing and creates no task "undefined"', async () => {
		sim.seedTasks(30, (i) => ({
			uid: uidOf(`E-${i + 1}`),
			fields: { title: `T${i + 1}`, ticket_id: `E-${i + 1}`, source: 'helpdesk' },
		}));
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'syncBacklog',
				externalId: '={{ $json.id }}',
				title: '={{ $json.title }}',
				sourceValue: 'helpdesk',
			},
			{ items: typoTickets },
		);
		expect(run.error?.message).toMatch(
			/^Item 0: "External ID" is empty \(the value or its expression resolved to undefined\)/,
		);
		expect([...sim.tasks.values()].filter((task) => task.status === 'DONE')).toHaveLength(0);
		expect([...sim.tasks.values()].some((task) => task.fields.ticket_id === 'undefined')).toBe(
			false,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('an error message never carries the text "undefined" as a value that was sent', async () => {
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'upsert', externalId: '={{ $json.id }}', title: 'x' },
			{ items: typoTickets },
		);
		expect(sim.tasks.size).toBe(0);
		expect((run.error as { description?: string } | undefined)?.description).toMatch(
			/key spelled differently/,
		);
	});
});

describe('A custom-field name n8n cannot carry is an error naming it', () => {
	it.each(['constructor', 'prototype'])('Custom Fields row "%s"', async (name) => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'create',
			title: 'One',
			customFields: { field: [{ name, value: 'x' }] },
		});
		expect(run.error?.message).toBe(
			`Item 0: "Custom Fields" names the custom field "${name}", which n8n cannot carry (its copies of items drop that key)`,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it.each(['constructor', '__proto__'])('Custom Fields (JSON) key "%s"', async (name) => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'upsert',
			externalId: 'E-1',
			title: 'One',
			customFieldsJson: `{"${name}": 1}`,
		});
		expect(run.error?.message).toMatch(
			new RegExp(`^Item 0: "Custom Fields \\(JSON\\)" names the custom field "${name}"`),
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('External ID Field "prototype"', async () => {
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'upsert',
			externalId: 'E-1',
			title: 'One',
			externalIdOptions: { externalIdField: 'prototype' },
		});
		expect(run.error?.message).toMatch(
			/^Item 0: "External ID Field" names the custom field "prototype"/,
		);
		expect(sim.requests).toHaveLength(0);
	});
});

describe('Create in Loop Over Items: the derived uid includes the run index', () => {
	const create = { resource: 'task', operation: 'create', title: '={{ $json.title }}' };

	it('each run of the node in one execution creates its own task, even with equal titles', async () => {
		const executionId = 'loop-execution-1';
		for (const runIndex of [0, 1, 2]) {
			const run = await runBacklog(sim, create, {
				items: [{ title: 'Same title' }],
				executionId,
				runIndex,
			});
			expect(run.error).toBeUndefined();
		}
		expect(sim.tasks.size).toBe(3);
	});

	it('a repeat of the same run (Retry On Fail) finds its own first attempt: one task, reported done', async () => {
		const options = {
			items: [{ title: 'Retried' }],
			executionId: 'retry-execution-1',
			runIndex: 1,
		};
		const first = await runBacklog(sim, create, options);
		const again = await runBacklog(sim, create, options);
		expect(again.error).toBeUndefined();
		expect(again.json[0].uid).toBe(first.json[0].uid);
		expect(sim.tasks.size).toBe(1);
	});
});
