// The Return All scenario: Get Many of RETURN_ALL_TASKS seeded tasks, page by page under the rate limit, with the
// memory of the same workflow at Limit 1 as its baseline.
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, resetSimulator, type MajorRun } from './execute';
import type { ReturnAllResult } from './results';
import { LIMIT, PAGE_SIZE, RETURN_ALL_TASKS, ceilDiv, floorMs } from './setup';

export async function runReturnAll(
	run: MajorRun,
	id: string,
	limitOneId: string,
): Promise<ReturnAllResult> {
	const { sim, folder, major } = run;
	const { windowMs } = run.options;
	resetSimulator(sim, LIMIT, windowMs);
	sim.seedTasks(RETURN_ALL_TASKS, (i) => ({
		fields: { title: `Seeded ${i + 1}`, ticket_id: `S-${i + 1}` },
	}));
	const baseline = await execute(
		folder,
		limitOneId,
		`n8n ${major}.x Get Many, Limit 1 (memory baseline)`,
	);
	sim.clearRequests();
	const measured = await execute(
		folder,
		id,
		`n8n ${major}.x Get Many, Return All of ${RETURN_ALL_TASKS}`,
	);
	const node = W.nodeRun(measured.run, 'Task Backlog');
	const requests = sim.requests;
	return {
		scenario: 'returnAll',
		major,
		ok: !errorText(measured),
		error: errorText(measured),
		tasks: RETURN_ALL_TASKS,
		items: node?.items.length ?? 0,
		requests: requests.length,
		rejected429: requests.filter((r) => r.status === 429).length,
		nodeMs: node?.executionTime ?? 0,
		floorMs: floorMs(ceilDiv(RETURN_ALL_TASKS, PAGE_SIZE), windowMs),
		processWallMs: measured.wallMs,
		peakRssMb: measured.usage?.peakRssMb,
		baselinePeakRssMb: baseline.usage?.peakRssMb,
		cpuMs: cpuOf(measured),
	};
}
