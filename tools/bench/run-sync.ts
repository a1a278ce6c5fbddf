// The sync scenario: N tickets upserted by one contender, against the open or the capped server, at the scaled or the
// real window; and the HTTP Request contender's smaller run scaled up to a larger N.
import type { Simulator } from '../simulator/simulator';
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, resetSimulator, type MajorRun } from './execute';
import { CONTENDER_NAME, type Contender, type Server, type SyncResult } from './results';
import { BATCH_SIZE, CAPPED_BATCH_LIMIT, LIMIT, ceilDiv, floorMs } from './setup';

export async function runSync(
	run: MajorRun,
	contender: Contender,
	server: Server,
	id: string,
	n: number,
	windowMs: number,
): Promise<SyncResult> {
	const { sim, major } = run;
	resetSimulator(sim, LIMIT, windowMs, server);
	const nodeName = contender === 'http-request' ? 'HTTP Request' : 'Task Backlog';
	const serverName = server === 'capped50' ? ', batch limit 50 undocumented' : '';
	const measured = await execute(
		run.folder,
		id,
		`n8n ${major}.x ${CONTENDER_NAME[contender]} N=${n} (window ${windowMs / 1000} s${serverName})`,
	);
	const node = W.nodeRun(measured.run, nodeName);
	const requests = [...sim.requests];
	const start = node?.startTime ?? requests[0]?.at ?? 0;
	const nodeMs = node?.executionTime ?? 0;
	const acceptedBatch =
		server === 'capped50' ? Math.min(BATCH_SIZE, CAPPED_BATCH_LIMIT) : BATCH_SIZE;
	const requestsNeeded = contender === 'http-request' ? n : ceilDiv(n, acceptedBatch);
	const firstAt = requests[0]?.at ?? start;
	const result: SyncResult = {
		scenario: 'sync',
		major,
		contender,
		server,
		n,
		windowMs,
		ok: !errorText(measured),
		error: errorText(measured),
		requests: requests.length,
		writeRequests: requests.filter((r) => r.method !== 'GET' && r.path !== '/tasks/query').length,
		requestsNeeded,
		rejected429: requests.filter((r) => r.status === 429).length,
		otherErrors: requests.filter((r) => r.status !== 429 && (r.status >= 400 || r.status === 0))
			.length,
		...checkTasks(sim, n),
		errorItems: (node?.items ?? []).filter((item) => item.error !== undefined).length,
		nodeMs,
		prepMs: firstAt - start,
		requestPhaseMs: start + nodeMs - firstAt,
		floorMs: floorMs(requestsNeeded, windowMs),
		processWallMs: measured.wallMs,
		cpuMs: cpuOf(measured),
		peakRssMb: measured.usage?.peakRssMb,
		requestTimes: requests.map((r) => (r.at - start) / 1000),
		rejectedTimes: requests.filter((r) => r.status === 429).map((r) => (r.at - start) / 1000),
	};
	// the run's JSON of 50,000 items is large: keep only what the report needs
	measured.run = undefined;
	return result;
}

/** Tasks in the simulator against tickets T-1 … T-n with title "Ticket i". */
function checkTasks(sim: Simulator, n: number) {
	const byTicket = new Map<string, number>();
	let wrongValues = 0;
	for (const task of sim.tasks.values()) {
		const ticket = String(task.fields?.ticket_id ?? '');
		byTicket.set(ticket, (byTicket.get(ticket) ?? 0) + 1);
		const number = Number(ticket.replace(/^T-/, ''));
		if (task.fields?.title !== `Ticket ${number}`) wrongValues++;
	}
	let missing = 0;
	for (let i = 1; i <= n; i++) if (!byTicket.has(`T-${i}`)) missing++;
	return {
		tasks: sim.tasks.size,
		duplicates: sim.tasks.size - byTicket.size,
		missing,
		wrongValues,
	};
}

/** A run of the HTTP Request contender at a smaller N, scaled up linearly (marked as such everywhere). */
export function extrapolate(result: SyncResult, n: number): SyncResult {
	const factor = n / result.n;
	const scale = (value: number) => Math.round(value * factor);
	return {
		...result,
		n,
		extrapolatedFrom: result.n,
		requests: scale(result.requests),
		writeRequests: scale(result.writeRequests),
		requestsNeeded: n,
		rejected429: scale(result.rejected429),
		otherErrors: scale(result.otherErrors),
		tasks: scale(result.tasks),
		duplicates: scale(result.duplicates),
		missing: scale(result.missing),
		wrongValues: scale(result.wrongValues),
		errorItems: scale(result.errorItems),
		nodeMs: scale(result.nodeMs),
		prepMs: result.prepMs,
		requestPhaseMs: scale(result.requestPhaseMs),
		floorMs: floorMs(n, result.windowMs),
		processWallMs: scale(result.processWallMs),
		cpuMs: result.cpuMs === undefined ? undefined : scale(result.cpuMs),
		peakRssMb: undefined,
		requestTimes: result.requestTimes.map((t) => t * factor),
		rejectedTimes: result.rejectedTimes.map((t) => t * factor),
	};
}
