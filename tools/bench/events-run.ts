/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The runs of `npm run bench -- --events`: the workflows (one per run, each with its own webhook path, token and
// credential, so the simulator's log and windows tell the runs apart and no run inherits another's limiter), the
// senders of events (at once, spread, lone) and what each event became on the simulator.
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { Agent, request } from 'undici';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { sleep } from '../n8n/helpers';
import type { N8nMajor, N8nServer, N8nUserFolder } from '../n8n/n8n';
import { endedExecutionCount, storedExecutions } from '../n8n/postgres';
import type { Json, Workflow } from '../n8n/workflows';
import * as W from '../n8n/workflows';
import type { ContentRefusal, LoggedRequest, Simulator } from '../simulator/simulator';
import type { EventsContender, EventsScenario } from './events-options';

export const EVENTS_LIMIT = 60;
/** n8n's Retry On Fail defaults, as a user of the HTTP Request node leaves them. */
const HTTP_RETRY = { maxTries: 3, waitBetweenTries: 1000 };
/** A sender of events sends a delivery n8n refused with 503 again (n8n 1.x: 'Database is not ready!' under a burst). */
const RESEND_503 = { attempts: 10, delayMs: 2000 };
const ANSWER_TIMEOUT_MS = 30 * 60_000;

/**
 * The events a refused run's service refuses on every try (their index in the run; the isolation issue's bursts;
 * test/e2e/triggers.test.ts sends the five-refusal one at a scaled window): (a) two side by side with the same plain
 * 400, a 400 naming its value, (b) one answered 500 quoting its value, (c) a 403 quoting its value. Each one's subject
 * is its text.
 */
export const REFUSED_EVENTS: ReadonlyMap<number, ContentRefusal> = new Map([
	[137, { text: 'PAYROLL-8123-alpha', status: 400, message: 'content policy violation' }],
	[138, { text: 'PAYROLL-8124-beta', status: 400, message: 'content policy violation' }],
	[
		62,
		{
			text: 'PAYROLL-4711-secret',
			status: 400,
			message: 'fields.title: forbidden content "PAYROLL-4711-secret"',
		},
	],
	[
		250,
		{
			text: 'CRASH-5150-indexer',
			status: 500,
			message: 'indexer crashed on title "CRASH-5150-indexer"',
		},
	],
	[
		212,
		{
			text: 'SALARY-98000-confidential',
			status: 403,
			message: 'forbidden: title "SALARY-98000-confidential" is restricted',
		},
	],
]);
/** (b): the event answered 500 on every try. */
export const CRASHING_EVENT = 250;

export interface EventsRunPlan {
	major: N8nMajor;
	contender: EventsContender;
	scenario: EventsScenario;
	events: number;
	/** spread: over how many ms; lone: the least time between two sends */
	overMs: number;
	/** queue mode: the workers (0: regular mode) */
	queueWorkers: number;
	/** the credential's Requests per Minute: each process's own budget (the service's limit unless queue mode sets less) */
	requestsPerMinute: number;
	/** n8n's database (queue mode always runs on PostgreSQL) */
	database: N8nDatabase;
	token: string;
	credential: W.CredentialRef;
	webhookPath: string;
	workflow: Workflow;
	prefix: string;
	/**
	 * n8n 1.x in queue mode: the webhook answers on receipt (its main left answers of finished executions unanswered),
	 * and each event's outcome is read from its stored execution (outcomesFromExecutions)
	 */
	answersOnReceipt: boolean;
	/** the events the service refuses on every try, by index (REFUSED_EVENTS below the run's size) */
	refused: ReadonlyMap<number, ContentRefusal>;
}

export interface EventRecord {
	ticket: string;
	uid: string;
	subject: string;
	/** the refused texts (REFUSED_EVENTS) its answer shows (read in refused runs only) */
	shows: string[];
	/** ms since the epoch of the event's first webhook call */
	sentAt: number;
	answeredAt: number;
	/** the webhook's last answer (0: no answer) */
	status: number;
	/** deliveries n8n refused with 503 and that were sent again */
	resent503: number;
	/** the start of the last answer that was not a 200, or why there was none */
	error?: string;
	/** the first successful write naming the task on the simulator */
	storedAt?: number;
}

export const ticketUid = (ticket: string) => uuidV5(ticket, DEFAULT_EXTERNAL_ID_NAMESPACE);
export const titleOf = (ticket: string) => `Event ${ticket}`;

/** examples/create-and-forget.json as the bench runs it: its own path and credential, answering when stored. */
function ourWorkflow(
	id: string,
	webhookPath: string,
	credential: W.CredentialRef,
	answersOnReceipt: boolean,
): Workflow {
	const file = path.resolve(__dirname, '..', '..', '..', 'examples', 'create-and-forget.json');
	const workflow = JSON.parse(fs.readFileSync(file, 'utf8')) as Workflow;
	workflow.id = id;
	workflow.name = `bench events: ${webhookPath}`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			// Respond When Last Node Finishes: the answer says whether the execution stored its task.
			node.parameters = {
				...node.parameters,
				path: webhookPath,
				responseMode: answersOnReceipt ? 'onReceived' : 'lastNode',
			};
			node.webhookId = randomUUID();
		}
		if (node.credentials?.[W.CREDENTIAL_TYPE])
			node.credentials = { [W.CREDENTIAL_TYPE]: credential };
	}
	return workflow;
}

