/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The scheduled-sync scenario: one Sync Backlog workflow (node version 3, Output "Changes and Summary") run again and
// again by `n8n execute --id`, as n8n runs a schedule, so that its memory (workflow static data) is kept from run to
// run. After a bulk load (the simulator's store seeded as an earlier sync left it, then one run that changes nothing),
// the measured run finds a churned backlog (1 % of titles changed, 0.5 % new, 0.5 % gone) at the service's real minute;
// a few more runs with a small churn each follow, then a copy of the workflow with Full Read Every (Hours) 0 reads
// everything and must change nothing. Beside them: the measured run's input through a copy with Output "Every Row"
// (today's output, on the same store, which is put back afterwards), and one run on a server that does not filter a
// query by time (the node must notice and read everything).
import * as fs from 'fs';
import * as path from 'path';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator } from '../simulator/simulator';
import type { Task } from '../simulator/types';
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, type MajorRun } from './execute';
import type { ScheduledRun, ScheduledSyncResult } from './results';
import { BATCH_SIZE, CAPPED_BATCH_LIMIT, ceilDiv, LIMIT, log, PAGE_SIZE, TOKEN } from './setup';
import { churnLanded } from './targets';

/** The issue's server: GET /tasks pages hold at most 13 tasks; the query answers up to 100. */
export const ISSUE_PAGE_SIZE = 13;
export const SCHEDULED_SOURCE = 'helpdesk';
/** The service's minute, which the measured runs are paced by. */
export const REAL_MINUTE_MS = 60_000;
/** Runs a day at a 5-minute interval. */
export const RUNS_PER_DAY = 288;
/** The schedule's interval: a run must end within it. */
export const INTERVAL_MS = 5 * 60_000;

/** A fresh simulator set up as the issue's server. */
export function resetIssueServer(sim: Simulator, windowMs: number) {
	sim.reset();
	sim.configure({
		requestsPerWindow: LIMIT,
		windowMs,
		faults: undefined,
		maxPageSize: ISSUE_PAGE_SIZE,
		profile: 'strict',
		readings: {
			maxBatchSize: CAPPED_BATCH_LIMIT,
			batchTooLarge: '413',
			queryMaxLimit: PAGE_SIZE,
		},
	});
}

/** The normal simulator (lenient profile, pages of 100), which filters a query by time. */
function resetTimeFilteringServer(sim: Simulator, windowMs: number) {
	sim.reset();
	sim.configure({
		requestsPerWindow: LIMIT,
		windowMs,
		faults: undefined,
		maxPageSize: PAGE_SIZE,
		profile: 'lenient',
		readings: undefined,
		queryIgnores: undefined,
	});
}

/**
 * The tickets of run `phase` of a backlog of n (self-contained: a Code node runs its source text). 1: T-1 … T-n as the
 * bulk load left them. 2: the issue's churn, T-(n/200+1) … T-(n+n/200), every 100th of the old ones renamed. 3 on:
 * small churns k = 1 … phase-2 on top, each 0.1 %: old tickets whose number ends in 00k gone, new ones added, those
 * ending in 50k edited (tasks never written since the load, so no Close Grace Period keeps them open).
 */
export function scheduledTickets(n: number, phase: number): Array<{ id: string; title: string }> {
	const gone = Math.round(n / 200);
	const step = Math.max(1, Math.round(n / 1000));
	const small = Math.max(0, phase - 2);
	const first = phase >= 2 ? gone + 1 : 1;
	const last = phase >= 2 ? n + gone + small * step : n;
	const out: Array<{ id: string; title: string }> = [];
	for (let id = first; id <= last; id++) {
		const old = id <= n;
		if (old && id % 1000 >= 1 && id % 1000 <= small) continue;
		let title = 'Ticket ' + id;
		if (phase >= 2 && old && id % 100 === 0) title += ' (renamed)';
		if (old && id % 1000 >= 501 && id % 1000 <= 500 + small) title += ' (edit)';
		out.push({ id: 'T-' + id, title });
	}
	return out;
}

/**
 * The tickets as a Code node: those of `phase`, or (no phase) of this workflow's run number, counted in its global
 * static data, which n8n keeps from one `n8n execute` to the next as it does for a schedule.
 */
