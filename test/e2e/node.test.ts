// The Task Backlog node in a real n8n (both majors), installed from its npm tarball, against the simulator of the
// service running in this jest process. Each workflow is run with `n8n execute` and the simulator's state is checked
// afterwards. Independent checks share one execution where that stays readable (one execute costs seconds).
import type { ExecuteResult, N8nMajor } from '../../tools/n8n/n8n';
import type { Stage } from './lib/backlog';
import {
	backlogNode,
	codeNode,
	CREDENTIAL_NAME,
	credentialData,
	http,
	importAndRun,
	log,
	manualWorkflow,
	nodeError,
	nodeItems,
	nodeOutput,
	printTimings,
	runError,
	setUpStage,
	timed,
	TOKEN,
} from './lib/backlog';
import { countRequests, readingsFor } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';

const byId = (value: string) => ({ __rl: true, mode: 'id', value });
const CREATED_UID = '7a0f8a52-3c1e-4f5b-9e2d-0c6b1a2f3e41';
const WRITE = /^(PUT|PATCH|POST|DELETE)$/;
/** Requests that write (the bulk reads before a write, POST /tasks/query, are reads). */
const writesOf = <T extends { method: string; path: string }>(requests: T[]): T[] =>
	requests.filter((request) => WRITE.test(request.method) && request.path !== '/tasks/query');

/** Sync Backlog of tickets `{ id, subject }`, of the source `e2e-sync` unless `parameters` say otherwise. */
const syncNode = (
	name: string,
	parameters: Record<string, unknown> = {},
	settings: Record<string, unknown> = {},
) =>
	backlogNode(
		name,
		{
			resource: 'task',
			operation: 'syncBacklog',
			externalId: '={{ $json.id }}',
			title: '={{ $json.subject }}',
			sourceValue: 'e2e-sync',
			...parameters,
		},
		settings,
	);

/** Three open tickets, then Sync Backlog of the source `e2e-sync` (S-0 of that source is no longer open). */
const syncBranch = (name: string, parameters: Record<string, unknown> = {}) => [
	codeNode('Tickets', [
		{ id: 'S-1', subject: 'Sync one' },
		{ id: 'S-2', subject: 'Sync two' },
		{ id: 'S-3', subject: 'Sync three' },
	]),
	syncNode(name, parameters),
];

afterAll(() => printTimings('node'));

