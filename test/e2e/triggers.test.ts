/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals, @typescript-eslint/no-explicit-any -- test code, never ships */
// Our triggers and webhook examples in a real `n8n start` (both majors), with the simulator in this jest process:
//  - two-way-sync.json activated: the simulator's signed task.completed webhook reaches the Task Backlog Trigger's
//    production URL, n8n runs the workflow, and the comment appears on that task in the simulator;
//  - requests with a bad or missing signature, or a replayed timestamp, get 401 and start nothing;
//  - create-and-forget.json activated: ticket events POSTed to its Webhook make one task per ticket; 300 at once, one
//    per execution, at 60 requests a window, of which the service refuses a few on every try (plain 400s side by
//    side, a 400 naming its value, a 403 quoting it; in another burst a 500): only those executions fail, and only
//    its own data (answer, stored execution) shows a refused value;
//  - the Poll Trigger activated with its smallest interval (every minute): a task created after the first
//    (baseline) poll is emitted by a later poll, and the workflow comments on it;
//  - the credential test (GET /accounts/me) run by n8n itself through its REST API, with a good and a bad token,
//    and the node types n8n serves include our nodes and the AI tool variant of Task Backlog.
import { createHmac } from 'crypto';

import { Agent } from 'undici';

import type { N8nMajor, N8nServer } from '../../tools/n8n/n8n';
import type { Stage } from './lib/backlog';
import {
	backlogNode,
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	credentialData,
	credentialRef,
	http,
	loadExample,
	log,
	PKG,
	printTimings,
	setUpOwner,
	setUpStage,
	timed,
	TOKEN,
	waitFor,
} from './lib/backlog';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { ContentRefusal, SimulatorOptions } from '../../tools/simulator/simulator';

const POLL_WORKFLOW_ID = 'e2ePollTrigger01';
/**
 * The burst tests' callers: each its own workflow (create-and-forget.json on a path of its own), credential and token,
 * so its own limiter in n8n and its own window on the simulator: one burst does not wait for the other's minute.
 */
interface BurstCaller {
	workflowId: string;
	path: string;
	webhookId: string;
	token: string;
	credential: { id: string; name: string };
}
/**
 * The bursts' caller: its own workflow, credential and token, at a time-scaled window of SPLIT_WINDOW_MS (a tenth of
 * the real minute, as queue-mode.test.ts) that its credential states too, and a first retry delay scaled by the same
 * tenth; two bursts in a row on it each start in a window of their own. The real minute is the benchmark's
 * (`npm run bench -- --events`).
 */
const SPLIT: BurstCaller = {
	workflowId: 'e2eEventSplit001',
	path: 'ticket-events-refused',
	webhookId: '2d6b8f1a-3c5e-4a7d-9e0b-6f8a1c3e5b08',
	token: 'e2e-split-token-7e3f',
	credential: { id: 'taskBacklogSplit01', name: 'Task Backlog (60 per 6 s, refused tickets)' },
};
const SCALE = 0.1;
const SPLIT_WINDOW_MS = 60_000 * SCALE;
const SPLIT_RETRY_DELAY_MS = 2000 * SCALE;
/** The node's default Max Attempts, which the refused-ticket bursts' workflow keeps. */
const MAX_ATTEMPTS = 5;
/** The batch limit the service keeps without saying so (burstAtOnce), so the most executions one batch carries. */
const BATCH_LIMIT = 50;
/**
 * Two webhook workflows on one credential (so their executions share requests in n8n): TIMED_OUT has n8n's workflow
 * setting "Timeout Workflow" on, FOLLOWER has none.
 */
const SHARED_CREDENTIAL = {
	token: 'e2e-shared-token-5b2e',
	credential: { id: 'taskBacklogShared1', name: 'Task Backlog (a timed-out sender)' },
};
const onSharedCredential = (workflowId: string, path: string, webhookId: string): BurstCaller => ({
	workflowId,
	path,
	webhookId,
	...SHARED_CREDENTIAL,
});
const TIMED_OUT = onSharedCredential(
	'e2eEventTimeout1',
	'ticket-events-timeout',
	'9b3f1c7e-2a4d-4e8b-b6f0-5c1d3e7a9f06',
);
const FOLLOWER = onSharedCredential(
	'e2eEventFollow01',
	'ticket-events-follower',
	'4e8a2c6f-1b3d-4f7a-9c5e-7d2b4f6a8c07',
);
/**
 * Every task read and write takes SLOW_MS on the service; TIMED_OUT's timeout (whole seconds, n8n's `executionTimeout`)
 * falls inside the second request of the lane: after the first follower's read (its first SLOW_MS), before the shared
 * turn TIMED_OUT's client carries ends (twice SLOW_MS), with about a second to spare on each side.
 */
const SLOW_MS = 3000;
const TIMEOUT_SECONDS = 4;
const FOLLOWERS = 5;
const BURST_EVENTS = 300;
/** The burst's two tickets refused with the same plain 400 (a): side by side, so that they share a batch. */
const REFUSED_PAIR = [137, 138] as const;
/** The burst's ticket refused with a 400 naming its value (a "poisoned" ticket). */
const POISONED_TICKET = 62;
/** The burst's ticket refused with a 403 quoting its value (c). */
const FORBIDDEN_TICKET = 212;
/** The burst's ticket answered 500 on every try (b). */
const CRASHING_TICKET = 250;
const POLL_SOURCE = 'poll-e2e';
/** A listing of the poll workflow's trigger: POST /tasks/query with a condition on its source (GET /tasks without a time filter). */
const isPollListing = (r: {
	method: string;
	path: string;
	body?: unknown;
	query: Record<string, unknown>;
}) =>
	(r.path === '/tasks/query' && JSON.stringify(r.body ?? {}).includes(POLL_SOURCE)) ||
	(r.method === 'GET' && r.path === '/tasks' && r.query.source === POLL_SOURCE);

