/* eslint-disable @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// n8n's queue mode on real parts, for the scale-out test and the bench: a main instance (`n8n start` with
// EXECUTIONS_MODE=queue) and `n8n worker` processes sharing one user folder (its database, our community package,
// credentials), Bull queues in a real Redis (./redis.ts). Executions reach the workers through a webhook-triggered
// workflow: the main receives the webhook, queues the execution, a worker runs it, and the main answers with its
// result or, where the workflow says so, on receipt.
//
// Also the run itself, shared by test/e2e/queue-mode.test.ts and `npm run bench -- --queue`: several executions at
// once, each upserting its own tickets over one token of the simulator, and what the service saw.
import { randomBytes } from 'crypto';
import { Agent, request } from 'undici';

import type { Json, Workflow } from './workflows';
import * as W from './workflows';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { LoggedRequest, Simulator } from '../simulator/simulator';
import type { RateFigures } from '../simulator/windows';
import { describeWindows, rateFigures } from '../simulator/windows';
import type { Log, N8nServer, N8nUserFolder } from './n8n';
import type { RedisServer } from './redis';

export interface QueueCluster {
	main: N8nServer;
	workers: N8nServer[];
	/** starts this many more workers (the cluster's concurrency unless given), one after the other */
	addWorkers(count: number, concurrency?: number): Promise<void>;
	/** stops these workers (every worker when none are given); the main, Redis and the database stay */
	stopWorkers(which?: N8nServer[]): Promise<void>;
	/** every worker's log, in worker order */
	workerLogs(): string[];
	stop(): Promise<void>;
}

/**
 * The main instance, then `workers` workers (each `--concurrency=<concurrency>`, its own task-runner broker port and
 * health port), all in queue mode on this Redis under a prefix of their own. Resolves when every worker reports ready.
 */
