// The Return All scenario: Get Many of RETURN_ALL_TASKS seeded tasks, page by page under the rate limit, with the
// memory of the same workflow at Limit 1 as its baseline; on the open server (pages of 100) or on the issue's server
// (GET /tasks pages of 13, /tasks/query pages of 100: issue 32 item 5).
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, resetSimulator, type MajorRun } from './execute';
import type { ReturnAllResult } from './results';
import { resetIssueServer } from './run-scheduled';
import { LIMIT, PAGE_SIZE, RETURN_ALL_TASKS, ceilDiv, floorMs } from './setup';

export async function runReturnAll(
	run: MajorRun,
	id: string,
	limitOneId: string,
	server: 'open' | 'issue' = 'open',
): Promise<ReturnAllResult> {
	const { sim, folder, major } = run;
	const { windowMs } = run.options;
	if (server === 'issue') resetIssueServer(sim, windowMs);
	else resetSimulator(sim, LIMIT, windowMs);
	const on = server === 'issue' ? " on the issue's server" : '';
	sim.seedTasks(RETURN_ALL_TASKS, (i) => ({
		fields: { title: `Seeded ${i + 1}`, ticket_id: `S-${i + 1}` },
	}));
	const baseline = await execute(
		folder,
		limitOneId,
		`n8n ${major}.x Get Many, Limit 1 (memory baseline)${on}`,
	);
	sim.clearRequests();
	const measured = await execute(
		folder,
		id,
		`n8n ${major}.x Get Many, Return All of ${RETURN_ALL_TASKS}${on}`,
	);
	const node = W.nodeRun(measured.run, 'Task Backlog');
	const requests = sim.requests;
	const listingGets = requests.filter((r) => r.method === 'GET' && r.path === '/tasks').length;
	const queries = requests.filter((r) => r.method === 'POST' && r.path === '/tasks/query').length;
	return {
		scenario: 'returnAll',
		major,
		server,
		ok: !errorText(measured),
		error: errorText(measured),
		tasks: RETURN_ALL_TASKS,
		items: node?.items.length ?? 0,
		requests: requests.length,
		listingGets,
		queries,
		rejected429: requests.filter((r) => r.status === 429).length,
		nodeMs: node?.executionTime ?? 0,
		floorMs: floorMs(ceilDiv(RETURN_ALL_TASKS, PAGE_SIZE), windowMs),
		processWallMs: measured.wallMs,
		peakRssMb: measured.usage?.peakRssMb,
		baselinePeakRssMb: baseline.usage?.peakRssMb,
		cpuMs: cpuOf(measured),
	};
}
