/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// The seeded simulation (issue 44, item 2): one seed decides K executions of the Task Backlog node (workload.ts), which
// run at once in this process through n8n-core's real WorkflowExecute (test/helpers/run-node.ts) against the simulator
// of the service, with per-item and per-request faults decided from what each request holds. Then every execution runs
// again alone (its own token: nothing shared) against the same item faults, and the invariants are checked.
//
// In process and on a controlled clock, so that one seed replays exactly: the requests go through n8n-core's request
// helpers and axios down to a transport without sockets (test/helpers/in-process-http.ts), which hands them to the
// simulator's own request path (Simulator.handle: the same log, window, faults and intercept as over HTTP); time is
// virtual (virtual-clock.ts), for the node, n8n-core and the simulator alike, and moves only when every execution is
// waiting. The same seed gives the same requests in the same order, at the same virtual times, on any machine.
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { resetCallers } from '../../nodes/shared/callers/registry';
import { RateLimiter } from '../../nodes/shared/transport/rateLimiter';
import type { Intercepted, LoggedRequest, Simulator, Task } from '../../tools/simulator/simulator';
import { installInProcessHttp, type InProcessHttp } from '../helpers/in-process-http';
import { runNode } from '../helpers/run-node';
import { realNow, VirtualClock, type Stuck } from './virtual-clock';
import type { ExecPlan, Family, ItemPlan, Workload } from './workload';
import { amountOf, hashUnit, makeWorkload, REQUEST_FAMILIES, shortCode } from './workload';

export const SHARED_TOKEN = 'simulation-token-shared';
const aloneToken = (exec: number) => `simulation-token-alone-${exec}`;

/** The invariants, as the report names them. */
export type Invariant =
	| 'outcome' // 1: each execution's outcome per item is its outcome alone
	| 'alone' // 1 (cross-check): alone, an execution's outcome is what its own items' faults make it
	| 'leak' // 2: no execution shows another's values
	| 'store' // 3: every accepted write stored once, nothing nobody asked for
	| 'window' // 4: the server never counts more than the token's limit in a window
	| 'limiter' // 5: one rate limiter per token
	| 'hang'; // the seed did not finish in time

export interface Failure {
	invariant: Invariant;
	exec?: number;
	message: string;
}

export interface SeedResult {
	seed: number;
	execs: number;
	items: number;
	requests: number;
	/** Of those, the requests that carried several executions' tasks. */
	sharedRequests: number;
	/** Real time the seed took. */
	ms: number;
	/** Virtual time the seed's executions took, both phases. */
	virtualMs: number;
	failures: Failure[];
	workload: Workload;
	/** Every request the server saw, both phases, one line each (with SimulationOptions.keepLog). */
	requestLog?: string[];
}

/** What one execution gave: per item `ok` or the error's status, or the execution's own error. */
interface ExecOutcome {
	cancelled: boolean;
	/** Per item, when the node returned items (Continue On Fail, or no error). */
	items?: Array<{ ok: true; json: IDataObject } | { ok: false; status: string; json: IDataObject }>;
	/** The error the node threw (without Continue On Fail). */
	error?: { status: string; message: string; description: string };
	/** Everything the execution shows: output, error message and description. */
	shown: string;
}