export function scheduledTicketsNode(name: string, n: number, phase?: number): W.WorkflowNode {
	const run =
		phase === undefined
			? "(() => { const memory = $getWorkflowStaticData('global'); memory.runs = (memory.runs ?? 0) + 1; return memory.runs; })()"
			: String(phase);
	return W.codeNode(name, `(${scheduledTickets.toString()})(${n}, ${run})`);
}

/** Sync Backlog version 3 of the tickets' source; `options` as the node's Sync Options, `extra` parameters. */
export function scheduledSyncNode(
	credential: W.CredentialRef,
	extra: W.Json = {},
	syncOptions: W.Json = {},
): W.WorkflowNode {
	return W.backlogNode(
		'Task Backlog',
		credential,
		{
			resource: 'task',
			operation: 'syncBacklog',
			externalId: '={{ $json.id }}',
			title: '={{ $json.title }}',
			sourceValue: SCHEDULED_SOURCE,
			syncOptions,
			...extra,
		},
		{ typeVersion: 3 },
	);
}

/** The workflows of one backlog size: the scheduled one, its Every Row copy and its full-read copy. */
export interface ScheduledWorkflows {
	n: number;
	scheduled: string;
	everyRow: string;
	fullRead: string;
}

/** The run the Every Row copy gives today's output of, and the last run of the series the full read follows. */
const MEASURED_PHASE = 2;
const SERIES_END_PHASE = 5;

export function scheduledWorkflows(
	n: number,
	credential: W.CredentialRef,
): { ids: ScheduledWorkflows; workflows: W.Workflow[] } {
	// 16 characters, as the bench's other workflow ids
	const id = (kind: string) => `bnchSch${kind}${String(n).padStart(6, '0')}`;
	const workflows = [
		W.workflow(id('Run'), `bench: scheduled Sync Backlog ${n}`, [
			W.manualTrigger(),
			scheduledTicketsNode('Tickets', n),
			scheduledSyncNode(credential),
		]),
		W.workflow(id('Row'), `bench: Sync Backlog ${n}, Output Every Row`, [
			W.manualTrigger(),
			scheduledTicketsNode('Tickets', n, MEASURED_PHASE),
			scheduledSyncNode(credential, { syncOutput: 'allRows' }),
		]),
		W.workflow(id('All'), `bench: Sync Backlog ${n}, Full Read Every 0`, [
			W.manualTrigger(),
			scheduledTicketsNode('Tickets', n, SERIES_END_PHASE),
			scheduledSyncNode(credential, {}, { fullReadEveryHours: 0 }),
		]),
	];
	return {
		ids: { n, scheduled: workflows[0].id, everyRow: workflows[1].id, fullRead: workflows[2].id },
		workflows,
	};
}

/** What run `phase` must do to the store run `phase - 1` left (phase 1: the seeded store, which equals it). */
function expectedOf(n: number, phase: number) {
	const before = new Map(
		scheduledTickets(n, Math.max(1, phase - 1)).map((t) => [t.id, t.title] as const),
	);
	const after = scheduledTickets(n, phase);
	let created = 0;
	let updated = 0;
	for (const ticket of after) {
		const title = before.get(ticket.id);
		if (title === undefined) created++;
		else if (title !== ticket.title) updated++;
	}
	const ids = new Set(after.map((t) => t.id));
	const closed = [...before.keys()].filter((id) => !ids.has(id)).length;
	return { closed, created, updated };
}

/** The source's tasks against the tickets of `phase`: each ticket's task open with its title, every other one closed. */
function storeMatches(sim: Simulator, n: number, phase: number) {
	const wanted = new Map(scheduledTickets(n, phase).map((t) => [t.id, t.title] as const));
	const tasks = [...sim.tasks.values()].filter((t) => t.fields?.source === SCHEDULED_SOURCE);
	const byTicket = new Map<string, number>();
	let wrong = 0;
	for (const task of tasks) {
		const ticket = String(task.fields?.ticket_id);
		byTicket.set(ticket, (byTicket.get(ticket) ?? 0) + 1);
		const title = wanted.get(ticket);
		const open = task.status !== 'DONE' && !task.archived;
		if (title === undefined ? open : !open || task.fields?.title !== title) wrong++;
	}
	const duplicates = [...byTicket.values()].filter((count) => count > 1).length;
	const missing = [...wanted.keys()].filter((id) => !byTicket.has(id)).length;
	return { ok: wrong === 0 && duplicates === 0 && missing === 0, wrong, duplicates, missing };
}