export async function startQueueCluster(
	folder: N8nUserFolder,
	redis: RedisServer,
	opts: { workers: number; concurrency: number; log: Log; maxLifetimeMs?: number },
): Promise<QueueCluster> {
	const prefix = `tb${randomBytes(4).toString('hex')}`;
	const env: Record<string, string> = {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.host,
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		QUEUE_BULL_PREFIX: prefix,
		// n8n's cache (Redis in queue mode) under the same prefix: without it, two installations on one Redis read each
		// other's entries (seen: a 2.x main looked up the 1.x installation's webhook on the same path and answered 404)
		N8N_CACHE_REDIS_KEY_PREFIX: `${prefix}-cache`,
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5',
		QUEUE_WORKER_TIMEOUT: '5',
	};
	const started = Date.now();
	// The main first: it migrates the database the workers then open.
	const main = await folder.start({ env, timeoutMs: 180_000, maxLifetimeMs: opts.maxLifetimeMs });
	const workers: N8nServer[] = [];
	const stopWorkers = async (which = [...workers]) => {
		for (const worker of which) {
			const index = workers.indexOf(worker);
			if (index >= 0) workers.splice(index, 1);
		}
		await Promise.all(which.map((worker) => worker.stop().catch(() => undefined)));
	};
	const stop = async () => {
		await stopWorkers();
		await main.stop().catch(() => undefined);
	};
	// One at a time: on 2 cores, several n8n processes starting at once take longer than one after the other.
	const addWorkers = async (count: number, concurrency = opts.concurrency) => {
		if (count <= 0) return;
		const from = Date.now();
		for (let i = 0; i < count; i++) {
			workers.push(
				await folder.start({
					command: 'worker',
					args: [`--concurrency=${concurrency}`],
					env,
					timeoutMs: 180_000,
					maxLifetimeMs: opts.maxLifetimeMs,
				}),
			);
		}
		opts.log(
			`queue mode: ${count} worker(s) (concurrency ${concurrency}) started in ${((Date.now() - from) / 1000).toFixed(1)} s; ${workers.length} in all`,
		);
	};
	try {
		await addWorkers(opts.workers);
	} catch (error) {
		await stop();
		throw error;
	}
	opts.log(
		`queue mode: main + ${opts.workers} worker(s) ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
	);
	return {
		main,
		workers,
		addWorkers,
		stopWorkers,
		workerLogs: () => workers.map((worker) => worker.logs()),
		stop,
	};
}

// ---------------------------------------------------------------------------------------------------------------------
// The scale-out run

export const QUEUE_WEBHOOK_PATH = 'scale-out-upsert';

/**
 * Webhook (POST {prefix, n}) → Code (tickets <prefix>-1 … <prefix>-n) → Task Backlog Create or Update by external ID
 * (batching on, Batch Size 100: the capped server makes it learn 50) → answered with the node's items.
 */
export function scaleOutWorkflow(
	id: string,
	credential: W.CredentialRef,
	requestOptions: Json,
): Workflow {
	const tickets = W.codeNode(
		'Tickets',
		"Array.from({ length: $input.first().json.body.n }, (_, i) => ({ id: $input.first().json.body.prefix + '-' + (i + 1), title: 'Ticket ' + $input.first().json.body.prefix + '-' + (i + 1) }))",
	);
	return W.workflow(id, 'scale-out: upsert tickets', [
		W.webhookNode('Webhook', QUEUE_WEBHOOK_PATH),
		tickets,
		W.backlogNode('Upsert', credential, W.upsertParameters(requestOptions)),
	]);
}

export interface ExecutionAnswer {
	prefix: string;
	status: number;
	/** items answered (the Upsert node's output), or undefined when the answer was not a JSON array */
	items?: number;
	/** items carrying an error */
	errorItems: number;
	error?: string;
	ms: number;
}

export interface ScaleOutResult {
	executions: number;
	ticketsEach: number;
	workers: number;
	answers: ExecutionAnswer[];
	succeeded: number;
	figures: RateFigures;
	/** tasks in the service, tickets never written, tickets written more than once, tasks with wrong values */
	tasks: number;
	lost: number;
	duplicated: number;
	wrongValues: number;
	/** distinct workers whose log shows an execution started */
	workersUsed: number;
}

const ticketUid = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);

/** The execution (ticket prefix) a request came from: by the tickets it writes, or the uids it reads. */
function executionOf(entry: LoggedRequest, prefixOfUid: Map<string, string>): string {
	const body = (entry.body ?? {}) as Json;
	const ticket = body.items?.[0]?.fields?.ticket_id ?? body.fields?.ticket_id;
	if (typeof ticket === 'string') return ticket.replace(/-\d+$/, '');
	const uid =
		body.condition?.value?.[0] ??
		body.items?.[0]?.uid ??
		/\/tasks\/([0-9a-f-]{36})/.exec(entry.path)?.[1];
	return (typeof uid === 'string' && prefixOfUid.get(uid.toLowerCase())) || '?';
}

/**
 * POSTs `executions` webhooks at once (prefixes Q1…Qn, `ticketsEach` tickets each) and waits for every answer; then
 * the figures of what the simulator saw and the tasks it holds.
 */
export async function runScaleOut(
	cluster: QueueCluster,
	sim: Simulator,
	opts: {
		executions: number;
		ticketsEach: number;
		limit: number;
		windowMs: number;
		timeoutMs: number;
		log: Log;
	},
): Promise<ScaleOutResult> {
	const agent = new Agent({
		headersTimeout: opts.timeoutMs,
		bodyTimeout: opts.timeoutMs,
		connections: opts.executions + 2,
	});
	const logsBefore = cluster.workerLogs().map((text) => text.length);
	const prefixes = Array.from({ length: opts.executions }, (_, i) => `Q${i + 1}`);
	const trigger = async (prefix: string): Promise<ExecutionAnswer> => {
		const started = Date.now();
		try {
			const res = await request(`${cluster.main.baseUrl}/webhook/${QUEUE_WEBHOOK_PATH}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ prefix, n: opts.ticketsEach }),
				dispatcher: agent,
			});
			const text = await res.body.text();
			let parsed: unknown;
			try {
				parsed = JSON.parse(text);
			} catch {
				parsed = undefined;
			}
			const items = Array.isArray(parsed) ? (parsed as Json[]) : undefined;
			return {
				prefix,
				status: res.statusCode,
				items: items?.length,
				errorItems: items?.filter((item) => item.error !== undefined).length ?? 0,
				error: res.statusCode === 200 && items ? undefined : text.slice(0, 500),
				ms: Date.now() - started,
			};
		} catch (error) {
			return {
				prefix,
				status: 0,
				errorItems: 0,
				error: (error as Error).message,
				ms: Date.now() - started,
			};
		}
	};
	let answers: ExecutionAnswer[];
	try {
		answers = await Promise.all(prefixes.map(trigger));
	} finally {
		await agent.close().catch(() => undefined);
	}
	const prefixOfUid = new Map<string, string>();
	for (const prefix of prefixes)
		for (let i = 1; i <= opts.ticketsEach; i++)
			prefixOfUid.set(ticketUid(`${prefix}-${i}`), prefix);
	const figures = rateFigures(sim.requests, {
		limit: opts.limit,
		windowMs: opts.windowMs,
		ownerOf: (entry) => executionOf(entry, prefixOfUid),
	});
	// the service: each ticket once, with its values
	const byTicket = new Map<string, number>();
	let wrongValues = 0;
	for (const task of sim.tasks.values()) {
		const ticket = String(task.fields?.ticket_id ?? '');
		byTicket.set(ticket, (byTicket.get(ticket) ?? 0) + 1);
		if (task.fields?.title !== `Ticket ${ticket}` || task.uid !== ticketUid(ticket)) wrongValues++;
	}
	let lost = 0;
	for (const prefix of prefixes)
		for (let i = 1; i <= opts.ticketsEach; i++) if (!byTicket.has(`${prefix}-${i}`)) lost++;
	const duplicated = [...byTicket.values()].reduce((sum, count) => sum + count - 1, 0);
	const workersUsed = cluster
		.workerLogs()
		.filter((text, index) =>
			/Worker started execution/.test(text.slice(logsBefore[index] ?? 0)),
		).length;
	const succeeded = answers.filter(
		(answer) =>
			answer.status === 200 && answer.items === opts.ticketsEach && answer.errorItems === 0,
	).length;
	return {
		executions: opts.executions,
		ticketsEach: opts.ticketsEach,
		workers: cluster.workers.length,
		answers,
		succeeded,
		figures,
		tasks: sim.tasks.size,
		lost,
		duplicated,
		wrongValues,
		workersUsed,
	};
}