/** What a user does today: Webhook → Set (ticket) → HTTP Request PUT /tasks/{uid}, Retry On Fail with n8n's defaults. */
function httpWorkflow(
	id: string,
	webhookPath: string,
	baseUrl: string,
	credential: W.CredentialRef,
): Workflow {
	return W.workflow(id, `bench events: ${webhookPath}`, [
		W.webhookNode('Ticket event', webhookPath),
		W.setNode('Ticket', {
			id: '={{ $json.body.ticket_id }}',
			title: '={{ $json.body.subject }}',
			uid: '={{ $json.body.uid }}',
		}),
		W.httpPutNode('HTTP Request', baseUrl, credential, {
			itemsPerBatch: 0,
			batchIntervalMs: 0,
			retryOnFail: HTTP_RETRY,
		}),
	]);
}

export type N8nDatabase = 'sqlite' | 'postgresql';

/** How n8n and the credential are set up for a run: regular mode on sqlite at the service's limit unless said. */
export interface RunSetting {
	queueWorkers?: number;
	requestsPerMinute?: number;
	database?: N8nDatabase;
}

/** One run's workflow, credential and token. */
export function planRun(
	major: N8nMajor,
	contender: EventsContender,
	scenario: EventsScenario,
	events: number,
	overMs: number,
	baseUrl: string,
	{ queueWorkers = 0, requestsPerMinute = EVENTS_LIMIT, database = 'sqlite' }: RunSetting = {},
): EventsRunPlan {
	const key = `${major}${contender}${scenario}`;
	const refusing = (i: number) =>
		scenario === 'refused' ||
		scenario === 'queueRefused' ||
		(scenario === 'crash' && i === CRASHING_EVENT);
	const answersOnReceipt = major === 1 && queueWorkers > 0;
	// four letters, one a scenario: queue and queueRefused apart
	const tag = scenario === 'queueRefused' ? 'qref' : scenario.slice(0, 4);
	const id = `bEv${major}${contender.slice(0, 4)}${tag}`.padEnd(16, '0').slice(0, 16);
	const token = `bench-events-${process.pid}-${key}`;
	const credential = { id: `c${id.slice(1)}`, name: `Task Backlog (bench events ${key})` };
	const webhookPath = `bench-events-${key}`.toLowerCase();
	const workflow =
		contender === 'http'
			? httpWorkflow(id, webhookPath, baseUrl, credential)
			: ourWorkflow(id, webhookPath, credential, answersOnReceipt);
	const prefix = `EV${major}${contender.slice(0, 1).toUpperCase()}${tag.slice(0, scenario === 'queueRefused' ? 2 : 1).toUpperCase()}`;
	return {
		major,
		contender,
		scenario,
		events,
		overMs,
		queueWorkers,
		requestsPerMinute,
		database,
		token,
		credential,
		webhookPath,
		workflow,
		prefix,
		answersOnReceipt,
		refused: new Map([...REFUSED_EVENTS].filter(([i]) => i < events && refusing(i))),
	};
}