// ---- Invariant 5: the rate limiters that sent something, counted by instance (the registry exposes none).
const limitersUsed = new Set<RateLimiter>();
let limiterWatched = false;
function watchLimiters() {
	if (limiterWatched) return;
	limiterWatched = true;
	const acquire = RateLimiter.prototype.acquire;
	RateLimiter.prototype.acquire = function (this: RateLimiter) {
		limitersUsed.add(this);
		return acquire.call(this);
	};
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const WRITE_PATH = /^\/tasks(\/batch|\/[0-9a-f-]{36})?$/i;

interface PhaseState {
	/** Sends of each item's uid to a write (or Get) so far. */
	sends: Map<string, number>;
	/** Failed answers per request content (method, path, body): what the client's attempts of it have met. */
	failures: Map<string, number>;
	/** Times a request of this content came. */
	seen: Map<string, number>;
	/** Requests that carried the tasks of several executions. */
	sharedRequests: number;
}

const newPhase = (): PhaseState => ({
	sends: new Map(),
	failures: new Map(),
	seen: new Map(),
	sharedRequests: 0,
});

/** The message a fault answers with: quoting the item's value, its number, its short value, or nothing. */
function faultMessage(item: ItemPlan, status: number): string {
	const quote = item.fault!.quote;
	if (quote === 'value') return `fields.title: refused value "${item.title}"`;
	if (quote === 'number') return `fields.salary: ${item.salary}`;
	if (quote === 'short') return `fields.region: "${item.region}" is not allowed`;
	return (
		{
			400: 'content policy violation',
			403: 'forbidden',
			404: 'not found',
			409: 'conflict',
			413: 'Request body too large',
			500: 'Internal server error',
		}[status] ?? `error ${status}`
	);
}

/**
 * The simulator's hand in each request (SimulatorOptions.intercept): the item faults, then (shared phase) latency and
 * the transient faults of the request, within their budget.
 */
function interceptor(
	workload: Workload,
	byUid: Map<string, ItemPlan>,
	phase: PhaseState,
	shared: boolean,
) {
	const has = (family: Family) => workload.families.includes(family);
	const transients = REQUEST_FAMILIES.filter(has);
	return (
		req: Pick<LoggedRequest, 'method' | 'path' | 'query' | 'body'>,
	): Intercepted | undefined => {
		const key = `${req.method} ${req.path} ${JSON.stringify(req.query)} ${JSON.stringify(req.body ?? null)}`;
		const seen = (phase.seen.get(key) ?? 0) + 1;
		phase.seen.set(key, seen);
		const fail = (answer: Intercepted): Intercepted => {
			phase.failures.set(key, (phase.failures.get(key) ?? 0) + 1);
			return answer;
		};
		const owners = new Set<ExecPlan>();
		for (const uid of `${req.path} ${JSON.stringify(req.body ?? null)}`.match(UUID) ?? []) {
			const item = byUid.get(uid.toLowerCase());
			if (item) owners.add(workload.execs[item.exec]);
		}
		if (owners.size > 1) phase.sharedRequests++;
		const delayMs = shared
			? workload.latencyMs +
				(has('request-latency')
					? Math.floor(hashUnit(workload.seed, 'latency', key, seen) * 2 * workload.latencyMs)
					: 0)
			: 0;

		// 1. Item faults: writes of tasks, and Get's single read.
		const isWrite = ['PUT', 'PATCH', 'POST'].includes(req.method) && WRITE_PATH.test(req.path);
		const isGet = req.method === 'GET' && /^\/tasks\/[0-9a-f-]{36}$/i.test(req.path);
		if (isWrite || isGet) {
			const body = req.body as IDataObject | undefined;
			const uids =
				req.path === '/tasks/batch'
					? ((body?.items as IDataObject[] | undefined) ?? []).map((item) =>
							String(item.uid).toLowerCase(),
						)
					: [req.path.slice('/tasks/'.length).toLowerCase()];
			const faulting: Array<{ index: number; item: ItemPlan }> = [];
			uids.forEach((uid, index) => {
				const item = byUid.get(uid);
				if (!item) return;
				const sends = (phase.sends.get(uid) ?? 0) + 1;
				phase.sends.set(uid, sends);
				// A read is refused only as a read may be (a task the token may not see, a server crashing on it):
				// 403 and 500; the other statuses are about what a write sends.
				const readable = isWrite || [403, 500].includes(item.fault?.status ?? 0);
				if (item.fault && readable && sends <= item.fault.times) faulting.push({ index, item });
			});
			if (faulting.length) {
				const { item } = faulting[0];
				const status = item.fault!.status;
				if (status === 422) {
					const batch = req.path === '/tasks/batch';
					const detail = faulting
						.filter((f) => f.item.fault!.status === 422)
						.map((f) => ({
							loc: batch
								? ['body', 'items', f.index, 'fields', 'title']
								: ['body', 'fields', 'title'],
							msg: `value not accepted: ${f.item.title}`,
							type: 'value_error',
						}));
					return fail({ delayMs, status, body: { detail } });
				}
				return fail({ delayMs, status, body: { message: faultMessage(item, status) } });
			}
		}

		// 2. Transient faults of the request (shared phase): fewer than the Max Attempts of each execution it carries.
		if (!shared || owners.size === 0 || transients.length === 0)
			return delayMs ? { delayMs } : undefined;
		const attempts = [...owners].map((owner) => owner.maxAttempts);
		const budget =
			(owners.size > 1 && has('transient-beyond-a-strangers-max-attempts')
				? Math.max(...attempts)
				: Math.min(...attempts)) - 1;
		if (
			(phase.failures.get(key) ?? 0) < budget &&
			hashUnit(workload.seed, 'fault', key, seen) < workload.requestFaultRate
		) {
			// A 429 holds every request of the token for a while: the rarer kind, so that seeds stay short.
			const weighted = transients.flatMap((kind) =>
				kind.startsWith('request-429') ? [kind] : [kind, kind, kind],
			);
			const kind =
				weighted[Math.floor(hashUnit(workload.seed, 'kind', key, seen) * weighted.length)];
			if (kind === 'request-503')
				return fail({ delayMs, status: 503, body: { message: 'Service Unavailable' } });
			if (kind === 'request-reset') return fail({ delayMs, status: 'reset' });
			if (kind === 'request-429')
				return fail({ delayMs, status: 429, body: { message: 'Too many requests' } });
			const seconds = (1 + Math.floor(hashUnit(workload.seed, 'after', key) * 3)) / 10;
			return fail({
				delayMs,
				status: 429,
				body: { message: 'Too many requests' },
				headers: { 'retry-after': String(seconds) },
			});
		}
		return delayMs ? { delayMs } : undefined;
	};
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request stays under way this long at most once its client has gone (a cancelled execution's). */
const QUIET_MS = 2000;

/**
 * Runs the clock until no request is under way and none has come for QUIET_MS (a cancelled run's lanes may still
 * send after its execution ended), or nothing is left to wait for; never past QUIET_MS after the last request (a
 * timer set for later, as a registry's idle sweep, is left for later).
 */
async function quiet(clock: VirtualClock, http: InProcessHttp, sim: Simulator): Promise<void> {
	const lastAt = () => sim.requests[sim.requests.length - 1]?.at ?? -Infinity;
	let horizon: ReturnType<typeof setTimeout> | undefined;
	await clock.runWhile(() => {
		clearTimeout(horizon);
		if (http.inFlight > 0) return true;
		const left = lastAt() + QUIET_MS - clock.now;
		// The clock jumps to the next timer: this one keeps it from jumping past the quiet time.
		if (left > 0) horizon = setTimeout(() => undefined, left);
		return left > 0;
	}, 15_000);
	clearTimeout(horizon);
}

/** One line per request: virtual time, what was asked, what was answered. */
const logLines = (requests: LoggedRequest[], from: number) =>
	requests.map(
		(r) =>
			`${r.at - from} ${r.method} ${r.path} ${JSON.stringify(r.query)} ${JSON.stringify(r.body ?? null)} -> ${r.status}${r.fault ? ` ${r.fault}` : ''}`,
	);

function parametersOf(e: ExecPlan): INodeParameters {
	const retry = { maxAttempts: e.maxAttempts, retryDelayMs: e.retryDelayMs };
	if (e.op === 'get')
		return {
			resource: 'task',
			operation: 'get',
			task: { __rl: true, mode: 'id', value: '={{ $json.uid }}' },
			simplify: false,
			requestOptions: retry,
		};
	const requestOptions = {
		...retry,
		batching: e.batching,
		batchSize: e.batchSize,
		shareRequests: e.shareRequests,
	};
	const content = {
		title: '={{ $json.title }}',
		customFieldsJson: '={{ JSON.stringify($json.custom) }}',
		requestOptions,
	};
	if (e.op === 'upsert')
		return {
			resource: 'task',
			operation: 'upsert',
			identifyBy: 'externalId',
			externalId: '={{ $json.externalId }}',
			...content,
		};
	return {
		resource: 'task',
		operation: 'create',
		additionalFields: { uid: '={{ $json.uid }}' },
		...content,
	};
}

const customOf = (item: ItemPlan) => ({
	marker: item.marker,
	amount: item.amount,
	code: item.code,
	salary: item.salary,
	region: item.region,
});

async function runExecution(
	sim: Simulator,
	workload: Workload,
	e: ExecPlan,
	token: string,
	shared: boolean,
): Promise<ExecOutcome> {
	if (shared && e.startAtMs > 0) await pause(e.startAtMs);
	const baseUrl = e.localhost && shared ? sim.url.replace('127.0.0.1', 'LocalHost') : sim.url;
	const result = await runNode({
		nodeType: new TaskBacklog(),
		parameters: parametersOf(e),
		items: e.items.map((item) => ({
			title: item.title,
			uid: item.uid,
			...(item.externalId && { externalId: item.externalId }),
			custom: customOf(item),
		})),
		credentials: {
			type: 'taskBacklogApi',
			data: {
				baseUrl,
				token,
				requestsPerMinute: workload.limit,
				rateLimitWindowSeconds: workload.windowMs / 1000,
			},
		},
		credentialType: new TaskBacklogApi(),
		continueOnFail: e.continueOnFail,
		executionId: `simulation-${workload.seed}-${e.exec}-${shared ? 'shared' : 'alone'}`,
		...(shared && e.cancelAfterMs !== undefined && { cancelAfterMs: e.cancelAfterMs }),
	});
	const cancelled = result.run.status === 'canceled';
	const output: INodeExecutionData[] = result.output[0] ?? [];
	const outcome: ExecOutcome = { cancelled, shown: JSON.stringify(output.map((i) => i.json)) };
	if (result.error) {
		const error = result.error as Error & { httpCode?: unknown; description?: unknown };
		outcome.error = {
			status: String(error.httpCode ?? 'none'),
			message: String(error.message ?? ''),
			description: String(error.description ?? ''),
		};
		outcome.shown += ` ${outcome.error.message} ${outcome.error.description}`;
	} else if (!cancelled) {
		outcome.items = output.map((item) =>
			item.json.error !== undefined
				? { ok: false, status: String(item.json.httpCode ?? 'none'), json: item.json }
				: { ok: true, json: item.json },
		);
	}
	return outcome;
}

/** The statuses an execution's own refused items are answered with (refused on every try). */
const ownStatuses = (e: ExecPlan) =>
	new Set(
		e.items
			.filter((item) => item.fault && item.fault.times === Infinity)
			.map((item) => String(item.fault!.status)),
	);

/**
 * Whether an outcome is one this execution may have by its own items' faults alone. Get: each item exactly (found, 404
 * when it does not exist, or its fault's status). A write: an item refused on every try fails, with a status of one
 * of the execution's own refused items (a refusal the node cannot pin on one item fails the execution's whole batch,
 * and which of its own refusals the server names first depends on how the items were batched); an item without a
 * fault is written, or fails with one of those statuses when its execution has such items. Without Continue On Fail:
 * the execution succeeds when it has no refused item, else fails with one of their statuses.
 */
function checkOutcome(e: ExecPlan, outcome: ExecOutcome): string[] {
	const problems: string[] = [];
	const own = ownStatuses(e);
	const expectedGet = (item: ItemPlan) =>
		item.fault && item.fault.times === Infinity
			? String(item.fault.status)
			: item.exists
				? 'ok'
				: '404';
	if (!e.continueOnFail) {
		const failing =
			e.op === 'get' ? new Set(e.items.map(expectedGet).filter((status) => status !== 'ok')) : own;
		if (failing.size === 0 && outcome.error)
			problems.push(
				`failed with ${outcome.error.status} (${outcome.error.message}), expected success`,
			);
		if (failing.size > 0 && !outcome.error)
			problems.push(`succeeded, expected a failure with ${[...failing].join('/')}`);
		if (failing.size > 0 && outcome.error && !failing.has(outcome.error.status))
			problems.push(
				`failed with ${outcome.error.status} (${outcome.error.message}), expected ${[...failing].join('/')}`,
			);
		return problems;
	}
	if (outcome.error) {
		problems.push(
			`threw ${outcome.error.status} (${outcome.error.message}) despite Continue On Fail`,
		);
		return problems;
	}
	const items = outcome.items ?? [];
	if (items.length !== e.items.length) {
		problems.push(`returned ${items.length} items for ${e.items.length}`);
		return problems;
	}
	e.items.forEach((item, index) => {
		const got = items[index];
		const gotText = got.ok ? 'ok' : `${got.status} (${String(got.json.error)})`;
		if (e.op === 'get') {
			const expected = expectedGet(item);
			if ((got.ok ? 'ok' : got.status) !== expected)
				problems.push(`item ${index}: ${gotText}, expected ${expected}`);
			return;
		}
		const refused = item.fault !== undefined && item.fault.times === Infinity;
		if (got.ok && refused) problems.push(`item ${index}: written, expected ${item.fault!.status}`);
		else if (!got.ok && !own.has(got.status))
			problems.push(
				`item ${index}: ${gotText}, expected ${own.size ? `written or ${[...own].join('/')}` : 'written'}`,
			);
		else if (got.ok && String(got.json.uid).toLowerCase() !== item.uid)
			problems.push(
				`item ${index}: answered with task ${String(got.json.uid)}, expected ${item.uid}`,
			);
	});
	return problems;
}

/** Another execution's marker, number, short value or task uid in what this one shows. */
function leaks(
	workload: Workload,
	e: ExecPlan,
	shown: string,
	byUid: Map<string, ItemPlan>,
): string[] {
	const found = new Set<string>();
	for (const match of shown.matchAll(/mk-(\d+)-(\d+)-/g))
		if (Number(match[1]) !== e.exec) found.add(`marker ${match[0]}`);
	for (const match of shown.matchAll(/(?<![0-9a-zA-Z])9\d{8}(?![0-9a-zA-Z])/g)) {
		const value = Number(match[0]);
		const exec = Math.floor((value - 900_000_000) / 1000);
		const n = Math.floor((value % 1000) / 10);
		const other = workload.execs[exec];
		if (other && exec !== e.exec && n < other.items.length && amountOf(exec, n) === value)
			found.add(`number ${value} of exec ${exec}`);
	}
	for (const other of workload.execs)
		if (other.exec !== e.exec && shown.includes(shortCode(other.exec)))
			found.add(`short value ${shortCode(other.exec)} of exec ${other.exec}`);
	for (const uid of shown.match(UUID) ?? []) {
		const item = byUid.get(uid.toLowerCase());
		if (item && item.exec !== e.exec) found.add(`task uid ${uid} of exec ${item.exec}`);
	}
	return [...found];
}

function checkStore(
	workload: Workload,
	outcomes: ExecOutcome[],
	tasks: Map<string, Task>,
	byUid: Map<string, ItemPlan>,
): Failure[] {
	const failures: Failure[] = [];
	const byMarker = new Map<string, number>();
	for (const task of tasks.values()) {
		const item = byUid.get(task.uid.toLowerCase());
		if (!item) {
			failures.push({
				invariant: 'store',
				message: `task ${task.uid} stored, asked by no execution`,
			});
			continue;
		}
		const f = task.fields;
		if (
			f.title !== item.title ||
			f.marker !== item.marker ||
			f.amount !== item.amount ||
			f.code !== item.code
		)
			failures.push({
				invariant: 'store',
				exec: item.exec,
				message: `task ${task.uid} (item ${item.n}) stored with other values: ${JSON.stringify(f).slice(0, 200)}`,
			});
		const marker = String(f.marker);
		byMarker.set(marker, (byMarker.get(marker) ?? 0) + 1);
	}
	for (const [marker, count] of byMarker)
		if (count > 1)
			failures.push({ invariant: 'store', message: `${count} tasks hold marker ${marker}` });
	workload.execs.forEach((e, exec) => {
		const outcome = outcomes[exec];
		if (e.op === 'get') {
			// Reads write nothing: the seeded tasks are as seeded (checked above by their values).
			return;
		}
		if (outcome.cancelled) return;
		if (outcome.error) return; // stopped on an error: any of its own items may have been written
		(outcome.items ?? []).forEach((got, index) => {
			const item = e.items[index];
			const stored = tasks.has(item.uid);
			if (got.ok && !stored)
				failures.push({
					invariant: 'store',
					exec,
					message: `item ${index} reported written, not stored`,
				});
			if (!got.ok && stored)
				failures.push({
					invariant: 'store',
					exec,
					message: `item ${index} reported failed (${got.status}), but stored`,
				});
		});
	});
	return failures;
}

/** Tasks the Get executions read, seeded before each phase. */
function seedReads(sim: Simulator, workload: Workload) {
	for (const e of workload.execs)
		if (e.op === 'get')
			for (const item of e.items)
				if (item.exists)
					sim.seedTasks(1, () => ({
						uid: item.uid,
						fields: { title: item.title, ...customOf(item) },
					}));
}

export interface SimulationOptions {
	families: readonly Family[];
	maxExecs: number;
	maxItems?: number;
	/** Give up on a phase of a seed after this much virtual time (a hang); default 90 s. */
	seedTimeoutMs?: number;
	/** Return every request's line (SeedResult.requestLog). */
	keepLog?: boolean;
}

/** Whether `url` is the simulator's (its port, on 127.0.0.1 or localhost, however spelt). */
const servedBy = (sim: Simulator, url: URL) =>
	url.port === String(sim.port) && ['127.0.0.1', 'localhost'].includes(url.hostname);

/**
 * Runs one seed on `sim` (reset before and after) and checks the invariants: in process, on a virtual clock installed
 * for the seed alone (uninstalled after, whatever happened), so the seed replays exactly.
 */
export async function runSeed(
	sim: Simulator,
	seed: number,
	options: SimulationOptions,
): Promise<SeedResult> {
	watchLimiters();
	const started = realNow();
	const clock = new VirtualClock(seed);
	const http = installInProcessHttp((url) =>
		servedBy(sim, url) ? (request) => sim.handle(request) : undefined,
	);
	try {
		const result = await runPhases(sim, seed, options, clock, http);
		return { ...result, ms: realNow() - started };
	} finally {
		http.uninstall();
		clock.uninstall();
		// Whatever the executions left behind must not carry over to the next seed.
		resetCallers();
		sim.configure({ intercept: undefined });
	}
}

async function runPhases(
	sim: Simulator,
	seed: number,
	options: SimulationOptions,
	clock: VirtualClock,
	http: InProcessHttp,
): Promise<SeedResult> {
	const workload = makeWorkload(seed, options);
	const byUid = new Map<string, ItemPlan>();
	for (const e of workload.execs) for (const item of e.items) byUid.set(item.uid, item);
	const failures: Failure[] = [];
	const tokens = [SHARED_TOKEN, ...workload.execs.map((e) => aloneToken(e.exec))];
	const log: string[] = [];

	// Shared phase: every execution on one credential, at its start time.
	const sharedPhase = newPhase();
	const finish = (requestCount: number): SeedResult => ({
		seed,
		execs: workload.execs.length,
		items: byUid.size,
		requests: requestCount,
		sharedRequests: sharedPhase.sharedRequests,
		ms: 0,
		virtualMs: clock.elapsedMs,
		failures,
		workload,
		...(options.keepLog && { requestLog: log }),
	});
	resetCallers();
	limitersUsed.clear();
	sim.reset();
	sim.configure({
		tokens,
		requestsPerWindow: workload.limit,
		windowMs: workload.windowMs,
		retryAfterOnLimit: false,
		faults: undefined,
		intercept: interceptor(workload, byUid, sharedPhase, true),
	});
	seedReads(sim, workload);
	const timeout = options.seedTimeoutMs ?? 90_000;
	const hang = (phase: string, stuck: Stuck) =>
		failures.push({
			invariant: 'hang',
			message: {
				timeout: `${phase}the executions had not all ended after ${timeout} ms`,
				deadlock: `${phase}the executions had not all ended, and nothing was left to wait for (at ${clock.elapsedMs} ms): a promise nobody settles`,
				spin: `${phase}the executions had not all ended, and timers kept firing at ${clock.elapsedMs} ms without time moving`,
			}[stuck],
		});
	const phaseStart = clock.now;
	const shared = await clock.run(
		Promise.all(workload.execs.map((e) => runExecution(sim, workload, e, SHARED_TOKEN, true))),
		timeout,
	);
	if ('stuck' in shared) {
		hang('', shared.stuck);
		if (options.keepLog) log.push(...logLines(sim.requests, phaseStart));
		return finish(sim.requests.length);
	}
	await quiet(clock, http, sim);
	const limiters = limitersUsed.size;
	const requests = [...sim.requests];
	const tasks = new Map(sim.tasks);
	if (options.keepLog) log.push(...logLines(requests, phaseStart), '-- alone');

	// Alone phase: each execution on its own token (its own limiter and lanes: nothing shared), all at once.
	resetCallers();
	sim.reset();
	sim.configure({ intercept: interceptor(workload, byUid, newPhase(), false) });
	seedReads(sim, workload);
	const aloneStart = clock.now;
	const alone = await clock.run(
		Promise.all(
			workload.execs.map((e) => runExecution(sim, workload, e, aloneToken(e.exec), false)),
		),
		timeout,
	);
	if (!('stuck' in alone)) await quiet(clock, http, sim);
	if (options.keepLog) log.push(...logLines(sim.requests, aloneStart));
	sim.configure({ intercept: undefined });
	if ('stuck' in alone) {
		hang('alone, ', alone.stuck);
		return finish(requests.length);
	}
	const sharedOutcomes = shared.value;
	const aloneOutcomes = alone.value;

	// 1. Outcomes: shared as alone (within what the execution's own faults leave open), and alone as its faults say.
	for (const e of workload.execs) {
		const sharedOutcome = sharedOutcomes[e.exec];
		for (const problem of checkOutcome(e, aloneOutcomes[e.exec]))
			failures.push({ invariant: 'alone', exec: e.exec, message: problem });
		if (sharedOutcome.cancelled) continue;
		for (const problem of checkOutcome(e, sharedOutcome))
			failures.push({ invariant: 'outcome', exec: e.exec, message: problem });
	}
	// 2. Leaks.
	for (const e of workload.execs)
		for (const leak of leaks(workload, e, sharedOutcomes[e.exec].shown, byUid))
			failures.push({ invariant: 'leak', exec: e.exec, message: `shows ${leak}` });
	// 3. The store.
	failures.push(...checkStore(workload, sharedOutcomes, tasks, byUid));
	// 4. The server's window count: a 429 of its own (not a fault we injected) means it counted past the limit.
	const windowRefusals = requests.filter((request) => request.status === 429 && !request.fault);
	if (windowRefusals.length) {
		// What the refused request's last window held: which faults came before it (a hint at the cause).
		const refused = windowRefusals[0];
		const within = requests.filter(
			(request) => request.at > refused.at - workload.windowMs && request.at <= refused.at,
		);
		const faults = new Map<string, number>();
		for (const request of within)
			if (request.fault) faults.set(request.fault, (faults.get(request.fault) ?? 0) + 1);
		const cancelled = workload.execs.filter((e) => sharedOutcomes[e.exec].cancelled).length;
		failures.push({
			invariant: 'window',
			message:
				`${windowRefusals.length} request(s) refused by the server's window (limit ${workload.limit} per ${workload.windowMs} ms); ` +
				`the ${within.length} requests of the ${workload.windowMs} ms before the first: ` +
				`${[...faults].map(([fault, count]) => `${count} ${fault}`).join(', ') || 'no fault'}; ` +
				`${cancelled} execution(s) cancelled in the seed`,
		});
	}
	// 5. One limiter for the one token of the shared phase.
	if (limiters > 1)
		failures.push({
			invariant: 'limiter',
			message: `${limiters} rate limiters sent for one token`,
		});

	return finish(requests.length);
}