/** One paragraph for a log: the run's figures against the targets. */
export function describeScaleOut(result: ScaleOutResult): string {
	const f = result.figures;
	return [
		`${result.executions} executions × ${result.ticketsEach} tickets on ${result.workers} worker(s) (${result.workersUsed} ran one): ` +
			`${result.succeeded}/${result.executions} succeeded; ${f.requests} requests, ${f.rejected429} × 429 (${(f.share429 * 100).toFixed(1)} %); ` +
			`first to last request ${(f.durationMs / 1000).toFixed(1)} s, floor ${(f.floorMs / 1000).toFixed(1)} s ` +
			`(${(f.durationMs / f.floorMs).toFixed(2)} × floor; target ≤ 1.5 × floor + 5 s, the 5 s scaled with the window: ${(f.targetMs / 1000).toFixed(1)} s); ` +
			`${result.tasks} tasks, ${result.lost} lost, ${result.duplicated} duplicated, ${result.wrongValues} wrong`,
		...result.answers
			.filter((answer) => answer.error || answer.errorItems)
			.map(
				(answer) =>
					`  ${answer.prefix}: HTTP ${answer.status}, ${answer.errorItems} error items: ${answer.error ?? ''}`,
			),
		`requests accepted per execution in each of the server's windows:\n${describeWindows(f)}`,
	].join('\n');
}
