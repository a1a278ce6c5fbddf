// The scheduled-sync scenario (issue 32 item 5): Sync Backlog of a backlog of N tickets, as one scheduled run finds it
// after an earlier sync (1 % of titles changed, 0.5 % new, 0.5 % gone), on the issue's server: GET /tasks pages of at
// most 13 and /tasks/query pages of 100, both clamped silently, batch limit 50 undocumented (strict profile).
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/tasks/identity';
import type { Simulator } from '../simulator/simulator';
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, type MajorRun } from './execute';
import type { ScheduledSyncResult } from './results';
import { CAPPED_BATCH_LIMIT, LIMIT, PAGE_SIZE, ceilDiv, floorMs } from './setup';

/** The issue's server: GET /tasks pages hold at most 13 tasks; the query answers up to 100. */
export const ISSUE_PAGE_SIZE = 13;
export const SCHEDULED_SOURCE = 'helpdesk';

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

/** The churn of a backlog of n: tickets T-(gone+1) … T-(n+gone), every 100th renamed; T-1 … T-gone gone. */
export function churnOf(n: number) {
	const gone = Math.round(n / 200);
	const created = gone;
	let renamed = 0;
	for (let id = gone + 1; id <= n + gone; id++) if (id <= n && id % 100 === 0) renamed++;
	const writeBatches =
		ceilDiv(gone, CAPPED_BATCH_LIMIT) + ceilDiv(renamed + created, CAPPED_BATCH_LIMIT);
	return { gone, created, renamed, writeBatches };
}

/** The source's tickets this run: a Code node (the renamed ones' titles end in "(renamed)"). */
export function churnedTicketsNode(name: string, n: number): W.WorkflowNode {
	const gone = churnOf(n).gone;
	return W.codeNode(
		name,
		`Array.from({ length: ${n} }, (_, i) => { const id = i + ${gone + 1}; ` +
			`return { id: 'T-' + id, title: 'Ticket ' + id + (id <= ${n} && id % 100 === 0 ? ' (renamed)' : '') }; })`,
	);
}

export function scheduledSyncParameters(): W.Json {
	return {
		resource: 'task',
		operation: 'syncBacklog',
		externalId: '={{ $json.id }}',
		title: '={{ $json.title }}',
		sourceValue: SCHEDULED_SOURCE,
	};
}

export async function runScheduledSync(
	run: MajorRun,
	id: string,
	n: number,
): Promise<ScheduledSyncResult> {
	const { sim, major } = run;
	const { windowMs } = run.options;
	resetIssueServer(sim, windowMs);
	// the source's open tasks as an earlier sync of T-1 … T-n left them
	sim.seedTasks(n, (i) => ({
		uid: uuidV5(`T-${i + 1}`, DEFAULT_EXTERNAL_ID_NAMESPACE),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: SCHEDULED_SOURCE },
	}));
	sim.clearRequests();
	const churn = churnOf(n);
	const measured = await execute(
		run.folder,
		id,
		`n8n ${major}.x Sync Backlog N=${n} (window ${windowMs / 1000} s, the issue's server)`,
	);
	const node = W.nodeRun(measured.run, 'Task Backlog');
	const requests = [...sim.requests];
	const actions: Record<string, number> = {};
	for (const item of node?.items ?? []) {
		const action = String(item.action ?? 'error');
		actions[action] = (actions[action] ?? 0) + 1;
	}
	const tasks = [...sim.tasks.values()].filter((t) => t.fields?.source === SCHEDULED_SOURCE);
	const queries = requests.filter((r) => r.method === 'POST' && r.path === '/tasks/query');
	const listingQueries = queries.filter((r) => !JSON.stringify(r.body).includes('"operator":"in"'));
	const requestsNeeded = ceilDiv(n, PAGE_SIZE) + churn.writeBatches;
	const result: ScheduledSyncResult = {
		scenario: 'scheduled',
		major,
		n,
		windowMs,
		ok: !errorText(measured),
		error: errorText(measured),
		requests: requests.length,
		listingGets: requests.filter((r) => r.method === 'GET' && r.path === '/tasks').length,
		otherGets: requests.filter((r) => r.method === 'GET' && r.path !== '/tasks').length,
		listingQueries: listingQueries.length,
		bulkReads: queries.length - listingQueries.length,
		writeRequests: requests.filter((r) => r.method !== 'GET' && r.path !== '/tasks/query').length,
		rejected429: requests.filter((r) => r.status === 429).length,
		otherErrors: requests.filter((r) => r.status !== 429 && (r.status >= 400 || r.status === 0))
			.length,
		expected: { closed: churn.gone, created: churn.created, updated: churn.renamed },
		actions,
		tasks: tasks.length,
		closed: tasks.filter((t) => t.status === 'DONE').length,
		duplicates: tasks.length - new Set(tasks.map((t) => String(t.fields?.ticket_id))).size,
		requestsNeeded,
		bound: Math.floor(1.1 * requestsNeeded + 5),
		nodeMs: node?.executionTime ?? 0,
		floorMs: floorMs(requestsNeeded, windowMs),
		processWallMs: measured.wallMs,
		cpuMs: cpuOf(measured),
		peakRssMb: measured.usage?.peakRssMb,
	};
	measured.run = undefined;
	return result;
}