/** Moves every stamp of the source's tasks back by `ms`: the backlog as a sync an hour ago left it. */
function ageTasks(sim: Simulator, ms: number) {
	for (const task of sim.tasks.values()) {
		const stamps = task as unknown as Record<string, unknown>;
		for (const name of ['created_at', 'updated_at', 'internal_created_at', 'internal_updated_at']) {
			const value = stamps[name];
			if (typeof value === 'string') stamps[name] = new Date(Date.parse(value) - ms).toISOString();
		}
	}
}

/** The rate-limit window of the simulator and of the scheduled workflows' credential (same id, imported again). */
async function useWindow(run: MajorRun, credential: W.CredentialRef, windowMs: number) {
	run.sim.configure({ requestsPerWindow: LIMIT, windowMs });
	await run.folder.folder.importCredentials([
		W.backlogCredential(credential, {
			baseUrl: run.sim.url,
			token: TOKEN,
			requestsPerMinute: LIMIT,
			rateLimitWindowSeconds: windowMs / 1000,
		}),
	]);
}

const isQuery = (r: { method: string; path: string }) =>
	r.method === 'POST' && r.path === '/tasks/query';

/** One `n8n execute` of one workflow: its requests by kind, what it did, its output and what it cost. */
async function measure(
	run: MajorRun,
	n: number,
	workflowId: string,
	label: string,
	phase: number,
	windowMs: number,
	expected = expectedOf(n, phase),
): Promise<ScheduledRun> {
	const { sim, major } = run;
	sim.clearRequests();
	const measured = await execute(
		run.folder,
		workflowId,
		`n8n ${major}.x scheduled Sync Backlog N=${n}, ${label} (window ${windowMs / 1000} s)`,
	);
	if (measured.code !== 0) {
		// What n8n's user folder holds after a failed run (its database, or none).
		const database = path.join(run.folder.folder.dir, '.n8n', 'database.sqlite');
		const size = fs.existsSync(database) ? `${fs.statSync(database).size} bytes` : 'missing';
		log(`n8n ${major}.x ${label} failed; ${database}: ${size}`);
	}
	const entry = measured.run?.data?.resultData?.runData?.['Task Backlog']?.[0];
	const items = (entry?.data?.main?.[0] ?? []) as Array<{ json: W.Json }>;
	const summary = items.find((item) => item.json.action === 'summary')?.json;
	const actions: Record<string, number> = {};
	if (summary) {
		for (const [action, count] of Object.entries(summary.counts as Record<string, number>))
			if (count > 0) actions[action] = count;
	} else {
		for (const item of items) {
			const action = String(item.json.action ?? 'error');
			actions[action] = (actions[action] ?? 0) + 1;
		}
	}
	const requests = [...sim.requests];
	// BENCH_SCHEDULED_TRACE=1 logs each request of each run (what a run reads, and why it costs what it costs).
	if (process.env.BENCH_SCHEDULED_TRACE)
		for (const r of requests)
			log(
				`  ${r.status} ${r.method} ${r.path} ${JSON.stringify(r.body ?? '')
					.replace(/"[0-9a-f-]{36}"/g, 'U')
					.slice(0, 160)}`,
			);
	const bodyOf = (r: { body?: unknown }) => JSON.stringify(r.body ?? '');
	const queries = requests.filter(isQuery);
	const byUid = queries.filter((r) => bodyOf(r).includes('"field":"uid","operator":"in"'));
	const changes = queries.filter((r) => bodyOf(r).includes('"updated_at"'));
	const counts = queries.filter(
		(r) => !changes.includes(r) && bodyOf(r).includes('"field":"status","operator":"in"'),
	);
	const store = storeMatches(sim, n, phase);
	const error =
		errorText(measured) ??
		(store.ok
			? undefined
			: `the store does not match the tickets: ${store.wrong} wrong, ${store.duplicates} doubled, ${store.missing} missing`);
	const result: ScheduledRun = {
		label,
		phase,
		windowMs,
		ok: !error,
		error,
		read: summary ? String(summary.read) : 'full',
		requests: requests.length,
		listingGets: requests.filter((r) => r.method === 'GET' && r.path === '/tasks').length,
		listingQueries: queries.length - byUid.length - changes.length - counts.length,
		changesQueries: changes.length,
		countQueries: counts.length,
		byUidReads: byUid.length,
		otherGets: requests.filter((r) => r.method === 'GET' && r.path !== '/tasks').length,
		writeRequests: requests.filter((r) => r.method !== 'GET' && !isQuery(r)).length,
		rejected429: requests.filter((r) => r.status === 429).length,
		otherErrors: requests.filter((r) => r.status !== 429 && (r.status >= 400 || r.status === 0))
			.length,
		expected,
		actions,
		storeMatches: store.ok,
		outputItems: items.length,
		outputBytes: Buffer.byteLength(JSON.stringify(items)),
		nodeMs: entry ? Number(entry.executionTime) : 0,
		processWallMs: measured.wallMs,
		cpuMs: cpuOf(measured),
		peakRssMb: measured.usage?.peakRssMb,
	};
	measured.run = undefined;
	return result;
}

