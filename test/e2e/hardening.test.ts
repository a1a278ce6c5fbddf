/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// Hardening (issue 11) in a real n8n, both majors (TASK_BACKLOG_E2E_MAJORS=2 runs one), the package installed from
// its tarball:
//  - a Base URL that redirects to another origin fails with an error naming the Location, and the other origin
//    receives no request and no token, in a node run (`n8n execute`) and in n8n's own credential test (REST);
//  - an External ID expression yielding an object fails before any request;
//  - the same signed webhook delivered twice to the Task Backlog Trigger (secret in the Task Backlog Webhook API
//    credential) starts one execution (`n8n start`), and so does a flat event `{id, type, uid}` re-sent with a new
//    timestamp (issue 44); with Drop Repeated Deliveries given the text "false" by an expression, a repeat runs again;
//  - a trigger as added now (version 1.2) with a credential that leaves Signature Covers Timestamp at its default
//    (off) still requires the signature over the timestamp: a body signed alone gets 401 (issue 47).
import { createHmac, randomUUID } from 'crypto';
import { createServer, type IncomingMessage, type Server } from 'http';
import type { AddressInfo } from 'net';
import { networkInterfaces } from 'os';

import type { N8nMajor, N8nServer } from '../../tools/n8n/n8n';
import type { Stage } from './lib/backlog';
import {
	backlogNode,
	codeNode,
	http,
	importAndRun,
	log,
	manualWorkflow,
	nodeError,
	PKG,
	printTimings,
	runError,
	setUpStage,
	timed,
	TOKEN,
	waitFor,
} from './lib/backlog';
import { eventHookWorkflow, refusalsWorkflow, syncHookWorkflow } from './lib/syncWorkflows';
import { ageTasks } from '../helpers/age';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';

/** An item of Sync Backlog's output (Changes and Summary) as a webhook answers it. */
interface SyncRow {
	action: string;
	external_id?: string;
	counts?: Record<string, number>;
	[key: string]: unknown;
}

/** The uid Sync Backlog derives from a ticket ID (External ID, default namespace). */
const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);

const MAJORS = (process.env.TASK_BACKLOG_E2E_MAJORS ?? '2,1')
	.split(',')
	.map((m) => Number(m.trim()) as N8nMajor);
const TASK_UID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
const WEBHOOK_SECRET = 'e2e-webhook-secret-7c1d';
const REDIRECT_CREDENTIAL = { id: 'hardenRedirect01', name: 'Task Backlog (redirecting Base URL)' };
const WEBHOOK_CREDENTIAL = { id: 'hardenWebhook001', name: 'Task Backlog Webhook (e2e)' };
/** The same secret, Signature Covers Timestamp left at its default (off): stored as nothing, as n8n's editor saves it. */
const DEFAULTS_CREDENTIAL = { id: 'hardenWebhook002', name: 'Task Backlog Webhook (defaults)' };

interface Recorder {
	origin: string;
	received: Array<{ url: string; authorization?: string }>;
	stop(): Promise<void>;
}

/** The machine's own non-loopback IPv4 address: a host that is not loopback yet reachable from n8n. */
const publicAddress = Object.values(networkInterfaces())
	.flat()
	.find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