/** The credential a run's workflow uses: Task Backlog at the plan's rate, or Header Auth for the HTTP Request node. */
export function runCredential(plan: EventsRunPlan, baseUrl: string, windowMs: number) {
	if (plan.contender === 'http') return W.headerAuthCredential(plan.credential, plan.token);
	return W.backlogCredential(plan.credential, {
		baseUrl,
		token: plan.token,
		requestsPerMinute: plan.requestsPerMinute,
		rateLimitWindowSeconds: windowMs / 1000,
	});
}

/** Imports and activates the runs' credentials and workflows (before `n8n start`). */
export async function importRuns(
	folder: N8nUserFolder,
	plans: EventsRunPlan[],
	baseUrl: string,
	windowMs: number,
): Promise<void> {
	await folder.importCredentials(plans.map((plan) => runCredential(plan, baseUrl, windowMs)));
	// one import and one activation for all (each n8n command boots n8n)
	await folder.importWorkflow(plans.map((plan) => plan.workflow));
	await folder.activateAll(plans.map((plan) => plan.workflow.id));
}

/** Sends the run's events as its scenario says and waits for every answer; then when each task was stored. */
export async function sendEvents(
	server: N8nServer,
	sim: Simulator,
	plan: EventsRunPlan,
): Promise<EventRecord[]> {
	const agent = new Agent({
		headersTimeout: ANSWER_TIMEOUT_MS,
		bodyTimeout: ANSWER_TIMEOUT_MS,
		connections: plan.events + 4,
	});
	const url = `${server.baseUrl}/webhook/${plan.webhookPath}`;
	const records: EventRecord[] = Array.from({ length: plan.events }, (_, i) => {
		const ticket = `${plan.prefix}-${i + 1}`;
		return {
			ticket,
			uid: ticketUid(ticket),
			subject: plan.refused.get(i)?.text ?? titleOf(ticket),
			shows: [],
			sentAt: 0,
			answeredAt: 0,
			status: 0,
			resent503: 0,
		};
	});
	const deliver = async (record: EventRecord) => {
		record.sentAt = Date.now();
		const body: Json = { ticket_id: record.ticket, subject: record.subject };
		if (plan.contender === 'http') body.uid = record.uid;
		for (let attempt = 1; ; attempt++) {
			try {
				const res = await request(url, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
					dispatcher: agent,
				});
				record.status = res.statusCode;
				if (res.statusCode === 200 && plan.refused.size > 0) {
					const text = await res.body.text();
					record.shows = [...plan.refused.values()]
						.map((refusal) => refusal.text)
						.filter((refused) => text.includes(refused));
				} else if (res.statusCode === 200) await res.body.dump();
				else record.error = (await res.body.text()).slice(0, 300);
			} catch (error) {
				record.status = 0;
				record.error = (error as Error).message;
			}
			record.answeredAt = Date.now();
			if (record.status !== 503 || attempt === RESEND_503.attempts) return;
			record.resent503++;
			await sleep(RESEND_503.delayMs);
		}
	};
	const started = Date.now();
	try {
		if (plan.scenario !== 'spread' && plan.scenario !== 'lone') {
			await Promise.all(records.map(deliver));
		} else if (plan.scenario === 'spread') {
			// evenly over overMs, each at its own instant whatever the answers before it
			await Promise.all(
				records.map(async (record, i) => {
					await sleep(Math.max(0, started + (i * plan.overMs) / plan.events - Date.now()));
					await deliver(record);
				}),
			);
		} else {
			// lone: the next one only once this one is answered and the gap has passed, so none shares anything
			for (const [i, record] of records.entries()) {
				if (i > 0) await sleep(Math.max(0, records[i - 1].sentAt + plan.overMs - Date.now()));
				await deliver(record);
			}
		}
	} finally {
		await agent.close().catch(() => undefined);
	}
	const storedAt = storedTimes(sim.requests, plan.token);
	for (const record of records) record.storedAt = storedAt.get(record.uid);
	return records;
}