/** The runs of one backlog size, in the order the scenario makes them (see the file's head). */
export async function runScheduledSync(
	run: MajorRun,
	ids: ScheduledWorkflows,
	credential: W.CredentialRef,
): Promise<ScheduledSyncResult> {
	const { sim } = run;
	const { n } = ids;
	const scaled = run.options.windowMs;
	const runs: ScheduledRun[] = [];
	resetTimeFilteringServer(sim, scaled);
	await useWindow(run, credential, scaled);
	// The source's open tasks as a sync of T-1 … T-n left them an hour ago.
	sim.seedTasks(n, (i) => ({
		uid: uuidV5(`T-${i + 1}`, DEFAULT_EXTERNAL_ID_NAMESPACE),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: SCHEDULED_SOURCE },
	}));
	ageTasks(sim, 60 * 60_000);
	let phase = 1;
	runs.push(await measure(run, n, ids.scheduled, 'bulk load: first run, no change', phase, scaled));

	// Today's output of the measured run's input (Output Every Row), on the store as it is now, put back afterwards.
	const saved = [...sim.tasks.values()].map((task) => structuredClone(task));
	runs.push(await measure(run, n, ids.everyRow, 'Every Row copy of the measured run', 2, scaled));
	sim.tasks.clear();
	for (const task of saved as Task[]) sim.tasks.set(task.uid, task);

	await useWindow(run, credential, REAL_MINUTE_MS);
	phase = MEASURED_PHASE;
	runs.push(await measure(run, n, ids.scheduled, 'measured: the churn', phase, REAL_MINUTE_MS));
	for (phase = MEASURED_PHASE + 1; phase <= SERIES_END_PHASE; phase++) {
		const label = `series ${phase - MEASURED_PHASE}: small churn`;
		runs.push(await measure(run, n, ids.scheduled, label, phase, REAL_MINUTE_MS));
	}

	await useWindow(run, credential, scaled);
	const fullLabel = 'full read after the series (copy, Full Read Every 0)';
	const nothing = { closed: 0, created: 0, updated: 0 };
	runs.push(await measure(run, n, ids.fullRead, fullLabel, SERIES_END_PHASE, scaled, nothing));

	// A server that does not filter a query by time: the memory is usable, the changes read shows it, all is read.
	sim.configure({ queryIgnores: ['time'] });
	try {
		const label = 'server ignoring time conditions: small churn';
		runs.push(await measure(run, n, ids.scheduled, label, SERIES_END_PHASE + 1, scaled));
	} finally {
		sim.configure({ queryIgnores: undefined });
	}

	const writesNeeded = (r: ScheduledRun) =>
		ceilDiv(r.expected.closed + r.expected.created + r.expected.updated, BATCH_SIZE);
	const result: ScheduledSyncResult = {
		scenario: 'scheduled',
		major: run.major,
		n,
		runs: runs.map((r) => {
			if (r.read !== 'full') return r;
			const needed = ceilDiv(n, PAGE_SIZE) + writesNeeded(r);
			return { ...r, requestsNeeded: needed, bound: Math.floor(1.1 * needed + 5) };
		}),
	};
	const wrong = result.runs.filter((r) => !churnLanded(r)).map((r) => r.label);
	if (wrong.length > 0) {
		result.failure = `did other than its tickets ask (a full read after the series must change nothing): ${wrong.join('; ')}`;
		log(`n8n ${run.major}.x scheduled Sync Backlog N=${n} FAILED: ${result.failure}`);
	}
	return result;
}
