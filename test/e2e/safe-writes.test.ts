// What an ordinary n8n workflow hands the node, in a real n8n (both majors): an expression that resolves to nothing,
// Loop Over Items, Execute Once, a Create that meets a taken UID. Each must leave the backlog as the user meant: nothing
// closed by a typo, a task per loop run, no sync of a first item alone, nothing written by a run that failed.
import { randomUUID } from 'crypto';

import type { N8nMajor } from '../../tools/n8n/n8n';
import type { Stage } from './lib/backlog';
import {
	backlogNode,
	codeNode,
	importAndRun,
	manualWorkflow,
	nodeError,
	nodeItems,
	nodeOutput,
	printTimings,
	runError,
	setUpStage,
} from './lib/backlog';

afterAll(() => printTimings('safe-writes'));

/** Tickets keyed "ID": an External ID of {{ $json.id }} (the key typo) resolves to undefined for each. */
const typoTickets = [
	{ ID: 'TY-1', subject: 'Typo one' },
	{ ID: 'TY-2', subject: 'Typo two' },
	{ ID: 'TY-3', subject: 'Typo three' },
];

describe.each([2, 1] as N8nMajor[])('Safe writes in real n8n %i.x', (major) => {
	let stage: Stage;
	const wid = (name: string) => `e2eSafe${major}${name}`.slice(0, 16).padEnd(16, '0');
	const tasksOf = (source: string) =>
		[...stage.sim.tasks.values()].filter((task) => task.fields.source === source);

	beforeAll(async () => {
		stage = await setUpStage(major);
	}, 30 * 60_000);

	afterAll(async () => {
		await stage?.dispose();
	}, 120_000);

	it('Sync Backlog with External ID {{ $json.id }} on items keyed "ID" fails naming the item and the field, and closes nothing', async () => {
		stage.sim.seedTasks(30, (i) => ({
			fields: { title: `Open ${i}`, ticket_id: `TY-${i + 10}`, source: 'e2e-typo' },
		}));
		stage.sim.clearRequests();
		const workflow = manualWorkflow(wid('Typo'), 'e2e: sync with a key typo', [
			codeNode('Tickets', typoTickets),
			backlogNode('Sync', {
				resource: 'task',
				operation: 'syncBacklog',
				externalId: '={{ $json.id }}',
				title: '={{ $json.subject }}',
				sourceValue: 'e2e-typo',
			}),
		]);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(1);
		const error = nodeError(result.run, 'Sync') ?? runError(result.run);
		expect(error?.message).toMatch(/Item 0: "External ID" is empty/);
		expect(tasksOf('e2e-typo').filter((task) => task.status === 'DONE')).toHaveLength(0);
		expect(tasksOf('e2e-typo')).toHaveLength(30);
		expect(stage.sim.requests).toHaveLength(0);
	}, 300_000);

	it('Create inside Loop Over Items (batch size 1) creates a task per item, even with equal titles', async () => {
		const title = `Loop ${major} ${randomUUID().slice(0, 8)}`;
		const workflow = {
			id: wid('Loop'),
			name: 'e2e: create in a loop',
			active: false,
			settings: { executionOrder: 'v1' },
			pinData: {},
			nodes: [
				{
					id: randomUUID(),
					name: 'Manual',
					type: 'n8n-nodes-base.manualTrigger',
					typeVersion: 1,
					position: [0, 0],
					parameters: {},
				},
				{
					...codeNode('Items', [{ title }, { title }, { title }]),
					id: randomUUID(),
					position: [240, 0],
				},
				{
					id: randomUUID(),
					name: 'Loop',
					type: 'n8n-nodes-base.splitInBatches',
					typeVersion: 3,
					position: [480, 0],
					parameters: { batchSize: 1, options: {} },
				},
				{
					...backlogNode('Create', {
						resource: 'task',
						operation: 'create',
						title: '={{ $json.title }}',
					}),
					id: randomUUID(),
					position: [720, 0],
				},
			],
			connections: {
				Manual: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
				Items: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
				Loop: { main: [[], [{ node: 'Create', type: 'main', index: 0 }]] },
				Create: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
			},
		};
		const result = await importAndRun(stage, workflow, 0);
		expect(result.code).toBe(0);
		const created = [0, 1, 2].map((runIndex) => nodeOutput(result.run, 'Create', runIndex)[0]?.uid);
		expect(new Set(created).size).toBe(3);
		expect(
			[...stage.sim.tasks.values()].filter((task) => task.fields.title === title),
		).toHaveLength(3);
	}, 300_000);

	it('Sync Backlog with Execute Once fails before any request and closes nothing', async () => {
		stage.sim.seedTasks(3, (i) => ({
			fields: { title: `Once ${i}`, ticket_id: `EO-${i + 1}`, source: 'e2e-once' },
		}));
		stage.sim.clearRequests();
		const workflow = manualWorkflow(wid('Once'), 'e2e: sync with execute once', [
			codeNode(
				'Tickets',
				[1, 2, 3].map((i) => ({ id: `EO-${i}`, subject: `Once ${i - 1}` })),
			),
			backlogNode(
				'Sync',
				{
					resource: 'task',
					operation: 'syncBacklog',
					externalId: '={{ $json.id }}',
					title: '={{ $json.subject }}',
					sourceValue: 'e2e-once',
				},
				{ executeOnce: true },
			),
		]);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(1);
		const error = nodeError(result.run, 'Sync') ?? runError(result.run);
		expect(error?.message).toBe('Sync Backlog cannot run with Execute Once');
		expect(tasksOf('e2e-once').filter((task) => task.status === 'DONE')).toHaveLength(0);
		expect(stage.sim.requests).toHaveLength(0);
	}, 300_000);

	it('Create with a UID another task holds, beside a free one, without Continue On Fail: fails on that item and writes nothing', async () => {
		const [taken] = stage.sim.seedTasks(1, () => ({ fields: { title: 'Someone else' } }));
		const free = randomUUID();
		stage.sim.clearRequests();
		const workflow = manualWorkflow(wid('Taken'), 'e2e: create with a taken uid', [
			codeNode('Tickets', [
				{ uid: free, subject: 'Mine, free' },
				{ uid: taken.uid, subject: 'Mine, taken' },
			]),
			backlogNode('Create', {
				resource: 'task',
				operation: 'create',
				title: '={{ $json.subject }}',
				additionalFields: { uid: '={{ $json.uid }}' },
			}),
		]);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(1);
		const error = nodeError(result.run, 'Create') ?? runError(result.run);
		expect(error?.message).toMatch(/^Item 1: a task with UID .* already exists/);
		expect(stage.sim.tasks.has(free)).toBe(false);
		expect(stage.sim.tasks.get(taken.uid)!.fields.title).toBe('Someone else');
		expect(
			stage.sim.requests.filter(
				(request) => request.method !== 'GET' && request.path !== '/tasks/query',
			),
		).toHaveLength(0);
	}, 300_000);

	it('Comment Create with Retry On Fail: the node run again after a failed item adds each comment once', async () => {
		const [task] = stage.sim.seedTasks(1, () => ({ fields: { title: 'Commented' } }));
		// The third comment is refused once (400, not retried by the node): the run fails and n8n runs the node again.
		stage.sim.failNext({
			status: 400,
			body: { message: 'refused once' },
			when: (request) =>
				request.method === 'POST' &&
				[...stage.sim.comments.values()].filter((comment) => comment.task_uid === task.uid)
					.length === 2,
		});
		const workflow = manualWorkflow(wid('Retry'), 'e2e: comment create with retry on fail', [
			codeNode(
				'Notes',
				[1, 2, 3].map((n) => ({ text: `Note ${n}` })),
			),
			backlogNode(
				'Comment',
				{
					resource: 'comment',
					operation: 'create',
					task: { __rl: true, mode: 'id', value: task.uid },
					text: '={{ $json.text }}',
				},
				{ retryOnFail: true, maxTries: 2, waitBetweenTries: 100 },
			),
		]);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(0);
		expect(nodeOutput(result.run, 'Comment').map((json) => json.text)).toEqual([
			'Note 1',
			'Note 2',
			'Note 3',
		]);
		const texts = [...stage.sim.comments.values()]
			.filter((comment) => comment.task_uid === task.uid)
			.map((comment) => comment.text)
			.sort();
		expect(texts).toEqual(['Note 1', 'Note 2', 'Note 3']);
	}, 300_000);

	it('Get Many with Assignee UID {{ $json.assignee }} on items without that key fails naming the item and the filter, instead of listing every task', async () => {
		stage.sim.clearRequests();
		const workflow = manualWorkflow(wid('Filter'), 'e2e: get many with a filter typo', [
			codeNode('People', [{ Assignee: '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f' }]),
			backlogNode('List', {
				resource: 'task',
				operation: 'getAll',
				returnAll: true,
				filters: { assignee_uid: '={{ $json.assignee }}' },
			}),
		]);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(1);
		const error = nodeError(result.run, 'List') ?? runError(result.run);
		expect(error?.message).toBe(
			'Item 0: the filter "Assignee UID" is empty: its expression resolved to nothing',
		);
		expect(stage.sim.requests).toHaveLength(0);
	}, 300_000);

	it('Sync Backlog with Map Automatically never moves a task of another source: an input item whose uid names a billing task is an error row with Continue On Fail, an error naming the item without it, and the task is unchanged', async () => {
		const [billing] = stage.sim.seedTasks(1, () => ({
			fields: { title: 'Invoice 77 disputed', ticket_id: 'B-77', source: 'e2e-billing' },
		}));
		const before = JSON.stringify(stage.sim.tasks.get(billing.uid));
		const items = (prefix: string) => [
			{ id: `${prefix}-1`, title: `${prefix} one` },
			{ id: `${prefix}-2`, title: `${prefix} hijack`, uid: billing.uid },
		];
		const sync = (name: string, sourceValue: string, settings: Record<string, unknown> = {}) =>
			backlogNode(
				name,
				{ resource: 'task', operation: 'syncBacklog', inputData: 'autoMap', sourceValue },
				settings,
			);
		// One execution: the Continue On Fail branch first, then the one without it, which ends the run.
		const workflow = manualWorkflow(
			wid('Source'),
			'e2e: sync with a uid of another source',
			[
				codeNode('Tickets CoF', items('SC')),
				sync('Sync CoF', 'e2e-helpdesk-cof', { onError: 'continueRegularOutput' }),
			],
			[codeNode('Tickets', items('SS')), sync('Sync', 'e2e-helpdesk')],
		);
		const result = await importAndRun(stage, workflow, 1);
		expect(result.code).toBe(1);

		const rows = nodeItems(result.run, 'Sync CoF');
		expect(rows.map((row) => [row.json.external_id, row.json.action])).toEqual([
			['SC-1', 'create'],
			['SC-2', 'conflict'],
		]);
		expect(rows[1].json.task_source).toBe('e2e-billing');
		expect(rows[1].json.error).toMatch(
			/^Item 1: the task of ticket SC-2 .*belongs to source "e2e-billing", not "e2e-helpdesk-cof"/,
		);
		expect(rows[1].pairedItem).toMatchObject({ item: 1 });

		const error = nodeError(result.run, 'Sync') ?? runError(result.run);
		expect(error?.message).toMatch(
			/^Item 1: the task of ticket SS-2 .*belongs to source "e2e-billing", not "e2e-helpdesk"/,
		);
		expect(tasksOf('e2e-helpdesk')).toHaveLength(0);
		expect(JSON.stringify(stage.sim.tasks.get(billing.uid))).toBe(before);
	}, 300_000);
});