/** The uids a successful write names: PUT/PATCH /tasks/{uid}, or the items of a batch (written all or nothing). */
function writtenUids(entry: LoggedRequest): string[] {
	const one = /^\/tasks\/([0-9a-f-]{36})$/i.exec(entry.path)?.[1];
	if (one) return [one.toLowerCase()];
	const items = (entry.body as Json | undefined)?.items;
	if (!Array.isArray(items)) return [];
	return items.flatMap((item: Json) => {
		if (typeof item?.uid === 'string') return [item.uid.toLowerCase()];
		const ticket = item?.fields?.ticket_id;
		return typeof ticket === 'string' ? [ticketUid(ticket)] : [];
	});
}

/** When each task was first stored: the time of the first successful write naming it, by this token. */
export function storedTimes(requests: LoggedRequest[], token: string): Map<string, number> {
	const stored = new Map<string, number>();
	for (const entry of runRequests(requests, token)) {
		if (!['PUT', 'POST', 'PATCH'].includes(entry.method)) continue;
		if (entry.status < 200 || entry.status >= 300) continue;
		for (const uid of writtenUids(entry)) if (!stored.has(uid)) stored.set(uid, entry.at);
	}
	return stored;
}

/** The simulator's log of one run: its token's requests. */
export function runRequests(requests: LoggedRequest[], token: string): LoggedRequest[] {
	return requests.filter((entry) => entry.headers.authorization === `Bearer ${token}`);
}

/**
 * Where the webhook answered on receipt (answersOnReceipt): each accepted event's outcome from its stored execution in
 * n8n's PostgreSQL database, once n8n has stored one for every accepted event (at most 10 minutes): `status` 200 when
 * it succeeded, 500 when it did not (`error` says how), and the refused texts its data shows (other than its own
 * event's). An event n8n did not accept keeps its answer.
 */
export async function outcomesFromExecutions(
	query: (sql: string) => Promise<string>,
	plan: EventsRunPlan,
	records: EventRecord[],
	log: (line: string) => void,
): Promise<void> {
	const accepted = records.filter((record) => record.status === 200);
	const deadline = Date.now() + 10 * 60_000;
	// counted while the workers run (reading every execution's data then would load the machine being measured)
	let ended = 0;
	for (;;) {
		ended = await endedExecutionCount(query, plan.workflow.id);
		if (ended >= accepted.length || Date.now() > deadline) break;
		await sleep(2000);
	}
	if (ended < accepted.length)
		log(`${accepted.length - ended} accepted event(s) have no ended execution after 10 minutes`);
	const executions = await storedExecutions(query, plan.workflow.id, { endedOnly: true });
	const texts = [...plan.refused.values()].map((refusal) => refusal.text);
	for (const record of accepted) {
		const own = executions.filter((e) => e.data.includes(`"${record.ticket}"`));
		const succeeded = own.length === 1 && own[0].status === 'success';
		record.status = succeeded ? 200 : 500;
		record.error = succeeded
			? undefined
			: own.length === 1
				? `its execution: ${own[0].status}`
				: `${own.length} executions`;
		record.shows = texts.filter(
			(text) => text !== record.subject && own.some((e) => e.data.includes(text)),
		);
	}
}