describe.each([2, 1] as N8nMajor[])('Task Backlog node in real n8n %i.x', (major) => {
	let stage: Stage;
	const wid = (name: string) => `e2eNode${major}${name}`.slice(0, 16).padEnd(16, '0');

	beforeAll(async () => {
		stage = await setUpStage(major);
	}, 30 * 60_000);

	afterAll(async () => {
		await stage?.dispose();
	}, 120_000);

	/** Runs a workflow and returns the run; the simulator's request log holds only this run's requests. */
	async function run(
		workflow: { id: string; name: string },
		expectCode = 0,
	): Promise<ExecuteResult> {
		stage.sim.clearRequests();
		const result = await importAndRun(stage, workflow, expectCode);
		expect(result.code).toBe(expectCode);
		expect(result.run).toBeDefined();
		return result;
	}

	describe('one run: create + get, upsert twice, close, comment create + list', () => {
		let result: ExecuteResult;

		beforeAll(async () => {
			const workflow = manualWorkflow(
				wid('Lifecycle'),
				'e2e: task lifecycle',
				[
					backlogNode('Create', {
						resource: 'task',
						operation: 'create',
						title: 'Call back the customer',
						url: 'https://tickets.example.com/77',
						customFields: { field: [{ name: 'team', value: 'support' }] },
						additionalFields: { uid: CREATED_UID },
					}),
					backlogNode('Get', {
						resource: 'task',
						operation: 'get',
						task: byId('={{ $json.uid }}'),
					}),
					backlogNode('Close', {
						resource: 'task',
						operation: 'close',
						task: byId(`={{ $('Create').item.json.uid }}`),
					}),
					backlogNode('Comment', {
						resource: 'comment',
						operation: 'create',
						task: byId(`={{ $('Create').item.json.uid }}`),
						text: 'Customer called back; closing.',
					}),
					backlogNode('List comments', {
						resource: 'comment',
						operation: 'getAll',
						task: byId(`={{ $('Create').item.json.uid }}`),
						returnAll: true,
					}),
				],
				[
					backlogNode('Upsert first', {
						resource: 'task',
						operation: 'upsert',
						identifyBy: 'externalId',
						externalId: 'TICKET-1042',
						title: 'Printer jams',
					}),
					backlogNode('Upsert again', {
						resource: 'task',
						operation: 'upsert',
						identifyBy: 'externalId',
						externalId: 'TICKET-1042',
						title: 'Printer jams on every job',
						customFields: { field: [{ name: 'priority', value: 'high' }] },
					}),
				],
			);
			result = await run(workflow);
		}, 5 * 60_000);

		test('Create writes the task with its client-chosen uid, and Get reads it back', () => {
			const task = stage.sim.tasks.get(CREATED_UID)!;
			expect(task.fields).toMatchObject({
				title: 'Call back the customer',
				url: 'https://tickets.example.com/77',
				team: 'support',
			});
			expect(nodeOutput(result.run, 'Create')).toEqual([
				expect.objectContaining({ uid: CREATED_UID }),
			]);
			expect(nodeOutput(result.run, 'Get')).toEqual([
				expect.objectContaining({
					uid: CREATED_UID,
					title: 'Call back the customer',
					url: 'https://tickets.example.com/77',
				}),
			]);
			expect(countRequests(stage.sim, 'PUT', `/tasks/${CREATED_UID}`)).toBe(1);
			// Create reads the uid before writing (GET: one task, archived or not), then Get reads the task.
			expect(countRequests(stage.sim, 'GET', `/tasks/${CREATED_UID}`)).toBe(2);
		});

		test('Close sets the task to DONE', () => {
			expect(stage.sim.tasks.get(CREATED_UID)!.status).toBe('DONE');
			expect(stage.sim.tasks.get(CREATED_UID)!.done_at).toBeTruthy();
			expect(nodeOutput(result.run, 'Close')).toEqual([
				expect.objectContaining({ uid: CREATED_UID, status: 'DONE' }),
			]);
		});

		test('Comment Create adds the comment to the task, and Get Many lists it', () => {
			const comments = [...stage.sim.comments.values()].filter(
				(comment) => comment.task_uid === CREATED_UID,
			);
			expect(comments.map((comment) => comment.text)).toEqual(['Customer called back; closing.']);
			expect(nodeOutput(result.run, 'List comments')).toEqual([
				expect.objectContaining({
					uid: comments[0].uid,
					task_uid: CREATED_UID,
					text: 'Customer called back; closing.',
				}),
			]);
		});

		test('upsert by external id twice makes one task in real n8n, with the second values', () => {
			const tasks = [...stage.sim.tasks.values()].filter(
				(task) => task.fields.ticket_id === 'TICKET-1042',
			);
			expect(tasks).toHaveLength(1);
			expect(tasks[0].fields).toMatchObject({
				title: 'Printer jams on every job',
				priority: 'high',
			});
			const first = nodeOutput(result.run, 'Upsert first')[0];
			const again = nodeOutput(result.run, 'Upsert again')[0];
			expect(first.uid).toBe(tasks[0].uid);
			expect(again.uid).toBe(tasks[0].uid);
		});
	});

	test(
		'250 items upserted in one node are sent as batch writes of the accepted size (3 of 100, or 5 of 50 after one refused), one task each',
		async () => {
			const workflow = manualWorkflow(wid('Batch250'), 'e2e: 250 items in batches', [
				codeNode(
					'250 tickets',
					"return Array.from({ length: 250 }, (_, i) => ({ json: { id: 'B-' + i, subject: 'Batch ticket ' + i } }));",
				),
				backlogNode('Upsert', {
					resource: 'task',
					operation: 'upsert',
					identifyBy: 'externalId',
					externalId: '={{ $json.id }}',
					title: '={{ $json.subject }}',
				}),
			]);
			const result = await run(workflow);
			const writes = writesOf(stage.sim.requests);
			expect(
				writes.every((request) => `${request.method} ${request.path}` === 'PUT /tasks/batch'),
			).toBe(true);
			const accepted = writes.filter((request) => request.status === 200);
			const cap = readingsFor(stage.sim.options).maxBatchSize;
			const sizes = accepted.map((request) => (request.body as { items: unknown[] }).items.length);
			expect(sizes).toEqual(
				cap >= 100
					? [100, 100, 50]
					: Array.from({ length: Math.ceil(250 / cap) }, (_, i) => Math.min(cap, 250 - i * cap)),
			);
			expect(writes.length - accepted.length).toBe(cap >= 100 ? 0 : 1);
			const batchTasks = [...stage.sim.tasks.values()].filter((task) =>
				/^B-\d+$/.test(String(task.fields.ticket_id)),
			);
			expect(batchTasks).toHaveLength(250);
			const output = nodeItems(result.run, 'Upsert');
			expect(output).toHaveLength(250);
			// every output item is paired with its input item
			expect(
				output.map((item) => [
					item.json.ticket_id ?? item.json.fields?.ticket_id,
					item.pairedItem?.item ?? item.pairedItem,
				]),
			).toEqual(Array.from({ length: 250 }, (_, index) => [`B-${index}`, index]));
		},
		5 * 60_000,
	);

	describe('one run of reads and a Sync Dry Run: Get Many over pages, Query, nothing written', () => {
		let result: ExecuteResult;
		let staleUid: string;

		beforeAll(async () => {
			stage.sim.configure({ maxPageSize: 7 });
			stage.sim.seedTasks(50, (i) => ({
				fields: { title: `Paged ${i}`, group: 'paging', rank: i },
			}));
			[{ uid: staleUid }] = stage.sim.seedTasks(1, () => ({
				fields: { title: 'Gone ticket', ticket_id: 'S-0', source: 'e2e-sync' },
			}));
			// Left by a sync an hour ago: past Sync Backlog's Close Grace Period, so it is closed, not kept open.
			ageTasks(stage.sim, 60 * 60_000, (task) => task.uid === staleUid);
			const pagingFilter = { customFields: { field: [{ name: 'group', value: 'paging' }] } };
			const workflow = manualWorkflow(
				wid('Reads'),
				'e2e: reads and dry run',
				[
					backlogNode('Get all', {
						resource: 'task',
						operation: 'getAll',
						returnAll: true,
						filters: pagingFilter,
					}),
				],
				[
					backlogNode('Get 10', {
						resource: 'task',
						operation: 'getAll',
						returnAll: false,
						limit: 10,
						filters: pagingFilter,
					}),
				],
				[
					backlogNode('Query', {
						resource: 'task',
						operation: 'query',
						queryMode: 'builder',
						combinator: 'and',
						conditions: {
							condition: [
								{ field: 'fields.group', operator: 'equals', value: 'paging' },
								{
									field: 'fields.rank',
									operator: 'greaterThanOrEqual',
									value: '45',
									valueType: 'number',
								},
								{
									field: 'fields.rank',
									operator: 'in',
									value: '46, 47',
									negated: true,
									valueType: 'number',
								},
							],
						},
						sorts: { sort: [{ field: 'fields.rank', direction: 'descending' }] },
						returnAll: true,
					}),
				],
				syncBranch('Sync dry run', { dryRun: true }),
			);
			try {
				result = await run(workflow);
			} finally {
				stage.sim.configure({ maxPageSize: 100 });
			}
		}, 5 * 60_000);

		test('Get Many with Return All follows the cursor over every page (50 tasks, 7 a page: 8 requests)', () => {
			const tasks = nodeOutput(result.run, 'Get all');
			expect(tasks).toHaveLength(50);
			expect(new Set(tasks.map((task) => task.uid)).size).toBe(50);
			const pages = stage.sim.requests.filter(
				(request) =>
					request.method === 'GET' && request.path === '/tasks' && request.query.group === 'paging',
			);
			// Get all: 8 pages (7 × 7 + 1); Get 10: 2 pages (7 + 3); both in this run
			expect(pages.length).toBe(8 + 2);
			expect(pages.filter((request) => request.query.cursor).length).toBe(7 + 1);
		});

		test('Get Many with a Limit stops at the limit', () => {
			expect(nodeOutput(result.run, 'Get 10')).toHaveLength(10);
		});

		test('Query sends the conditions (AND, >=, negated in) and the sort, and returns the matching tasks in order', () => {
			expect(nodeOutput(result.run, 'Query').map((task) => task.fields.rank)).toEqual([49, 48, 45]);
		});

		test('Sync Backlog Dry Run reports creates and closes but writes nothing', () => {
			const plan = nodeOutput(result.run, 'Sync dry run');
			expect(plan.map((row) => [row.action, row.external_id, row.dry_run])).toEqual([
				['create', 'S-1', true],
				['create', 'S-2', true],
				['create', 'S-3', true],
				['close', 'S-0', true],
			]);
			expect(
				stage.sim.requests.filter(
					(request) => WRITE.test(request.method) && request.path !== '/tasks/query',
				),
			).toEqual([]);
			expect(stage.sim.tasks.get(staleUid)!.status).toBe('TODO');
		});

		test(
			'Sync Backlog with Dry Run given the text "false" by an expression is refused before any request, naming the item and the field',
			async () => {
				// Issue 44: read as on before (nothing written, dry_run "false", no guard). A run of its own: the node's
				// error fails it (exit 1), and the simulator's log holds only its requests.
				const workflow = manualWorkflow(wid('DryText'), 'e2e: Dry Run "false" by an expression', [
					codeNode('Tickets', [{ id: 'S-1', subject: 'Sync one' }]),
					backlogNode('Sync dry run "false"', {
						resource: 'task',
						operation: 'syncBacklog',
						externalId: '={{ $json.id }}',
						title: '={{ $json.subject }}',
						sourceValue: 'e2e-sync',
						dryRun: '={{ "false" }}',
					}),
				]);
				const refused = await run(workflow, 1);
				const error = nodeError(refused.run, 'Sync dry run "false"') ?? runError(refused.run);
				log(`n8n ${major}.x Dry Run "false": ${error?.message}`);
				expect(error?.message).toBe(
					'Item 0: Dry Run must be true or false (a boolean); the expression gave the text "false"',
				);
				expect(stage.sim.requests).toEqual([]);
				expect(stage.sim.tasks.get(staleUid)!.status).toBe('TODO');
			},
			5 * 60_000,
		);

		test(
			'Sync Backlog (not dry) does what the dry run announced: 3 created, the stale task closed',
			async () => {
				const workflow = manualWorkflow(wid('Sync'), 'e2e: sync', syncBranch('Sync'));
				const synced = await run(workflow);
				expect(
					nodeOutput(synced.run, 'Sync').map((row) => [row.action, row.external_id, row.dry_run]),
				).toEqual(
					nodeOutput(result.run, 'Sync dry run').map((row) => [row.action, row.external_id, false]),
				);
				const open = [...stage.sim.tasks.values()].filter(
					(task) => task.fields.source === 'e2e-sync' && task.status !== 'DONE',
				);
				expect(open.map((task) => task.fields.ticket_id).sort()).toEqual(['S-1', 'S-2', 'S-3']);
				expect(stage.sim.tasks.get(staleUid)!.status).toBe('DONE');
				// the three upserts in one batch write; the one close alone (a single write needs no batch)
				const writes = writesOf(stage.sim.requests);
				expect(writes.map((request) => `${request.method} ${request.path}`)).toEqual([
					'PUT /tasks/batch',
					`PATCH /tasks/${staleUid}`,
				]);
			},
			5 * 60_000,
		);
	});

	test(
		"Sync Backlog v3 run again as n8n runs a schedule (n8n execute): the first run reads everything, the next reads only what changed (its summary says incremental, a few requests), an operator's close and edit in the service meanwhile are seen and undone as a full read would, and the output is the changes plus one summary; a full read right after changes nothing",
		async () => {
			// `n8n execute` runs a workflow in mode 'cli' (1.123.81 and 2.41.1 alike: commands/execute.js), and both save
			// the workflow's static data after a run in any mode but 'manual' (execution-lifecycle-hooks.js,
			// hookFunctionsSave), reading it back from the workflow's row on the next execute: the node's memory is kept
			// from run to run as under a Schedule Trigger. The workflow is imported once: an import replaces static data.
			// The Code node counts its runs in the workflow's global static data (kept the same way) to change its tickets:
			// run 1 R-1..R-120; runs 2 and 3 drop R-5, retitle R-4, add R-121; run 3 sets Full Read Every to 0.
			const source = 'e2e-schedule';
			const workflow = manualWorkflow(wid('Scheduled'), 'e2e: scheduled sync v3', [
				codeNode(
					'Tickets',
					[
						"const memory = $getWorkflowStaticData('global');",
						'memory.runs = (memory.runs ?? 0) + 1;',
						'const first = memory.runs === 1;',
						'const ids = Array.from({ length: 120 }, (_, i) => i + 1).filter((id) => first || id !== 5);',
						'if (!first) ids.push(121);',
						"return ids.map((id) => ({ json: { id: 'R-' + id, subject: !first && id === 4 ? 'Ticket 4, retitled' : 'Ticket ' + id, fullRead: memory.runs >= 3 } }));",
					].join('\n'),
				),
				syncNode(
					'Sync',
					{
						sourceValue: source,
						syncOptions: { fullReadEveryHours: '={{ $json.fullRead ? 0 : 24 }}' },
					},
					{ typeVersion: 3 },
				),
			]);
			await stage.folder.importWorkflow(workflow);
			const execute = async (label: string) => {
				stage.sim.clearRequests();
				const result = await timed(`n8n ${major}.x execute scheduled sync, ${label}`, () =>
					stage.folder.execute(workflow.id, { timeoutMs: 180_000 }),
				);
				if (result.code !== 0)
					log(`${label}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
				expect(result.code).toBe(0);
				const requests = [...stage.sim.requests];
				const figures = {
					requests: requests.length,
					listingPages: requests.filter((r) => r.method === 'GET' && r.path === '/tasks').length,
					queries: requests.filter((r) => r.path === '/tasks/query').length,
					writes: writesOf(requests).length,
					// each request, a query with its body (cut short)
					perRequest: requests.map(
						(r) =>
							`${r.method} ${r.path.replace(/[0-9a-f-]{36}/, ':uid')}${r.path === '/tasks/query' ? ` ${JSON.stringify(r.body).slice(0, 200)}` : ''}`,
					),
				};
				log(`n8n ${major}.x scheduled sync, ${label}: ${JSON.stringify(figures)}`);
				return { output: nodeItems(result.run, 'Sync'), requests, figures };
			};
			const ofSource = () =>
				[...stage.sim.tasks.values()].filter((task) => task.fields.source === source);
			const task = (id: number) => ofSource().find((t) => t.fields.ticket_id === `R-${id}`)!;
			const summaryOf = (output: ReturnType<typeof nodeItems>) => {
				// The output is the changes then one summary, last.
				expect(output.filter((item) => item.json.action === 'summary')).toHaveLength(1);
				expect(output[output.length - 1].json.action).toBe('summary');
				return output[output.length - 1];
			};
			// 5 tasks a page: a full read of the 120 tasks lists 24 pages or more, what changed fits a page or two.
			stage.sim.configure({ maxPageSize: 5 });
			try {
				const first = await execute('run 1');
				const firstSummary = summaryOf(first.output);
				expect(firstSummary.json).toMatchObject({
					source,
					read: 'full',
					dry_run: false,
					counts: { create: 120, update: 0, reopen: 0, close: 0, unchanged: 0 },
				});
				expect(first.output).toHaveLength(121);
				// The source was empty: one listing page, then its tickets read by uid (none found) and written.
				expect(first.figures.listingPages).toBe(1);
				expect(ofSource().filter((t) => t.status !== 'DONE')).toHaveLength(120);

				// Left an hour ago (past the 5-minute Close Grace Period); meanwhile an operator closes R-2 and renames R-3
				// in the service (stamped by it now, after the run's memory).
				ageTasks(stage.sim, 60 * 60_000, (t) => t.fields.source === source);
				const operator = async (id: number, body: Record<string, unknown>) => {
					const answer = await http('PATCH', `${stage.sim.url}/tasks/${task(id).uid}`, {
						body,
						headers: { authorization: `Bearer ${TOKEN}` },
					});
					expect(answer.status).toBe(200);
				};
				await operator(2, { status: 'DONE' });
				await operator(3, { fields: { ...task(3).fields, title: 'Renamed by an operator' } });

				const second = await execute('run 2');
				const summary = summaryOf(second.output);
				expect(summary.json).toMatchObject({
					source,
					read: 'incremental',
					dry_run: false,
					counts: { create: 1, update: 2, reopen: 1, close: 1, kept_open: 0, unchanged: 116 },
					close_guard: { verdict: 'allowed', closes: 1 },
				});
				expect(summary.pairedItem).toEqual({ item: 0 });
				const changes = second.output.slice(0, -1);
				expect(
					changes
						.map((item) => [item.json.action, item.json.external_id])
						.sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
				).toEqual([
					['create', 'R-121'],
					['reopen', 'R-2'],
					['update', 'R-3'],
					['update', 'R-4'],
					['close', 'R-5'],
				]);
				const change = (id: string) => changes.find((item) => item.json.external_id === id)!;
				expect(change('R-3').json.changes).toEqual({
					'fields.title': { from: 'Renamed by an operator', to: 'Ticket 3' },
				});
				expect(change('R-4').json.changes).toEqual({
					'fields.title': { from: 'Ticket 4', to: 'Ticket 4, retitled' },
				});
				expect(change('R-2').json.changes).toMatchObject({ status: { from: 'DONE', to: 'TODO' } });
				// Paired with their input items (R-121 is the last of 120); a close stands for no item: item 0.
				expect(change('R-121').pairedItem).toEqual({ item: 119 });
				expect(change('R-5').pairedItem).toEqual({ item: 0 });
				// Read only what changed: no listing of the source, a few requests for 120 tickets (seen: 9, 10 under the
				// strict profile, whose queries have no cursor; the full read of run 3: 26).
				expect(second.figures.listingPages).toBe(0);
				expect(second.figures.requests).toBeLessThanOrEqual(12);
				expect(task(2).status).toBe('TODO');
				expect(task(3).fields.title).toBe('Ticket 3');
				expect(task(4).fields.title).toBe('Ticket 4, retitled');
				expect(task(5).status).toBe('DONE');
				expect(task(121).status).toBe('TODO');

				// The same input read whole (Full Read Every 0): the incremental run left what a full read leaves.
				const third = await execute('run 3 (full read)');
				expect(third.output).toHaveLength(1);
				expect(summaryOf(third.output).json).toMatchObject({
					read: 'full',
					counts: {
						create: 0,
						update: 0,
						reopen: 0,
						unarchive: 0,
						close: 0,
						kept_open: 0,
						unchanged: 120,
					},
				});
				expect(third.figures.writes).toBe(0);
				expect(third.figures.listingPages).toBeGreaterThanOrEqual(24);
				expect(second.figures.requests).toBeLessThan(third.figures.requests);
				expect(ofSource().filter((t) => t.status !== 'DONE')).toHaveLength(120);
			} finally {
				stage.sim.configure({ maxPageSize: 100 });
			}
		},
		10 * 60_000,
	);

	test(
		'a bad token fails the workflow with the 401 message that says to check the token, and nothing more is sent',
		async () => {
			await stage.folder.importCredentials([
				{
					id: 'badTokenCredential',
					name: `${CREDENTIAL_NAME} (bad token)`,
					type: 'taskBacklogApi',
					data: credentialData(stage.sim, 'not-a-valid-token'),
				},
			]);
			const workflow = manualWorkflow(wid('BadToken'), 'e2e: bad token', [
				codeNode('Two tickets', [{ id: 'X-1' }, { id: 'X-2' }]),
				backlogNode(
					'Get many',
					{ resource: 'task', operation: 'getAll', returnAll: true },
					{
						credentials: {
							taskBacklogApi: { id: 'badTokenCredential', name: `${CREDENTIAL_NAME} (bad token)` },
						},
					},
				),
			]);
			const result = await run(workflow, 1);
			const error = nodeError(result.run, 'Get many') ?? runError(result.run);
			expect(error?.message).toMatch(/GET \/tasks failed with 401 Unauthorized/);
			expect(error?.description).toMatch(/check the token/);
			expect(`${result.stdout}\n${result.stderr}`).not.toContain('not-a-valid-token');
			// n8n's own httpRequestWithAuthentication repeats a 401 once; the node sends nothing after it (2 input items)
			expect(stage.sim.requests.every((request) => request.status === 401)).toBe(true);
			expect(stage.sim.requests.length).toBeLessThanOrEqual(2);
		},
		5 * 60_000,
	);

	test(
		'Continue On Fail: a bad item becomes an error item, the other items are written and stay paired',
		async () => {
			const [first, second] = stage.sim.seedTasks(2, (i) => ({
				fields: { title: `To close ${i}` },
			}));
			const missing = '0c8f4d8e-1111-4222-8333-444455556666';
			const workflow = manualWorkflow(
				wid('ContinueOnFail'),
				'e2e: continue on fail',
				[
					codeNode('Three new', [{ title: 'Good one' }, { title: '' }, { title: 'Good two' }]),
					backlogNode(
						'Create',
						{
							resource: 'task',
							operation: 'create',
							title: '={{ $json.title }}',
							customFields: { field: [{ name: 'group', value: 'cof' }] },
						},
						{ onError: 'continueRegularOutput' },
					),
				],
				[
					codeNode('Three to close', [{ uid: first.uid }, { uid: missing }, { uid: second.uid }]),
					backlogNode(
						'Close',
						{ resource: 'task', operation: 'close', task: byId('={{ $json.uid }}') },
						{ onError: 'continueRegularOutput' },
					),
				],
			);
			const result = await run(workflow);

			const created = nodeItems(result.run, 'Create');
			expect(created).toHaveLength(3);
			expect(created[1].json.error).toMatch(/Title/);
			expect(created[0].json.title ?? created[0].json.fields?.title).toBe('Good one');
			expect(created[2].json.title ?? created[2].json.fields?.title).toBe('Good two');
			expect(created.map((item) => item.pairedItem?.item ?? item.pairedItem)).toEqual([0, 1, 2]);
			const cof = [...stage.sim.tasks.values()].filter((task) => task.fields.group === 'cof');
			expect(cof.map((task) => task.fields.title).sort()).toEqual(['Good one', 'Good two']);

			const closed = nodeItems(result.run, 'Close');
			expect(closed).toHaveLength(3);
			expect(closed[1].json.error).toMatch(/not found/i);
			expect(closed.map((item) => item.pairedItem?.item ?? item.pairedItem)).toEqual([0, 1, 2]);
			expect(stage.sim.tasks.get(first.uid)!.status).toBe('DONE');
			expect(stage.sim.tasks.get(second.uid)!.status).toBe('DONE');
		},
		5 * 60_000,
	);
});