/** A plain server (on 127.0.0.1 by default) that records what reaches it; stopped by the test, or after 20 minutes. */
async function recorder(
	answer: (req: IncomingMessage) => {
		status: number;
		headers?: Record<string, string>;
		body: unknown;
	},
	host = '127.0.0.1',
): Promise<Recorder> {
	const received: Recorder['received'] = [];
	const server: Server = createServer((req, res) => {
		received.push({ url: req.url ?? '', authorization: req.headers.authorization });
		const { status, headers, body } = answer(req);
		res.writeHead(status, { 'content-type': 'application/json', ...headers });
		res.end(JSON.stringify(body));
	});
	await new Promise<void>((resolve) => server.listen(0, host, resolve));
	const timer = setTimeout(() => server.close(), 20 * 60_000);
	timer.unref();
	return {
		origin: `http://${host}:${(server.address() as AddressInfo).port}`,
		received,
		stop: async () => {
			clearTimeout(timer);
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

afterAll(() => printTimings('hardening'));

describe.each(MAJORS)('hardening in real n8n %i.x', (major) => {
	let stage: Stage;
	let server: N8nServer | undefined;
	let otherOrigin: Recorder;
	let redirecting: Recorder;
	const webhookId = randomUUID();
	const webhookWorkflowId = `hardenWebhook${major}`.padEnd(16, '0');
	/** The same trigger with Drop Repeated Deliveries given the text "false" by an expression (issue 44). */
	const repeatsWebhookId = randomUUID();
	const repeatsWorkflowId = `hardenRepeats${major}`.padEnd(16, '0');
	/** A trigger as added now (version 1.2, its defaults) with a credential that leaves Signature Covers Timestamp off. */
	const newTriggerWebhookId = randomUUID();
	const newTriggerWorkflowId = `hardenNewTrig${major}`.padEnd(16, '0');
	/** Sync Backlog around webhooks: two Sync workflows of one source and an event's Create or Update by External ID. */
	const syncHookIds = ['A', 'B', 'E'].map((which) => `hardenSync${which}${major}`.padEnd(16, '0'));
	const syncPath = (which: 'A' | 'B' | 'event') => `e2e-sync-${which}`;
	const refusalsId = `hardenSyncRef${major}`.padEnd(16, '0');

	/** A signed webhook that comments "Delivery <delivery>" on the event's task (nested `data.task.uid`, or flat `uid`). */
	const webhookWorkflow = (
		id = webhookWorkflowId,
		hookId = webhookId,
		options: Record<string, unknown> = {},
		name = `e2e: signed webhook delivered twice (${major}.x)`,
		trigger: { typeVersion: number; credential: { id: string; name: string } } = {
			typeVersion: 1.1,
			credential: WEBHOOK_CREDENTIAL,
		},
	) => ({
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		nodes: [
			{
				id: randomUUID(),
				name: 'Signed event',
				type: `${PKG}.taskBacklogTrigger`,
				typeVersion: trigger.typeVersion,
				position: [0, 0],
				webhookId: hookId,
				parameters: { authentication: 'hmacSha256', options },
				credentials: { taskBacklogWebhookApi: trigger.credential },
			},
			{
				id: randomUUID(),
				position: [240, 0],
				...backlogNode('Comment', {
					resource: 'comment',
					operation: 'create',
					task: {
						__rl: true,
						mode: 'id',
						value: '={{ $json.data ? $json.data.task.uid : $json.uid }}',
					},
					text: '={{ "Delivery " + $json.delivery }}',
				}),
			},
		],
		connections: { 'Signed event': { main: [[{ node: 'Comment', type: 'main', index: 0 }]] } },
	});
	const repeatsWorkflow = () =>
		webhookWorkflow(
			repeatsWorkflowId,
			repeatsWebhookId,
			{ dropRepeats: '={{ "false" }}' },
			`e2e: Drop Repeated Deliveries "false" by an expression (${major}.x)`,
		);
	const newTriggerWorkflow = () =>
		webhookWorkflow(
			newTriggerWorkflowId,
			newTriggerWebhookId,
			{},
			`e2e: a new trigger (1.2) with its defaults (${major}.x)`,
			{ typeVersion: 1.2, credential: DEFAULTS_CREDENTIAL },
		);
	/** The body signed over `timestamp.body` with the credential's secret, as headers. */
	const signedHeaders = (body: string, timestamp = String(Math.floor(Date.now() / 1000))) => ({
		'x-backlog-timestamp': timestamp,
		'x-backlog-signature': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(`${timestamp}.${body}`).digest('hex')}`,
	});
	const commentsSaying = (text: string) =>
		[...stage.sim.comments.values()].filter(
			(comment) => comment.task_uid === TASK_UID && comment.text === text,
		);
	/** n8n started (by the first test that needs it), and the webhook at `path` registered. */
	const serving = async (path: string) => {
		if (!server)
			server = await timed(`n8n ${major}.x start`, () =>
				stage.folder.start({ timeoutMs: 180_000, maxLifetimeMs: 15 * 60_000 }),
			);
		await stage.folder.waitForWebhook(server.baseUrl, path, 120_000);
		return server;
	};

	beforeAll(async () => {
		stage = await setUpStage(major);
		stage.sim.seedTasks(1, () => ({ uid: TASK_UID, fields: { title: 'Webhook target' } }));
		otherOrigin = await recorder(() => ({
			status: 200,
			body: { uid: TASK_UID, status: 'TODO', fields: { title: 'From the other origin' } },
		}));
		redirecting = await recorder((req) => ({
			status: 302,
			headers: { location: `${otherOrigin.origin}${req.url ?? '/'}` },
			body: {},
		}));
		await stage.folder.importCredentials([
			{
				...REDIRECT_CREDENTIAL,
				type: 'taskBacklogApi',
				data: { baseUrl: `${redirecting.origin}/api/v1`, token: TOKEN },
			},
			{
				...WEBHOOK_CREDENTIAL,
				type: 'taskBacklogWebhookApi',
				data: { secret: WEBHOOK_SECRET, signatureCoversTimestamp: true },
			},
			{ ...DEFAULTS_CREDENTIAL, type: 'taskBacklogWebhookApi', data: { secret: WEBHOOK_SECRET } },
		]);
		// One import and one activation for the webhook workflows (each n8n command boots n8n).
		await stage.folder.importWorkflow([
			webhookWorkflow(),
			repeatsWorkflow(),
			newTriggerWorkflow(),
			syncHookWorkflow(syncHookIds[0], syncPath('A')),
			syncHookWorkflow(syncHookIds[1], syncPath('B')),
			eventHookWorkflow(syncHookIds[2], syncPath('event')),
			refusalsWorkflow(refusalsId),
		]);
		const webhookWorkflowIds = [
			webhookWorkflowId,
			repeatsWorkflowId,
			newTriggerWorkflowId,
			...syncHookIds,
		];
		await timed(`n8n ${major}.x activate ${webhookWorkflowIds.join(', ')}`, () =>
			stage.folder.activateAll(webhookWorkflowIds),
		);
	}, 30 * 60_000);

	afterAll(async () => {
		if (server) await timed(`n8n ${major}.x stop`, () => server!.stop());
		await otherOrigin?.stop();
		await redirecting?.stop();
		await stage?.dispose();
	}, 120_000);

	test(
		'a Base URL that redirects to another origin fails naming the Location; the other origin receives no request and no token',
		async () => {
			const workflow = manualWorkflow(
				`hardenRedirWf${major}`.padEnd(16, '0'),
				`e2e: redirecting Base URL (${major}.x)`,
				[
					backlogNode(
						'Get',
						{
							resource: 'task',
							operation: 'get',
							task: { __rl: true, mode: 'id', value: TASK_UID },
						},
						{
							credentials: { taskBacklogApi: REDIRECT_CREDENTIAL },
						},
					),
				],
			);
			const result = await importAndRun(stage, workflow, 1);
			expect(result.code).toBe(1);
			const error = nodeError(result.run, 'Get') ?? runError(result.run);
			log(`n8n ${major}.x redirect error: ${error?.message}`);
			expect(error?.message).toContain(`${otherOrigin.origin}/api/v1/tasks/${TASK_UID}`);
			expect(error?.message).toMatch(/redirected \(302\)/);
			expect(redirecting.received.length).toBeGreaterThanOrEqual(1);
			expect(otherOrigin.received).toEqual([]);
			expect(result.stdout + result.stderr).not.toContain(TOKEN);
		},
		5 * 60_000,
	);

	test(
		'an External ID expression yielding an object fails before any request',
		async () => {
			const since = stage.sim.requests.length;
			const workflow = manualWorkflow(
				`hardenObjIdWf${major}`.padEnd(16, '0'),
				`e2e: object external id (${major}.x)`,
				[
					codeNode('Tickets', [
						{ ticket: { id: 1 }, title: 'One' },
						{ ticket: { id: 2 }, title: 'Two' },
					]),
					backlogNode('Upsert', {
						resource: 'task',
						operation: 'upsert',
						identifyBy: 'externalId',
						externalId: '={{ $json.ticket }}',
						title: '={{ $json.title }}',
					}),
				],
			);
			const result = await importAndRun(stage, workflow, 1);
			expect(result.code).toBe(1);
			const error = nodeError(result.run, 'Upsert') ?? runError(result.run);
			expect(error?.message).toMatch(
				/Item 0: "External ID" must be text or a number, but the value \(or its expression\) is an object/,
			);
			expect(stage.sim.requests.slice(since)).toEqual([]);
		},
		5 * 60_000,
	);

	test(
		'Sync Backlog refuses, before any request, an option whose expression resolves to nothing, Execute Once, a batch of Loop Over Items (on its loop output, or through a node that maps the tickets) and a second run for a source in one execution, and syncs a loop over sources',
		async () => {
			// Tasks an earlier sync left an hour ago: a run given part of the tickets would close the others'.
			const seed = (source: string, prefix: string, title = (i: number) => `Ticket ${i}`) =>
				stage.sim.seedTasks(4, (i) => ({
					uid: uidOf(`${prefix}-${i + 1}`),
					fields: { title: title(i + 1), ticket_id: `${prefix}-${i + 1}`, source },
				}));
			seed('e2e-refuse', 'RF');
			seed('e2e-loop', 'LP');
			seed('e2e-loop-mapped', 'LM', (i) => `Ticket ${i} (mapped)`);
			const seeded = ['e2e-refuse', 'e2e-loop', 'e2e-loop-mapped'];
			ageTasks(stage.sim, 60 * 60_000, (task) => seeded.includes(String(task.fields.source)));
			const since = stage.sim.requests.length;
			const result = await timed(`n8n ${major}.x execute Sync Backlog refusals`, () =>
				stage.folder.execute(refusalsId, { timeoutMs: 180_000 }),
			);
			if (result.code !== 0)
				log(`refusals: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
			expect(result.code).toBe(0);
			type NodeRun = {
				error?: { message: string };
				data?: { main?: Array<Array<{ json: Record<string, unknown> }>> };
			};
			const runsOf = (name: string): NodeRun[] =>
				result.run?.data?.resultData?.runData?.[name] ?? [];
			const errors = (name: string) => runsOf(name).map((run) => run.error?.message);
			const empty = (label: string, shown: string) =>
				`Item 0: "${label}" is empty: its expression resolved to ${shown}; it must be a number from 0`;
			expect(errors('Grace typo')).toEqual([empty('Close Grace Period (Minutes)', 'undefined')]);
			expect(errors('Full read null')).toEqual([empty('Full Read Every (Hours)', 'null')]);
			expect(errors('Grace empty')).toEqual([empty('Close Grace Period (Minutes)', '""')]);
			expect(errors('Sync once')).toEqual(['Sync Backlog cannot run with Execute Once']);
			// Two batches of two: each run refused, on the loop output and through the Map node alike.
			const batch = 'Sync Backlog cannot run on a batch of Loop Over Items';
			expect(errors('Sync batch')).toEqual([batch, batch]);
			expect(errors('Sync mapped')).toEqual([batch, batch]);
			expect(errors('Sync per source')).toEqual([undefined, undefined]);
			expect(errors('Sync twice')).toEqual([
				undefined,
				'Sync Backlog already synced source "e2e-twice" in this execution (run 1 of this node); run 2 would close the tasks of that run\'s tickets',
			]);
			const sent = stage.sim.requests.slice(since).map((request) => JSON.stringify(request));
			for (const source of [...seeded, 'e2e-once-v3'])
				expect(sent.filter((request) => request.includes(`"${source}"`))).toEqual([]);
			const tasks = [...stage.sim.tasks.values()];
			const ofSource = (source: string) => tasks.filter((task) => task.fields.source === source);
			for (const source of seeded)
				expect(ofSource(source).map((task) => task.status)).toEqual(Array(4).fill('TODO'));
			expect(ofSource('e2e-once-v3')).toEqual([]);
			// Two connections into one node: its first run synced its half (TW-1, TW-2), its second sent nothing.
			expect(
				ofSource('e2e-twice')
					.map((task) => [task.fields.ticket_id, task.status])
					.sort(),
			).toEqual([
				['TW-1', 'TODO'],
				['TW-2', 'TODO'],
			]);
			// The loop over sources: one run per source, each with all its tickets, summarised (Summary Only).
			for (const source of ['e2e-loop-a', 'e2e-loop-b'])
				expect(
					ofSource(source)
						.map((task) => task.fields.ticket_id)
						.sort(),
				).toEqual([`${source}-1`, `${source}-2`]);
			const summaries = runsOf('Sync per source').map((run) =>
				run.data?.main?.[0]?.map((item) => item.json),
			);
			expect(summaries).toEqual([
				[expect.objectContaining({ action: 'summary', source: 'e2e-loop-a' })],
				[expect.objectContaining({ action: 'summary', source: 'e2e-loop-b' })],
			]);
		},
		5 * 60_000,
	);

	test(
		'the same signed webhook delivered twice starts one execution; the repeat is acknowledged with 200',
		async () => {
			server = await timed(`n8n ${major}.x start`, () =>
				stage.folder.start({ timeoutMs: 180_000, maxLifetimeMs: 15 * 60_000 }),
			);
			const path = `/webhook/${webhookId}/webhook`;
			await timed(`n8n ${major}.x webhook registered`, () =>
				stage.folder.waitForWebhook(server!.baseUrl, path, 120_000),
			);
			const before = [...stage.sim.comments.values()].filter(
				(comment) => comment.task_uid === TASK_UID,
			).length;

			const body = JSON.stringify({
				type: 'task.completed',
				delivery: 1,
				data: { task: { uid: TASK_UID } },
			});
			const timestamp = String(Math.floor(Date.now() / 1000));
			const headers = {
				'x-backlog-timestamp': timestamp,
				'x-backlog-signature': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(`${timestamp}.${body}`).digest('hex')}`,
			};
			const first = await http('POST', `${server.baseUrl}${path}`, { body, headers });
			const again = await http('POST', `${server.baseUrl}${path}`, { body, headers });
			log(`n8n ${major}.x answers: ${first.status} ${first.text}; ${again.status} ${again.text}`);
			expect([first.status, again.status]).toEqual([200, 200]);
			expect(again.json).toEqual({ received: true, duplicate: true });

			const commentsOnTask = () =>
				[...stage.sim.comments.values()].filter((comment) => comment.task_uid === TASK_UID);
			await waitFor(
				'the comment of the first delivery',
				() => commentsOnTask().length > before,
				60_000,
			);
			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(commentsOnTask().length - before).toBe(1);
			expect(server.logs()).toMatch(/acknowledged a repeated delivery/);
		},
		8 * 60_000,
	);

	test(
		'a flat event {id, type, uid} re-sent with a new timestamp runs once; the repeat is acknowledged with 200',
		async () => {
			const path = `/webhook/${webhookId}/webhook`;
			const n8n = await serving(path);
			const body = JSON.stringify({
				id: `evt_${randomUUID()}`,
				type: 'task.completed',
				uid: TASK_UID,
				delivery: 'flat',
			});
			const now = Math.floor(Date.now() / 1000);
			const first = await http('POST', `${n8n.baseUrl}${path}`, {
				body,
				headers: signedHeaders(body, String(now - 5)),
			});
			const again = await http('POST', `${n8n.baseUrl}${path}`, {
				body,
				headers: signedHeaders(body, String(now)),
			});
			log(
				`n8n ${major}.x flat event: ${first.status} ${first.text}; ${again.status} ${again.text}`,
			);
			expect([first.status, again.status]).toEqual([200, 200]);
			expect(again.json).toEqual({ received: true, duplicate: true });
			await waitFor(
				'the comment of the flat event',
				() => commentsSaying('Delivery flat').length > 0,
				60_000,
			);
			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(commentsSaying('Delivery flat')).toHaveLength(1);
		},
		8 * 60_000,
	);

	test(
		'with Drop Repeated Deliveries given the text "false" by an expression, the same signed request delivered twice runs twice',
		async () => {
			const path = `/webhook/${repeatsWebhookId}/webhook`;
			const n8n = await serving(path);
			const body = JSON.stringify({
				type: 'task.completed',
				delivery: 'repeated',
				data: { task: { uid: TASK_UID, updated_at: '2024-05-01T10:00:00Z' } },
			});
			const headers = signedHeaders(body);
			const first = await http('POST', `${n8n.baseUrl}${path}`, { body, headers });
			const again = await http('POST', `${n8n.baseUrl}${path}`, { body, headers });
			log(
				`n8n ${major}.x repeats kept: ${first.status} ${first.text}; ${again.status} ${again.text}`,
			);
			// Both accepted and neither acknowledged as a repeat (n8n answers a started execution with its own text).
			expect([first.status, again.status]).toEqual([200, 200]);
			expect(again.text).not.toMatch(/duplicate/);
			await waitFor(
				'the comments of both deliveries',
				() => commentsSaying('Delivery repeated').length >= 2,
				60_000,
			);
			expect(commentsSaying('Delivery repeated')).toHaveLength(2);
		},
		8 * 60_000,
	);

	test(
		'a new trigger (version 1.2) covers the timestamp by default: a captured body and signature given a fresh timestamp get 401 and run nothing; a signature over the timestamp runs',
		async () => {
			const path = `/webhook/${newTriggerWebhookId}/webhook`;
			const n8n = await serving(path);
			const now = Math.floor(Date.now() / 1000);
			const captured = JSON.stringify({
				type: 'task.completed',
				uid: TASK_UID,
				delivery: 'captured',
			});
			// Signed over the body alone ten minutes ago (as a service that does not sign the timestamp), re-sent now.
			const replayed = await http('POST', `${n8n.baseUrl}${path}`, {
				body: captured,
				headers: {
					'x-backlog-timestamp': String(now),
					'x-backlog-signature': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(captured).digest('hex')}`,
				},
			});
			const body = JSON.stringify({
				type: 'task.completed',
				uid: TASK_UID,
				delivery: 'new trigger',
			});
			const good = await http('POST', `${n8n.baseUrl}${path}`, {
				body,
				headers: signedHeaders(body, String(now)),
			});
			log(
				`n8n ${major}.x new trigger: ${replayed.status} ${replayed.text}; ${good.status} ${good.text}`,
			);
			expect([replayed.status, good.status]).toEqual([401, 200]);
			await waitFor(
				'the comment of the delivery signed over its timestamp',
				() => commentsSaying('Delivery new trigger').length > 0,
				60_000,
			);
			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(commentsSaying('Delivery captured')).toHaveLength(0);
		},
		8 * 60_000,
	);

	/** POSTs to one of the Sync workflows' webhooks; answers the items the workflow ended with. */
	const postSync = async (which: 'A' | 'B' | 'event', body: object) => {
		const running = await serving(`/webhook/${syncPath(which)}`);
		const answer = await http('POST', `${running.baseUrl}/webhook/${syncPath(which)}`, { body });
		if (answer.status !== 200) log(`${which}: ${answer.status} ${answer.text}`);
		expect(answer.status).toBe(200);
		return ([] as SyncRow[]).concat(answer.json as SyncRow | SyncRow[]);
	};
	const tickets = (source: string, ids: string[]) => ({
		source,
		tickets: ids.map((id) => ({ id, title: `Ticket ${id}` })),
	});
	const taskOf = (source: string, id: string) =>
		[...stage.sim.tasks.values()].find(
			(task) => task.fields.source === source && task.fields.ticket_id === id,
		);
	const seedOpen = (source: string, ids: string[]) => {
		stage.sim.seedTasks(ids.length, (i) => ({
			uid: uidOf(ids[i]),
			fields: { title: `Ticket ${ids[i]}`, ticket_id: ids[i], source },
		}));
		ageTasks(stage.sim, 60 * 60_000, (task) => task.fields.source === source);
	};

	test(
		"an event's Create or Update by External ID after the Sync's tickets were read is kept open, not closed; the next run, past the Close Grace Period, closes such a task only when its ticket is really gone",
		async () => {
			const source = 'e2e-event';
			seedOpen(source, ['EV-1', 'EV-2', 'EV-3']);
			// The Sync's upstream has read EV-1..EV-3; then tickets EV-4 and EV-5 open and their events create tasks.
			const read = tickets(source, ['EV-1', 'EV-2', 'EV-3']);
			for (const id of ['EV-4', 'EV-5'])
				await postSync('event', { source, id, title: `Ticket ${id}` });
			expect(taskOf(source, 'EV-5')?.status).toBe('TODO');

			const first = await postSync('A', read);
			expect(first).toEqual([
				expect.objectContaining({
					action: 'summary',
					read: 'full',
					counts: expect.objectContaining({ close: 0, kept_open: 2, unchanged: 3 }),
				}),
			]);
			expect(['EV-4', 'EV-5'].map((id) => taskOf(source, id)?.status)).toEqual(['TODO', 'TODO']);

			// An hour later: EV-4 is among the tickets read, EV-5 is gone (closed before the next read).
			ageTasks(stage.sim, 60 * 60_000, (task) => task.fields.source === source);
			const next = await postSync('A', tickets(source, ['EV-1', 'EV-2', 'EV-3', 'EV-4']));
			expect(next.map((row) => [row.action, row.external_id])).toEqual([
				['close', 'EV-5'],
				['summary', undefined],
			]);
			expect(next[1].counts).toMatchObject({ close: 1, kept_open: 0 });
			expect(['EV-4', 'EV-5'].map((id) => taskOf(source, id)?.status)).toEqual(['TODO', 'DONE']);
		},
		5 * 60_000,
	);

	test(
		"two Sync workflows of one source running at once in one n8n never close each other's new tasks: the one that starts while the other writes keeps its new task open",
		async () => {
			const source = 'e2e-overlap';
			seedOpen(source, ['OL-1', 'OL-2', 'OL-3', 'OL-9']);
			await serving(`/webhook/${syncPath('B')}`);
			// Closes (PATCH) answered 1.5 s late: Sync A, having created A-1, is still closing OL-9 when Sync B starts.
			stage.sim.configure({
				faults: { latencyMs: [1500, 1500], only: (request) => request.method === 'PATCH' },
			});
			try {
				const since = stage.sim.requests.length;
				let aEnded = 0;
				const a = postSync('A', tickets(source, ['OL-1', 'OL-2', 'OL-3', 'A-1'])).finally(
					() => (aEnded = Date.now()),
				);
				await waitFor(
					'Sync A to have created A-1 and to be closing OL-9',
					() =>
						taskOf(source, 'A-1') &&
						stage.sim.requests
							.slice(since)
							.some((request) => request.method === 'PATCH' && request.status === 0),
					60_000,
					20,
				);
				const bStarted = Date.now();
				const [rowsA, rowsB] = await Promise.all([
					a,
					postSync('B', tickets(source, ['OL-1', 'OL-2', 'OL-3', 'B-1'])),
				]);
				log(`n8n ${major}.x overlap: A ended ${aEnded - bStarted} ms after B started`);
				expect(aEnded).toBeGreaterThan(bStarted);
				const actions = (rows: SyncRow[]) =>
					rows
						.filter((row) => row.action !== 'summary')
						.map((row) => [row.action, row.external_id]);
				expect(actions(rowsA)).toEqual([
					['create', 'A-1'],
					['close', 'OL-9'],
				]);
				// B read the source after A created A-1 (not in B's input, seconds old): kept open.
				expect(actions(rowsB)).toContainEqual(['create', 'B-1']);
				expect(actions(rowsB).filter(([action]) => action === 'close')).not.toContainEqual([
					'close',
					'A-1',
				]);
				expect(rowsB[rowsB.length - 1].counts?.kept_open).toBeGreaterThanOrEqual(1);
				expect(
					['OL-1', 'OL-2', 'OL-3', 'A-1', 'B-1', 'OL-9'].map((id) => taskOf(source, id)?.status),
				).toEqual(['TODO', 'TODO', 'TODO', 'TODO', 'TODO', 'DONE']);
			} finally {
				stage.sim.configure({ faults: undefined });
			}
		},
		5 * 60_000,
	);

	let cookie: string | undefined;
	/** n8n's own credential test through its REST API (the owner is set up on first use). */
	const credentialTest = async (data: Record<string, unknown>) => {
		if (!server)
			server = await stage.folder.start({ timeoutMs: 180_000, maxLifetimeMs: 15 * 60_000 });
		if (!cookie) {
			const owner = await http('POST', `${server.baseUrl}/rest/owner/setup`, {
				body: {
					email: 'owner@example.com',
					firstName: 'E2E',
					lastName: 'Owner',
					password: 'E2e-owner-passw0rd',
				},
			});
			expect(owner.status).toBe(200);
			cookie = String(([] as string[]).concat(owner.headers['set-cookie'] ?? [])[0] ?? '').split(
				';',
			)[0];
		}
		return await http('POST', `${server.baseUrl}/rest/credentials/test`, {
			headers: { cookie },
			body: { credentials: { ...REDIRECT_CREDENTIAL, type: 'taskBacklogApi', data } },
		});
	};

	test(
		"n8n's credential test does not follow a redirect: it fails, and the other origin receives nothing",
		async () => {
			const received = otherOrigin.received.length;
			const answer = await credentialTest({
				baseUrl: `${redirecting.origin}/api/v1`,
				token: TOKEN,
			});
			log(`n8n ${major}.x credential test of a redirecting Base URL: ${answer.text}`);
			expect(answer.status).toBe(200);
			expect(answer.json.data.status).toBe('Error');
			// 2.x applies the credential's rule for a 302; 1.123 shows its generic text for a status (see triggers.test.ts).
			if (major === 2) expect(answer.json.data.message).toMatch(/redirect \(302\)/);
			expect(otherOrigin.received.length).toBe(received);
			expect(answer.text).not.toContain(TOKEN);
		},
		5 * 60_000,
	);

	(publicAddress ? test : test.skip)(
		"n8n's credential test sends nothing to a plain http:// Base URL on a non-loopback host unless Allow Insecure HTTP is on",
		async () => {
			const api = await recorder(() => ({ status: 200, body: { uid: 'me' } }), publicAddress);
			try {
				const refused = await credentialTest({ baseUrl: `${api.origin}/api/v1`, token: TOKEN });
				log(`n8n ${major}.x credential test of a plain http:// Base URL: ${refused.text}`);
				expect(refused.json.data.status).toBe('Error');
				expect(refused.json.data.message).toMatch(/Allow Insecure HTTP/);
				expect(api.received).toEqual([]);
				const allowed = await credentialTest({
					baseUrl: `${api.origin}/api/v1`,
					token: TOKEN,
					allowInsecureHttp: true,
				});
				expect(allowed.json.data).toMatchObject({ status: 'OK' });
			} finally {
				await api.stop();
			}
		},
		5 * 60_000,
	);
});