function pollWorkflow() {
	return {
		id: POLL_WORKFLOW_ID,
		name: 'e2e: poll trigger comments on new tasks',
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		nodes: [
			{
				id: '3f0d7f0e-6a51-4e0a-9a4f-0c1d2e3f0001',
				name: 'New task',
				type: `${PKG}.taskBacklogPollTrigger`,
				typeVersion: 1,
				position: [0, 0],
				parameters: {
					pollTimes: { item: [{ mode: 'everyMinute' }] },
					event: 'newTask',
					filters: { customFields: { field: [{ name: 'source', value: POLL_SOURCE }] } },
					options: {},
				},
				credentials: credentialRef,
			},
			{
				id: '3f0d7f0e-6a51-4e0a-9a4f-0c1d2e3f0002',
				position: [240, 0],
				...backlogNode('Comment', {
					resource: 'comment',
					operation: 'create',
					task: { __rl: true, mode: 'id', value: '={{ $json.uid }}' },
					text: 'Seen by the poll trigger',
				}),
			},
		],
		connections: { 'New task': { main: [[{ node: 'Comment', type: 'main', index: 0 }]] } },
	};
}

/**
 * create-and-forget.json as a burst test runs it: its own path and caller (60 requests per minute, as the spec
 * says), answering each event with the task it stored (Respond: When Last Node Finishes), so a failed execution shows.
 */
function burstWorkflow(example: any, caller: BurstCaller) {
	const workflow = JSON.parse(JSON.stringify(example));
	workflow.id = caller.workflowId;
	workflow.name = `e2e: one ticket per execution, many at once (${caller.path})`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters = { ...node.parameters, path: caller.path, responseMode: 'lastNode' };
			node.webhookId = caller.webhookId;
		}
		if (node.credentials?.taskBacklogApi) node.credentials = { taskBacklogApi: caller.credential };
	}
	return workflow;
}

/**
 * create-and-forget.json on the refused-ticket bursts' caller, its Create or Update's first retry delay scaled as
 * its window is (Request Options, Retry Delay): a ticket answered 500 on every try fails in seconds, not half a minute.
 */
function refusedBurstWorkflow(example: any) {
	const workflow = burstWorkflow(example, SPLIT);
	for (const node of workflow.nodes)
		if (node.type === `${PKG}.taskBacklog`)
			node.parameters = {
				...node.parameters,
				requestOptions: { retryDelayMs: SPLIT_RETRY_DELAY_MS },
			};
	return workflow;
}

/**
 * The bursts' deliveries, each on a connection of its own: a kept-alive connection that n8n closes as idle (after its
 * 5 s keep-alive timeout) just as the next burst reuses it is reset before n8n reads the request (read ECONNRESET, seen
 * once on 1.x). The service's deliveries come from another host, not from one pool.
 */
const deliveries = new Agent({ pipelining: 0 });

afterAll(async () => {
	printTimings('triggers');
	await deliveries.close();
});

/**
 * The two bursts of 300 (refused tickets of each kind among them) and the cancelled sender run in the e2e
 * project only: what they test (requests shared by executions under load, split by execution, within a deadline) does
 * not depend on the simulator's reading of the spec's open points, whose every reading the node's unit tests run
 * (unit-strict: coalescing, isolation). Each costs about a minute per major, and they must run with nothing beside
 * them (their deadlines): without them, this file's strict run is not timed and shares the machine
 * (tools/test-runner/run.ts).
 */
const loadTest = process.env.SIM_PROFILE === 'strict' ? test.skip : test;

