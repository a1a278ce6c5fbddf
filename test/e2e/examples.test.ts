// The example workflows of examples/ in a real n8n (both majors), against the simulator: the runnable ones are
// executed from their Manual Trigger and the simulator's state is checked. The AI Agent example is run twice: as
// shipped (no chat model credential: it stops at the model, before any tool), and with its model pointed at a
// local scripted stand-in for the OpenAI API (lib/fakeOpenAi.ts), which proves the Task Backlog tool variant,
// its $fromAI parameters and the ai_tool wiring in n8n; no real language model runs (no network here). The webhook
// examples (create-and-forget, two-way-sync) run in triggers.test.ts, which serves them from `n8n start`.
import type { N8nMajor } from '../../tools/n8n/n8n';
import type { ChatRequest } from './lib/fakeOpenAi';
import { startFakeOpenAi } from './lib/fakeOpenAi';
import { ageTasks } from '../helpers/age';
import type { Stage } from './lib/backlog';
import {
	importAndRun,
	loadExample,
	log,
	nodeOutput,
	printTimings,
	runError,
	setUpStage,
	TOKEN,
} from './lib/backlog';

const fieldsOf = (stage: Stage, source: string) =>
	[...stage.sim.tasks.values()].filter((task) => task.fields?.source === source);

async function api<T = unknown>(
	stage: Stage,
	method: string,
	path: string,
	body?: unknown,
): Promise<T> {
	const res = await fetch(`${stage.sim.url}${path}`, {
		method,
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(10_000),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
	return (text ? JSON.parse(text) : undefined) as T;
}

afterAll(() => printTimings('examples'));

describe.each([2, 1] as N8nMajor[])('examples in real n8n %i.x', (major) => {
	let stage: Stage;

	beforeAll(async () => {
		stage = await setUpStage(major);
	}, 30 * 60_000);

	afterAll(async () => {
		await stage?.dispose();
	}, 120_000);

	test(
		'ticket-sync creates a task per open ticket; a re-run reopens a task closed too early and closes the one whose ticket is gone',
		async () => {
			const workflow = loadExample('ticket-sync.json');
			const first = await importAndRun(stage, workflow);
			expect(first.code).toBe(0);
			expect(nodeOutput(first.run, 'Summary')).toEqual([
				{
					created: 5,
					updated: 0,
					reopened: 0,
					unchanged: 0,
					closed: 0,
					total: 5,
					dry_run: false,
					tickets: 5,
				},
			]);
			const synced = fieldsOf(stage, 'helpdesk');
			expect(synced.map((task) => task.fields.ticket_id).sort()).toEqual([
				'HD-1001',
				'HD-1002',
				'HD-1003',
				'HD-1004',
				'HD-1005',
			]);
			const vpn = synced.find((task) => task.fields.ticket_id === 'HD-1002')!;
			expect(vpn).toMatchObject({
				status: 'TODO',
				fields: {
					title: 'VPN drops every 10 minutes',
					url: 'https://helpdesk.example.com/tickets/1002',
					priority: 'urgent',
					customer: 'Globex',
				},
			});

			// Meanwhile an operator closes HD-1002 (its ticket is still open), and a task of a ticket that is no longer
			// open in the helpdesk exists from an earlier run.
			await api(stage, 'PATCH', `/tasks/${vpn.uid}`, { status: 'DONE' });
			const stale = await api<{ uid: string }>(
				stage,
				'PUT',
				'/tasks/6d1f6a3e-0000-4000-8000-000000000999',
				{
					fields: { title: 'Old ticket', ticket_id: 'HD-0999', source: 'helpdesk' },
				},
			);
			// Left by a run an hour ago: past Sync Backlog's Close Grace Period, so its absence closes it (a task written
			// within the grace is kept open: its ticket may be newer than the input).
			ageTasks(stage.sim, 60 * 60_000, (task) => task.uid === stale.uid);
			expect(stage.sim.tasks.size).toBe(6);

			const second = await importAndRun(stage, workflow);
			expect(second.code).toBe(0);
			expect(nodeOutput(second.run, 'Summary')).toEqual([
				{
					created: 0,
					updated: 0,
					reopened: 1,
					unchanged: 4,
					closed: 1,
					total: 6,
					dry_run: false,
					tickets: 5,
				},
			]);
			expect(stage.sim.tasks.get(vpn.uid)!.status).toBe('TODO');
			expect(stage.sim.tasks.get(stale.uid)!.status).toBe('DONE');
			expect(stage.sim.tasks.size).toBe(6); // nothing duplicated
		},
		10 * 60_000,
	);

	test(
		'nightly-sync runs from its Manual Trigger and syncs the sample rows with source "spreadsheet"',
		async () => {
			const result = await importAndRun(stage, loadExample('nightly-sync.json'));
			expect(result.code).toBe(0);
			const rows = nodeOutput(result.run, 'Sync backlog');
			expect(rows.map((row) => row.action)).toEqual(['create', 'create', 'create', 'create']);
			const synced = fieldsOf(stage, 'spreadsheet');
			expect(synced.map((task) => task.fields.ticket_id).sort()).toEqual([
				'R-17',
				'R-18',
				'R-21',
				'R-22',
			]);
			expect(synced.find((task) => task.fields.ticket_id === 'R-21')!.fields).toMatchObject({
				title: 'Review supplier contract',
				owner: 'legal',
				due: '2030-03-01',
			});
			// the helpdesk tasks of the other example are not touched by a sync of another source
			expect(fieldsOf(stage, 'helpdesk').filter((task) => task.status !== 'DONE')).toHaveLength(5);
		},
		10 * 60_000,
	);

	test(
		'ai-agent-tool is accepted by n8n; without a chat model credential the run stops at the model, before any tool',
		async () => {
			const workflow = loadExample('ai-agent-tool.json');
			expect(
				workflow.nodes.filter(
					(node: { type: string }) => node.type === 'n8n-nodes-task-backlog.taskBacklogTool',
				),
			).toHaveLength(2);
			const before = stage.sim.requests.length;
			const result = await importAndRun(stage, workflow, 1);
			expect(`${result.stdout}\n${result.stderr}`).not.toMatch(
				/Unrecognized node type|is not known|Unknown node type/i,
			);
			expect(nodeOutput(result.run, 'Sample question')).toHaveLength(1);
			const error = runError(result.run);
			log(
				`n8n ${major}.x AI agent without a model credential ended with: ${error?.node?.name}: ${error?.message}`,
			);
			expect(error?.node?.name).toMatch(/AI Agent|OpenAI Chat Model/);
			expect(stage.sim.requests.length).toBe(before); // no tool was called
		},
		10 * 60_000,
	);

	test(
		'ai-agent-tool with a scripted stand-in for the chat model: the agent calls both Task Backlog tools and the comment lands on the task',
		async () => {
			// No model can run here (no network): a local OpenAI-compatible endpoint answers with scripted tool calls,
			// so what is proven is n8n's side: the tool variant of our node, $fromAI parameters, the ai_tool wiring.
			const [vpn] = stage.sim.seedTasks(1, () => ({
				fields: { title: 'Berlin VPN gateway down' },
			}));
			const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
			const toolNamed = (request: ChatRequest, description: RegExp) => {
				const tool = (request.tools ?? []).find((entry) =>
					description.test(entry.function.description ?? ''),
				);
				if (!tool)
					throw new Error(`no tool described ${description} in ${JSON.stringify(request.tools)}`);
				return tool.function.name;
			};
			const fake = await startFakeOpenAi((request, turn) => {
				if (turn === 0)
					return {
						toolCall: {
							name: toolNamed(request, /^Search the tasks/),
							arguments: { search: 'Berlin VPN' },
						},
					};
				if (turn === 1) {
					const found = JSON.stringify(
						request.messages
							.filter((message) => message.role === 'tool')
							.map((message) => message.content),
					);
					const uid = uuid.exec(found)?.[0];
					if (!uid) throw new Error(`the Find tasks result holds no task uid: ${found}`);
					return {
						toolCall: {
							name: toolNamed(request, /^Add a comment/),
							arguments: { taskUid: uid, text: 'The network team is on it.' },
						},
					};
				}
				return { content: 'Commented on "Berlin VPN gateway down": the network team is on it.' };
			});
			try {
				await stage.folder.importCredentials([
					{
						id: 'fakeOpenAiCredential',
						name: 'Scripted chat model',
						type: 'openAiApi',
						data: { apiKey: 'sk-not-a-real-key', url: fake.url },
					},
				]);
				const workflow = loadExample('ai-agent-tool.json');
				workflow.id = 'exAiAgentTool002';
				const model = workflow.nodes.find(
					(node: { name: string }) => node.name === 'OpenAI Chat Model',
				);
				model.credentials = {
					openAiApi: { id: 'fakeOpenAiCredential', name: 'Scripted chat model' },
				};
				const result = await importAndRun(stage, workflow);
				expect(result.code).toBe(0);
				expect(fake.requests).toHaveLength(3);
				expect(fake.requests[0].tools?.map((tool) => tool.function.name).sort()).toEqual([
					'Comment_on_a_task',
					'Find_tasks',
				]);
				const searches = stage.sim.requests.filter(
					(request) =>
						request.method === 'GET' &&
						request.path === '/tasks' &&
						request.query.search === 'Berlin VPN',
				);
				expect(searches).toHaveLength(1);
				const comments = [...stage.sim.comments.values()].filter(
					(comment) => comment.task_uid === vpn.uid,
				);
				expect(comments.map((comment) => comment.text)).toEqual(['The network team is on it.']);
				expect(nodeOutput(result.run, 'AI Agent')).toEqual([
					expect.objectContaining({
						output: 'Commented on "Berlin VPN gateway down": the network team is on it.',
					}),
				]);
			} finally {
				await fake.stop();
			}
		},
		10 * 60_000,
	);
});