describe.each([2, 1] as N8nMajor[])('triggers in real n8n %i.x (n8n start)', (major) => {
	let stage: Stage;
	let server: N8nServer;
	const twoWay = loadExample('two-way-sync.json');
	const createAndForget = loadExample('create-and-forget.json');
	const triggerNode = twoWay.nodes.find((node: any) => node.type === `${PKG}.taskBacklogTrigger`);
	// The example keeps its secret in a Task Backlog Webhook API credential (imported below under the example's id).
	const secret = 'e2e-webhook-secret-4f1d';
	const webhookCredential = triggerNode.credentials.taskBacklogWebhookApi as {
		id: string;
		name: string;
	};
	const triggerPath = `/webhook/${triggerNode.webhookId}/webhook`;
	const ticketPath = `/webhook/${createAndForget.nodes.find((node: any) => node.type === 'n8n-nodes-base.webhook').parameters.path}`;
	let pollBaselineAt = 0;
	let pollTaskUid = '';
	/** Created with a created_at and updated_at of years ago, as a client mirroring its own tickets may (spec 2.2). */
	let datedTaskUid = '';
	/** A task created while the Poll Trigger's first poll (at activation) was reading. */
	const DURING_BASELINE_UID = '5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8f';
	let createdDuringBaseline = false;
	/** Whether the simulator fills internal_created_at/_updated_at (lenient) or leaves them null (strict). */
	let internalStamps = true;

	const api = async (method: string, path: string, body?: object) => {
		const res = await http(method, `${stage.sim.url}${path}`, {
			body,
			headers: { authorization: `Bearer ${TOKEN}` },
		});
		if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
		return res.json;
	};
	const commentsOn = (uid: string) =>
		[...stage.sim.comments.values()].filter((comment) => comment.task_uid === uid);
	/** The texts of the comments on a task, once it has any (within `timeoutMs`). */
	const commentTexts = async (what: string, uid: string, timeoutMs: number, intervalMs = 500) =>
		(
			await waitFor(
				what,
				() => commentsOn(uid).length > 0 && commentsOn(uid),
				timeoutMs,
				intervalMs,
			)
		).map((comment) => comment.text);

	// n8n's REST API answers its owner only: set up once, on first use.
	let ownerCookie: Promise<string> | undefined;
	const n8nCookie = () => (ownerCookie ??= setUpOwner(server.baseUrl));

	/** GET of n8n's REST API (the same on 2.x and 1.x) as its owner: the answer's `data`. */
	const n8nRest = async (path: string) => {
		const answer = await http('GET', `${server.baseUrl}/rest${path}`, {
			headers: { cookie: await n8nCookie() },
		});
		if (answer.status !== 200) throw new Error(`GET /rest${path}: ${answer.status} ${answer.text}`);
		return answer.json.data;
	};

	/**
	 * The finished executions of a burst workflow started since `since`, newest first (id and status), and how many
	 * there are; only the first page (of `limit`) unless `all`. Pages follow n8n's cursor (2.x) or lastId (1.x).
	 */
	const finishedExecutions = async (
		workflowId: string,
		since: number,
		all: boolean,
		limit = 100,
	) => {
		const filter = encodeURIComponent(
			JSON.stringify({
				workflowId,
				status: ['success', 'error', 'crashed', 'canceled'],
				startedAfter: new Date(since).toISOString(),
			}),
		);
		const executions: Array<{ id: string; status: string }> = [];
		for (let next = ''; ;) {
			const page = await n8nRest(`/executions?filter=${filter}&limit=${limit}${next}`);
			executions.push(...(page.results as typeof executions));
			const last = executions[executions.length - 1];
			if (!all || page.results.length < limit || page.nextCursor === null)
				return { count: Number(page.count), executions };
			next =
				page.nextCursor === undefined
					? `&lastId=${last.id}`
					: `&cursor=${encodeURIComponent(page.nextCursor)}`;
		}
	};

	/** An execution's data as n8n stored it (a "flatted" JSON text). */
	const executionData = async (id: string): Promise<string> => {
		const { data } = await n8nRest(`/executions/${id}`);
		return typeof data === 'string' ? data : JSON.stringify(data);
	};

	/**
	 * One ticket event POSTed to a burst workflow's webhook, sent again (up to 5 times, 2 s apart) while n8n refuses it
	 * with a 503 before starting anything; `refused.byN8n` counts those refusals. A connection n8n cuts instead of
	 * answering is an answer with status 0 and the error as its text (not sent again: the execution may have started),
	 * so that one cut delivery shows which ticket it was instead of failing the whole burst at once.
	 */
	const deliverEvent = async (
		caller: BurstCaller,
		event: object,
		refused = { byN8n: 0 },
		timeoutMs = 300_000,
	) => {
		for (let attempt = 1; ; attempt++) {
			const answer = await http('POST', `${server.baseUrl}/webhook/${caller.path}`, {
				body: event,
				timeoutMs,
				dispatcher: deliveries,
			}).catch((error: Error & { code?: string }) => {
				if (error.code !== 'ECONNRESET' && error.code !== 'UND_ERR_SOCKET') throw error;
				return {
					status: 0,
					text: `connection cut: ${error.message}`,
					json: undefined,
					headers: {},
				};
			});
			if (answer.status !== 503 || attempt === 5) return answer;
			refused.byN8n++;
			await new Promise((resolve) => setTimeout(resolve, 2000));
		}
	};

	/**
	 * Ticket events POSTed at once to a burst workflow, one per execution, the service as the spec states it for
	 * this caller: 60 requests a minute (a fixed window), batches capped at 50 without saying so (a 413 that gives no
	 * number), and `service` on top; the options are set back when every event is answered. A sender of events
	 * retries what n8n itself refuses with a 503 before starting anything (n8n 1.x answers "Database is not ready!"
	 * while its SQLite health check lags under such a burst on 2 cores): the same ticket again, which Create or Update
	 * by External ID makes one task. Logs the time, the requests the service saw from the caller and n8n's 503s.
	 */
	const burstAtOnce = async (
		caller: BurstCaller,
		what: string,
		events: Array<{ ticket_id: string; subject: string }>,
		service: Partial<SimulatorOptions> = {},
	) => {
		stage.sim.configure({
			requestsPerWindow: 60,
			windowMs: 60_000,
			readings: { maxBatchSize: BATCH_LIMIT, batchTooLarge: '413' },
			...service,
		});
		try {
			const since = Date.now();
			const refused = { byN8n: 0 };
			const answers = await Promise.all(
				events.map((event) => deliverEvent(caller, event, refused)),
			);
			const refusedByN8n = refused.byN8n;
			const seconds = ((Date.now() - since) / 1000).toFixed(1);
			const requests = stage.sim.requests.filter(
				(r) => r.at >= since && r.headers.authorization === `Bearer ${caller.token}`,
			);
			log(
				`n8n ${major}.x ${what}: ${events.length} events at once, all answered in ${seconds} s, ${requests.length} requests (${requests.filter((r) => r.path === '/tasks/batch').length} batches); n8n refused ${refusedByN8n} deliveries with 503 (sent again)`,
			);
			return { since, answers, requests };
		} finally {
			stage.sim.configure({
				requestsPerWindow: 0,
				windowMs: 60_000,
				readings: { maxBatchSize: null, batchTooLarge: null } as any,
				refuseContent: [],
			});
		}
	};
	const storedTickets = (prefix: string) =>
		[...stage.sim.tasks.values()].filter((task) =>
			String(task.fields.ticket_id).startsWith(prefix),
		);

	/**
	 * A refused-ticket burst (issue 44, item 4): BURST_EVENTS ticket events at once to SPLIT's workflow, one per
	 * execution, each titled `<label> <i>` but for the tickets of `refused` (their index in the burst), whose title is
	 * their refusal's text: the service refuses those on every try, with the refusal's status and message. Watches the
	 * time until every other ticket is stored, waits until n8n has stored every execution and reads each one's data.
	 */
	const refusedBurst = async (
		label: string,
		prefix: string,
		refused: Map<number, ContentRefusal>,
	) => {
		const titleOf = (i: number) => `${label} ${i}`;
		const events = Array.from({ length: BURST_EVENTS }, (_, i) => ({
			ticket_id: `${prefix}${i}`,
			subject: refused.get(i)?.text ?? titleOf(i),
		}));
		const isStored = (task: { fields: Record<string, unknown> }) =>
			task.fields.title === titleOf(Number(String(task.fields.ticket_id).slice(prefix.length)));
		const othersStored = () =>
			storedTickets(prefix).filter(isStored).length >= BURST_EVENTS - refused.size;
		const started = Date.now();
		let othersStoredAfterMs: number | undefined;
		const watch = setInterval(() => {
			if (othersStoredAfterMs === undefined && othersStored())
				othersStoredAfterMs = Date.now() - started;
		}, 100);
		let burst: Awaited<ReturnType<typeof burstAtOnce>>;
		try {
			burst = await burstAtOnce(SPLIT, `refused-ticket burst ${label}`, events, {
				windowMs: SPLIT_WINDOW_MS,
				refuseContent: [...refused.values()],
			});
		} finally {
			clearInterval(watch);
		}
		// The last tickets can be stored less than one look (100 ms) before the last answer ends the watch.
		if (othersStoredAfterMs === undefined && othersStored())
			othersStoredAfterMs = Date.now() - started;
		const { since, answers, requests } = burst;
		const texts = [...refused.values()].map((refusal) => refusal.text);
		const carrying = (r: { body?: unknown }, text: string) =>
			JSON.stringify(r.body ?? '').includes(text);
		const requestKinds = new Map<string, number>();
		for (const r of requests) {
			const kind = `${r.method} ${r.path.replace(/[0-9a-f-]{36}/i, '{uid}')} ${r.status}`;
			requestKinds.set(kind, (requestKinds.get(kind) ?? 0) + 1);
		}
		const stored = storedTickets(prefix);
		log(
			`n8n ${major}.x refused-ticket burst ${label}: ${othersStoredAfterMs === undefined ? `the ${BURST_EVENTS - refused.size} other tickets were never all stored (${stored.filter(isStored).length} stored)` : `the ${BURST_EVENTS - refused.size} other tickets stored after ${(othersStoredAfterMs / 1000).toFixed(1)} s`}; ${requests.length} requests (${[...requestKinds].map(([kind, n]) => `${n}× ${kind}`).join(', ')}); batch sizes ${requests
				.filter((r) => r.path === '/tasks/batch')
				.map((r) => `${(r.body as any)?.items?.length ?? '?'}/${r.status}`)
				.join(
					' ',
				)}; requests carrying each refused text: ${texts.map((text) => requests.filter((r) => carrying(r, text)).length).join(', ')}; answers not 200: ${answers.flatMap((answer, i) => (answer.status === 200 ? [] : [refused.has(i) ? `${i}` : `${i} (${answer.status} ${answer.text.slice(0, 200)})`])).join(' ')}; the refused tickets answered ${[...refused.keys()].map((i) => `${answers[i].status} ${answers[i].text.slice(0, 200)}`).join(' | ')}`,
		);
		// n8n stores the executions after it answers their events: wait for all, then read what there is (the
		// assertions on their number say how many were missing).
		let storedCount = 0;
		await timed(`n8n ${major}.x refused-ticket burst ${label}: executions stored`, () =>
			waitFor(
				`the ${BURST_EVENTS} executions of refused-ticket burst ${label} stored by n8n`,
				async () =>
					(storedCount = (await finishedExecutions(SPLIT.workflowId, since, false, 1)).count) >=
					BURST_EVENTS,
				180_000,
				1000,
			).catch((error: Error) => log(`${error.message} (${storedCount} stored)`)),
		);
		const finished = (await finishedExecutions(SPLIT.workflowId, since, true)).executions;
		const executions: Array<{ id: string; status: string; data: string }> = [];
		await timed(`n8n ${major}.x refused-ticket burst ${label}: executions read`, async () => {
			for (let i = 0; i < finished.length; i += 10) {
				const some = finished.slice(i, i + 10);
				const data = await Promise.all(some.map(({ id }) => executionData(id)));
				some.forEach(({ id, status }, j) => executions.push({ id, status, data: data[j] }));
			}
		});
		const failed = executions.filter((e) => e.status !== 'success');
		log(
			`n8n ${major}.x refused-ticket burst ${label}: stored executions ${executions.length}, failed ${failed.length} (${failed.map((e) => e.status).join(', ')}); executions whose data shows each refused text: ${texts.map((text) => executions.filter((e) => e.data.includes(text)).length).join(', ')}`,
		);
		// What each failed execution failed with: the node's error, or n8n's own (a SQLite lock timed out under load).
		for (const e of failed.slice(0, 10))
			log(
				`n8n ${major}.x refused-ticket burst ${label}: execution ${e.id} failed with ${/[A-Z]+ \/tasks[^"\\]{0,200}|\w+Error: [^"\\]{0,200}/.exec(e.data)?.[0] ?? '(no message found)'}`,
			);
		return {
			answers,
			requests,
			executions,
			stored,
			isStored,
			carrying,
		};
	};

	/**
	 * What every refused-ticket burst holds: each refused ticket's execution fails and its ticket is not stored; every
	 * other execution succeeds with its own task, stored once with its values; n8n stored one execution per event, and
	 * a refused text shows in its own ticket's execution's data only, and in no other answer.
	 */
	const expectOnlyRefusedFail = (
		prefix: string,
		refused: Map<number, ContentRefusal>,
		result: Awaited<ReturnType<typeof refusedBurst>>,
	) => {
		const { answers, requests, executions, stored, isStored } = result;
		const texts = [...refused.values()].map((refusal) => refusal.text);
		answers.forEach((answer, i) => {
			if (refused.has(i)) {
				expect(answer.status).not.toBe(200);
				return;
			}
			expect(answer.status).toBe(200);
			expect(answer.json.uid).toBe(uuidV5(`${prefix}${i}`, DEFAULT_EXTERNAL_ID_NAMESPACE));
			for (const text of texts) expect(answer.text).not.toContain(text);
		});
		expect(stored.filter(isStored)).toHaveLength(BURST_EVENTS - refused.size);
		expect(stored).toHaveLength(BURST_EVENTS - refused.size);
		expect(requests.filter((r) => r.status === 429)).toHaveLength(0);
		expect(executions).toHaveLength(BURST_EVENTS);
		const failed = executions.filter((e) => e.status !== 'success');
		expect(failed).toHaveLength(refused.size);
		for (const [i, { text }] of refused) {
			// The execution of the refused ticket (its data holds the ticket id) is one of the failed ones, and the only
			// execution whose data shows the refused text.
			const own = executions.filter((e) => e.data.includes(`"${prefix}${i}"`));
			expect(own.map((e) => e.status)).toEqual([expect.not.stringMatching(/^success$/)]);
			expect(executions.filter((e) => e.data.includes(text)).map((e) => e.id)).toEqual([own[0].id]);
		}
	};

	beforeAll(async () => {
		stage = await setUpStage(major, undefined, {
			credentials: (sim) => [
				{ ...webhookCredential, type: 'taskBacklogWebhookApi', data: { secret } },
				...[TIMED_OUT].map((caller) => ({
					...caller.credential,
					type: 'taskBacklogApi',
					data: credentialData(sim, caller.token, { requestsPerMinute: 60 }),
				})),
				{
					...SPLIT.credential,
					type: 'taskBacklogApi',
					data: credentialData(sim, SPLIT.token, {
						requestsPerMinute: 60,
						rateLimitWindowSeconds: SPLIT_WINDOW_MS / 1000,
					}),
				},
			],
		});
		// A task already in the backlog: the Poll Trigger's first poll reads a few to tell whether the service fills
		// internal_updated_at (its window's own tasks come later).
		stage.sim.seedTasks(1, () => ({ fields: { title: 'Already in the backlog' } }));
		internalStamps = [...stage.sim.tasks.values()][0].internal_updated_at !== null;
		stage.sim.configure({
			tokens: [TOKEN, SHARED_CREDENTIAL.token, SPLIT.token],
		});
		const workflows = [
			twoWay,
			createAndForget,
			pollWorkflow(),
			// n8n's "Timeout Workflow" setting: `executionTimeout`, in seconds, in the workflow's settings (1.x and 2.x)
			{
				...burstWorkflow(createAndForget, TIMED_OUT),
				settings: { executionOrder: 'v1', executionTimeout: TIMEOUT_SECONDS },
			},
			burstWorkflow(createAndForget, FOLLOWER),
			refusedBurstWorkflow(createAndForget),
		];
		// One n8n run imports them all; they are all the folder holds, so they are activated together.
		await timed(`n8n ${major}.x import:workflow (${workflows.length})`, () =>
			stage.folder.importWorkflow(workflows),
		);
		await timed(`n8n ${major}.x activate (${workflows.length})`, () =>
			stage.folder.activateAll(workflows.map((workflow) => workflow.id)),
		);
		// When the activation's first poll asks for its listing, another caller creates a task: after the trigger
		// started, and shown by that listing.
		stage.sim.meanwhile(isPollListing, () => {
			stage.sim.seedTasks(1, () => ({
				uid: DURING_BASELINE_UID,
				fields: { title: 'Created while the first poll read', source: POLL_SOURCE },
			}));
			createdDuringBaseline = true;
		});
		server = await timed(`n8n ${major}.x start (ready)`, () =>
			stage.folder.start({ timeoutMs: 180_000, maxLifetimeMs: 15 * 60_000 }),
		);
		log(`n8n ${major}.x listening at ${server.baseUrl}`);
		await timed(`n8n ${major}.x webhooks registered`, async () => {
			await stage.folder.waitForWebhook(server.baseUrl, triggerPath, 120_000);
			await stage.folder.waitForWebhook(server.baseUrl, ticketPath, 120_000);
			for (const caller of [TIMED_OUT, FOLLOWER, SPLIT])
				await stage.folder.waitForWebhook(server.baseUrl, caller.path, 120_000);
		});
		// The service is told where to send its events: the trigger's production URL, signed with the shared secret.
		stage.sim.configure({ webhooks: [{ url: `${server.baseUrl}${triggerPath}`, secret }] });

		// The poll trigger polls once on activation (its baseline, nothing emitted); a task created after it is new.
		await timed(`n8n ${major}.x poll trigger baseline poll`, () =>
			waitFor(
				'the poll trigger’s first poll',
				() => stage.sim.requests.some(isPollListing),
				120_000,
			),
		);
		pollBaselineAt = Date.now();
		const created = await api('PUT', '/tasks/5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8d', {
			fields: { title: 'Created after the baseline poll', source: POLL_SOURCE },
		});
		pollTaskUid = created.uid;
		// Kept as written (the strict profile's reading already): a caller's own time, years old.
		stage.sim.configure({ readings: { updatedAtFrom: 'body' } });
		const dated = await api('PUT', '/tasks/5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8e', {
			fields: { title: 'Imported with its ticket’s dates', source: POLL_SOURCE },
			created_at: '2020-01-01T00:00:00Z',
			updated_at: '2020-01-01T00:00:00Z',
		});
		datedTaskUid = dated.uid;
	}, 30 * 60_000);

	afterAll(async () => {
		if (server) await timed(`n8n ${major}.x stop`, () => server.stop());
		await stage?.dispose();
	}, 120_000);

	test(
		'two-way sync: closing a task makes the service send a signed task.completed, and n8n comments on that task',
		async () => {
			const task = await api('PUT', '/tasks/1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', {
				fields: { title: 'Ticket to close', ticket_id: 'TW-1' },
			});
			await api('PATCH', `/tasks/${task.uid}`, { status: 'DONE' });
			await stage.sim.flushDeliveries();
			const mine = stage.sim.deliveries.filter(
				(delivery) => (delivery.event as any).data.task.uid === task.uid,
			);
			expect(mine.map((delivery) => [(delivery.event as any).type, delivery.status])).toEqual([
				['task.created', 200], // acknowledged and dropped by the trigger's event filter
				['task.completed', 200],
			]);
			const comments = await waitFor(
				'the comment of the two-way-sync workflow',
				() => commentsOn(task.uid).length > 0 && commentsOn(task.uid),
				60_000,
			);
			expect(comments.map((comment) => comment.text)).toEqual([
				'Closed in the backlog; ticket updated',
			]);
			// only task.completed started an execution: still one comment a little later
			await new Promise((resolve) => setTimeout(resolve, 2000));
			expect(commentsOn(task.uid)).toHaveLength(1);
		},
		3 * 60_000,
	);

	test(
		'the trigger answers 401 to a bad signature, a missing signature and a replayed timestamp, and starts nothing',
		async () => {
			const task = [...stage.sim.tasks.values()][0];
			const body = JSON.stringify({
				type: 'task.completed',
				data: { task },
				info: {},
				sentAt: new Date().toISOString(),
			});
			const now = String(Math.floor(Date.now() / 1000));
			const sign = (raw: string) =>
				`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
			const post = (headers: Record<string, string>) =>
				http('POST', `${server.baseUrl}${triggerPath}`, { body, headers });
			// The poll workflows (active beside this one) comment on their tasks at times of their own: only other
			// comments count here.
			const webhookComments = () =>
				[...stage.sim.comments.values()].filter(
					(comment) => comment.text !== 'Seen by the poll trigger',
				).length;
			const commentsBefore = webhookComments();

			const badSignature = await post({
				'x-backlog-signature': `sha256=${'0'.repeat(64)}`,
				'x-backlog-timestamp': now,
			});
			const wrongSecret = await post({
				'x-backlog-signature': `sha256=${createHmac('sha256', 'not-the-secret').update(body).digest('hex')}`,
				'x-backlog-timestamp': now,
			});
			const missing = await post({ 'x-backlog-timestamp': now });
			const replayed = await post({
				'x-backlog-signature': sign(body),
				'x-backlog-timestamp': String(Math.floor(Date.now() / 1000) - 3600),
			});
			expect([badSignature.status, wrongSecret.status, missing.status, replayed.status]).toEqual([
				401, 401, 401, 401,
			]);
			expect(badSignature.json).toEqual({ received: false, error: 'Unauthorized' });

			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(webhookComments()).toBe(commentsBefore);
			expect(server.logs()).toMatch(/Task Backlog Trigger rejected a request/);
		},
		3 * 60_000,
	);

	test(
		'create-and-forget: the same ticket event delivered twice makes one task, updated to the latest values',
		async () => {
			const event = {
				ticket_id: 'EV-77',
				subject: 'Website down',
				url: 'https://tickets.example.com/77',
			};
			const first = await http('POST', `${server.baseUrl}${ticketPath}`, { body: event });
			expect(first.status).toBe(200);
			const uid = uuidV5('EV-77', DEFAULT_EXTERNAL_ID_NAMESPACE); // the uid the node derives from the ticket id
			await waitFor('the task of the first event', () => stage.sim.tasks.get(uid), 60_000);
			const second = await http('POST', `${server.baseUrl}${ticketPath}`, {
				body: { ...event, subject: 'Website down (EU only)' },
			});
			expect(second.status).toBe(200);
			const task = await waitFor(
				'the task updated by the second event',
				() =>
					stage.sim.tasks.get(uid)?.fields.title === 'Website down (EU only)' &&
					stage.sim.tasks.get(uid),
				60_000,
			);
			expect(task.fields).toMatchObject({
				ticket_id: 'EV-77',
				url: 'https://tickets.example.com/77',
				source: 'events',
			});
			expect(
				[...stage.sim.tasks.values()].filter((t) => t.fields.ticket_id === 'EV-77'),
			).toHaveLength(1);
		},
		3 * 60_000,
	);

	loadTest(
		`${BURST_EVENTS} ticket events at once, one ticket per execution, on one credential (60 requests a ${SPLIT_WINDOW_MS / 1000} s window, a time-scaled minute) and an undocumented batch limit of ${BATCH_LIMIT}, five of them refused on every try: (a) two sent side by side with the same plain 400 ("content policy violation"), a poisoned one with a 400 naming its value, (b) one answered 500 quoting its value and (c) one with a 403 quoting its value: those five executions fail; the other ${BURST_EVENTS - 5} succeed with their own task, stored once with its values, and no 429; no refused value shows in any other execution's data; (b)'s splits and retries cost at most 2 × ceil(log2 ${BATCH_LIMIT}) + ${MAX_ATTEMPTS} (Max Attempts) requests more, and the tickets that first went with it are not held back by its retries`,
		async () => {
			// One burst for all these cases (each burst costs about a minute per major); the refused tickets are apart but
			// for the pair.
			const prefix = 'REFUSED-ABC-';
			const plain400 = (text: string): ContentRefusal => ({
				text,
				status: 400,
				message: 'content policy violation',
			});
			const poisoned = 'PAYROLL-4711-secret';
			const crashing = 'CRASH-5150-indexer';
			const forbidden = 'SALARY-98000-confidential';
			const refused = new Map<number, ContentRefusal>([
				[REFUSED_PAIR[0], plain400('PAYROLL-8123-alpha')],
				[REFUSED_PAIR[1], plain400('PAYROLL-8124-beta')],
				[
					POISONED_TICKET,
					{ text: poisoned, status: 400, message: `fields.title: forbidden content "${poisoned}"` },
				],
				[
					CRASHING_TICKET,
					{ text: crashing, status: 500, message: `indexer crashed on title "${crashing}"` },
				],
				[
					FORBIDDEN_TICKET,
					{
						text: forbidden,
						status: 403,
						message: `forbidden: title "${forbidden}" is restricted`,
					},
				],
			]);
			const result = await refusedBurst('Refused ABC', prefix, refused);
			expectOnlyRefusedFail(prefix, refused, result);
			// Both refused tickets of (a) went in one shared batch, which the node split: the case (a) is about. Where
			// n8n starts the executions too slowly for that (a loaded machine: batches of 2 to 7), the case was not met.
			const texts = REFUSED_PAIR.map((i) => refused.get(i)!.text);
			const sharedBatch = result.requests.some(
				(r) => r.path === '/tasks/batch' && texts.every((text) => result.carrying(r, text)),
			);
			// At the time-scaled window n8n's executions reach the node in bunches whose batches are small (2 to 10), so the
			// two side-by-side tickets share a batch in some runs only (on both majors; the CI run of this change missed
			// it on 2.x). The counts above hold either way; the layout is logged. test/node/isolation.test.ts holds the
			// two refusals in one shared batch deterministically.
			log(
				`n8n ${major}.x refused-ticket burst (a): ${sharedBatch ? 'one batch carried both refused tickets' : 'the two refused tickets went in different batches this time'} (batch sizes ${result.requests
					.filter((r) => r.path === '/tasks/batch')
					.map((r) => (r.body as any)?.items?.length)
					.join(' ')})`,
			);
			// (b): the first request that carried the crashing ticket, then each split and each retry of its own part: at
			// most 2 × ceil(log2 50) + Max Attempts after the first.
			const withCrashing = result.requests.filter((r) => result.carrying(r, crashing));
			expect(withCrashing.length).toBeGreaterThan(0);
			expect(withCrashing.length).toBeLessThanOrEqual(
				1 + 2 * Math.ceil(Math.log2(BATCH_LIMIT)) + MAX_ATTEMPTS,
			);
			// (b)'s neighbours, the other tickets of the first request that carried it, are not held back by its retries:
			// each is stored within 90 s at the real minute, here scaled by SCALE, of that request (plus 5 s for a loaded
			// machine). The real minute's figure is the benchmark's.
			const first = withCrashing[0];
			const neighbours = Array.from({ length: BURST_EVENTS }, (_, i) => i).filter(
				(i) => !refused.has(i) && result.carrying(first, `"${prefix}${i}"`),
			);
			const heldBackMs = neighbours.map((i) => {
				const storedBy = result.requests.find(
					(r) =>
						r.at >= first.at &&
						r.status >= 200 &&
						r.status < 300 &&
						result.carrying(r, `"${prefix}${i}"`),
				);
				return storedBy ? storedBy.at - first.at : Infinity;
			});
			log(
				`n8n ${major}.x refused-ticket burst (b): ${withCrashing.length} requests carried the crashing ticket (statuses ${withCrashing.map((r) => r.status).join(' ')}); ${neighbours.length ? `its ${neighbours.length} neighbours stored ${heldBackMs.map((ms) => (ms / 1000).toFixed(1)).join(' ')} s after it first went` : 'it first went alone this time, so its neighbours’ bound has nothing to check'}`,
			);
			expect(heldBackMs.filter((ms) => ms > 90_000 * SCALE + 5000)).toEqual([]);
		},
		6 * 60_000,
	);

	loadTest(
		`a shared request whose sending execution n8n cancels (its workflow's timeout) fails no other execution: two workflows on one credential, the service slow (${SLOW_MS / 1000} s a task request); while a follower's read is under way, the timed-out workflow's event (${TIMEOUT_SECONDS} s timeout) and then ${FOLLOWERS} followers' wait for the next shared turn, which the timed-out execution's client carries until n8n cancels it: every follower succeeds with its ticket stored once, the timed-out execution does not`,
		async () => {
			const since = Date.now();
			const ticket = (name: string) => ({ ticket_id: `SHARE-${name}`, subject: `Shared ${name}` });
			const uidOf = (name: string) => uuidV5(`SHARE-${name}`, DEFAULT_EXTERNAL_ID_NAMESPACE);
			const mine = () =>
				stage.sim.requests.filter(
					(r) => r.at >= since && r.headers.authorization === `Bearer ${SHARED_CREDENTIAL.token}`,
				);
			const mentions = (r: (typeof stage.sim.requests)[number], name: string) =>
				`${r.path} ${JSON.stringify(r.query)} ${JSON.stringify(r.body ?? '')}`.includes(
					uidOf(name),
				);
			const followers = Array.from({ length: FOLLOWERS + 1 }, (_, i) => `F${i}`);
			stage.sim.configure({
				faults: {
					latencyMs: [SLOW_MS, SLOW_MS],
					only: (r) => r.path === '/tasks' || r.path.startsWith('/tasks/'),
				},
			});
			let answers: Array<Awaited<ReturnType<typeof http>>>;
			let timedOutAnswer: Awaited<ReturnType<typeof http>> | Error;
			let timedOutSentAt = 0;
			try {
				// F0 alone: its read is under way (SLOW_MS) when the others arrive.
				const first = deliverEvent(FOLLOWER, ticket('F0'));
				await waitFor(
					'the first follower’s read under way',
					() => mine().some((r) => mentions(r, 'F0')),
					60_000,
					20,
				);
				// T next, so that its execution is the first waiting for the next turn and its client carries it.
				timedOutSentAt = Date.now();
				const timedOut = deliverEvent(TIMED_OUT, ticket('T'), undefined, 60_000).catch(
					(e: Error) => e,
				);
				await new Promise((resolve) => setTimeout(resolve, 1000));
				const rest = followers.slice(1).map((name) => deliverEvent(FOLLOWER, ticket(name)));
				[timedOutAnswer, ...answers] = await Promise.all([timedOut, first, ...rest]);
			} finally {
				stage.sim.configure({ faults: undefined });
			}
			const answeredAfterMs = Date.now() - since;
			const stored = async (workflowId: string, n: number) =>
				waitFor(
					`the ${n} executions of ${workflowId} stored by n8n`,
					async () => {
						const found = await finishedExecutions(workflowId, since, true);
						return found.count >= n && found.executions;
					},
					60_000,
					500,
				);
			const followerExecutions = await stored(FOLLOWER.workflowId, followers.length);
			const [timedOutExecution] = await stored(TIMED_OUT.workflowId, 1);
			const timedOutData = await executionData(timedOutExecution.id);
			const requests = mine();
			const carriedByT = requests.filter((r) => mentions(r, 'T'));
			const at = (r: { at: number }) => `${((r.at - timedOutSentAt) / 1000).toFixed(1)} s`;
			log(
				`n8n ${major}.x timed-out sender: answered after ${(answeredAfterMs / 1000).toFixed(1)} s; ${requests.length} requests (${requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/i, '{uid}')} ${r.status} at ${at(r)} [${followers.filter((name) => mentions(r, name)).join(' ')}${mentions(r, 'T') ? ' T' : ''}]`).join('; ')}); T's requests ${carriedByT.length}, carrying followers: ${carriedByT.some((r) => followers.some((name) => mentions(r, name)))}; T answered ${timedOutAnswer instanceof Error ? timedOutAnswer.message : `${timedOutAnswer.status} ${timedOutAnswer.text.slice(0, 200)}`}; T's execution ${timedOutExecution.status}, its data says "timed out": ${/timed out/i.test(timedOutData)}; follower executions ${followerExecutions.map((e) => e.status).join(' ')}`,
			);

			// Every follower succeeds with its own task, stored once with its values.
			answers.forEach((answer, i) => {
				expect(answer.status).toBe(200);
				expect(answer.json.uid).toBe(uidOf(followers[i]));
			});
			for (const name of followers) {
				const tasks = storedTickets(`SHARE-${name}`);
				expect(tasks).toHaveLength(1);
				expect(tasks[0].uid).toBe(uidOf(name));
				expect(tasks[0].fields.title).toBe(`Shared ${name}`);
			}
			expect(followerExecutions).toHaveLength(followers.length);
			expect(followerExecutions.map((e) => e.status)).toEqual(followers.map(() => 'success'));
			// The timed-out execution is not a success: n8n 2.41.1 and 1.123.81 record it as canceled and answer its event
			// with a 500 ("There was a problem executing the workflow").
			expect(timedOutExecution.status).toBe('canceled');
			expect(timedOutAnswer instanceof Error || timedOutAnswer.status !== 200).toBe(true);
		},
		3 * 60_000,
	);

	test(
		'n8n runs the credential test (GET /accounts/me): OK with the right token, a clear failure with a bad one',
		async () => {
			const cookie = await n8nCookie();
			const testCredential = (token: string) =>
				http('POST', `${server.baseUrl}/rest/credentials/test`, {
					headers: { cookie },
					// the stored credential (2.x requires its id), with the token as typed in the editor
					body: {
						credentials: {
							id: CREDENTIAL_ID,
							name: CREDENTIAL_NAME,
							type: 'taskBacklogApi',
							data: credentialData(stage.sim, token),
						},
					},
				});
			const since = Date.now();
			const good = await testCredential(TOKEN);
			const bad = await testCredential('not-a-valid-token');
			log(`n8n ${major}.x credential test answers: good ${good.text}; bad ${bad.text}`);
			expect(good.status).toBe(200);
			expect(good.json.data).toMatchObject({ status: 'OK' });
			expect(bad.status).toBe(200);
			expect(bad.json.data.status).toBe('Error');
			if (major === 2) {
				// the credential's own rule for a 401
				expect(bad.json.data.message).toMatch(/rejected the API token \(401\)\. Check the token/);
			} else {
				// n8n 1.123's credential tester applies responseCode rules only to errors carrying cause.response, which
				// the error of its own request helper does not: it shows n8n's generic 401 text instead of the rule's.
				expect(bad.json.data.message).toBe('Authorization failed - please check your credentials');
			}
			expect(bad.text).not.toContain('not-a-valid-token');
			const me = stage.sim.requests.filter((r) => r.path === '/accounts/me' && r.at >= since);
			expect(me.map((r) => r.status)).toEqual(expect.arrayContaining([200, 401]));

			// The node types n8n serves to its editor: our three nodes, and Task Backlog as an AI tool.
			const types = await http('GET', `${server.baseUrl}/types/nodes.json`, {
				headers: { cookie },
			});
			expect(types.status).toBe(200);
			const byName = new Map<string, any>((types.json as any[]).map((type) => [type.name, type]));
			for (const name of [
				'taskBacklog',
				'taskBacklogTrigger',
				'taskBacklogPollTrigger',
				'taskBacklogTool',
			]) {
				expect(byName.has(`${PKG}.${name}`)).toBe(true);
			}
			expect(byName.get(`${PKG}.taskBacklogTool`).outputs).toEqual(['ai_tool']);
		},
		3 * 60_000,
	);

	test(
		'the Poll Trigger, active with its smallest interval (every minute), emits a task created after its baseline poll',
		async () => {
			// The task was created in beforeAll, right after the activation's baseline poll; the next poll is at most a
			// minute after activation.
			const texts = await timed(`n8n ${major}.x poll trigger emitted (after the baseline)`, () =>
				commentTexts('the comment of the poll workflow', pollTaskUid, 100_000),
			);
			log(
				`n8n ${major}.x poll trigger emitted ${((Date.now() - pollBaselineAt) / 1000).toFixed(0)} s after the baseline poll`,
			);
			expect(texts).toEqual(['Seen by the poll trigger']);
			const polls = stage.sim.requests.filter(isPollListing);
			expect(polls.length).toBeGreaterThanOrEqual(2);
		},
		3 * 60_000,
	);

	test(
		'the Poll Trigger emits a task created while its first poll (at activation) was reading, by its next poll',
		async () => {
			expect(createdDuringBaseline).toBe(true);
			// The first poll's listing showed it; the next poll (the one that emitted the task created after the
			// baseline) emits it too.
			expect(
				await commentTexts(
					'the comment on the task created during the first poll',
					DURING_BASELINE_UID,
					100_000,
				),
			).toEqual(['Seen by the poll trigger']);
		},
		3 * 60_000,
	);

	test(
		'the Poll Trigger emits a task a client created with a created_at and updated_at of years ago where the service fills internal_created_at and internal_updated_at, by the same poll; where it leaves them null, not (the README says so)',
		async () => {
			// The same poll as the test above read both tasks (it has emitted the other one by now).
			await waitFor(
				'the poll that emitted the other task',
				() => commentsOn(pollTaskUid).length > 0,
				100_000,
				500,
			);
			if (internalStamps) {
				expect(
					await commentTexts('the comment on the dated task', datedTaskUid, 10_000, 250),
				).toEqual(['Seen by the poll trigger']);
				const stamped = stage.sim.tasks.get(datedTaskUid)!;
				expect(stamped.updated_at).toBe('2020-01-01T00:00:00.000Z');
			} else {
				await new Promise((resolve) => setTimeout(resolve, 3000));
				expect(commentsOn(datedTaskUid)).toEqual([]);
			}
			log(
				`n8n ${major}.x poll trigger, a task dated 2020 by its client: ${commentsOn(datedTaskUid).length} comment(s) (internal stamps ${internalStamps ? 'filled' : 'null'})`,
			);
		},
		3 * 60_000,
	);
});
