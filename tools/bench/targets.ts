// The targets the bench checks (the issue's acceptance numbers), per n8n major: met or not, with the value found.
import type { N8nMajor } from '../n8n/n8n';
import type { Json } from '../n8n/workflows';
import { fmt, seconds, serverLabel } from './format';
import { CONTENDER_NAME, type Results, type ScheduledSyncResult } from './results';
import { INTERVAL_MS, RUNS_PER_DAY } from './run-scheduled';
import { BATCH_SIZE, CAPPED_BATCH_LIMIT, PROFILE_N } from './setup';

export function majorTargets(bench: Results, major: N8nMajor): Json[] {
	const targets: Json[] = [];
	const overhead = bench.overhead.find((r) => r.major === major);
	const auto = overhead?.rows.find((row) => row.contender === 'auto-map');
	if (overhead && auto) {
		const perSecond = auto.cpuSecondsPer1000 ? 1000 / auto.cpuSecondsPer1000 : 0;
		targets.push({
			target:
				'Map Automatically: ≥ 20,000 items per CPU second, whole n8n process (rate limit off; minus the workflow with the node disabled; includes n8n storing and printing the 10,000 tasks output)',
			at: `n8n ${major}.x N=${fmt(overhead.n)}`,
			met: perSecond >= 20000,
			value: `${fmt(perSecond)} items/s (${fmt(auto.cpuSecondsPer1000, 3)} CPU s per 1,000)`,
		});
	}
	const nodeProfile = bench.profiles.find((p) => p.major === major)?.node;
	if (nodeProfile) {
		const perSecond = nodeProfile.ourStackMs > 0 ? PROFILE_N / (nodeProfile.ourStackMs / 1000) : 0;
		targets.push({
			target:
				'Map Automatically: ≥ 20,000 items per CPU second of our node alone (CPU profile: samples with a frame of our package on the stack, rate limit off)',
			at: `n8n ${major}.x N=${fmt(PROFILE_N)}`,
			met: perSecond >= 20000,
			value: `${fmt(perSecond)} items/s (${fmt(nodeProfile.ourStackMs / (PROFILE_N / 1000), 1)} CPU ms per 1,000)`,
		});
	}
	for (const r of scheduledOf(bench, major)) targets.push(...scheduledTargets(r));
	const sync = bench.sync.filter((r) => r.major === major);
	for (const r of sync.filter((s) => s.contender !== 'http-request')) {
		const at = `n8n ${major}.x ${CONTENDER_NAME[r.contender]} N=${fmt(r.n)}, window ${r.windowMs / 1000} s, ${serverLabel(r.server)} server`;
		targets.push({ target: 'zero 429s', at, met: r.rejected429 === 0, value: r.rejected429 });
		targets.push({
			target: 'every ticket once, with its values',
			at,
			met: r.ok && r.tasks === r.n && r.duplicates === 0 && r.missing === 0 && r.wrongValues === 0,
			value: `${r.tasks} tasks, ${r.duplicates} dup, ${r.missing} missing, ${r.wrongValues} wrong`,
		});
		if (r.server === 'capped50') {
			// + 4: two bulk reads (not archived, archived), one GET confirming a uid they did not return, one refused batch.
			targets.push({
				target: `requests ≤ ceil(N / ${CAPPED_BATCH_LIMIT}) + 4`,
				at,
				met: r.requests <= r.requestsNeeded + 4,
				value: `${fmt(r.requests)} ≤ ${fmt(r.requestsNeeded + 4)} (${fmt(r.writeRequests)} writes)`,
			});
			targets.push({
				target: 'wall ≤ 1.1 × floor + 2 s',
				at,
				met: r.nodeMs <= 1.1 * r.floorMs + 2000,
				value: `${seconds(r.nodeMs)} s ≤ ${seconds(1.1 * r.floorMs + 2000)} s`,
			});
		} else {
			// + 3: two bulk reads (not archived, archived) and one GET confirming a uid they did not return.
			targets.push({
				target: `requests ≤ ceil(N / ${BATCH_SIZE}) + 3`,
				at,
				met: r.requests <= r.requestsNeeded + 3,
				value: `${fmt(r.requests)} ≤ ${fmt(r.requestsNeeded + 3)} (${fmt(r.writeRequests)} writes)`,
			});
			targets.push({
				target: 'wall ≤ 1.1 × floor',
				at,
				met: r.nodeMs <= 1.1 * r.floorMs,
				value: `${seconds(r.nodeMs)} s / ${seconds(r.floorMs)} s = ${fmt(r.nodeMs / r.floorMs, 2)}`,
			});
		}
		if (r.n >= 50000)
			targets.push({
				target: 'completes; peak RSS of n8n execute',
				at,
				met: r.ok,
				value: r.peakRssMb === undefined ? 'n/a' : `${fmt(r.peakRssMb)} MB`,
			});
		const http = sync.find(
			(p) =>
				p.n === r.n &&
				p.contender === 'http-request' &&
				p.windowMs === r.windowMs &&
				p.server === r.server,
		);
		if (r.n >= 10000 && http) {
			targets.push({
				target: '≥ 50× fewer requests than HTTP Request',
				at,
				met: http.requests / r.requests >= 50,
				value: `${fmt(http.requests / r.requests, 1)}×${http.extrapolatedFrom ? ' (HTTP extrapolated)' : ''}`,
			});
		}
	}
	return targets;
}

/** The scheduled-sync results of a major that have their runs (bench.json files before issue 46 have one run each). */
export function scheduledOf(bench: Results, major: N8nMajor): ScheduledSyncResult[] {
	return (bench.scheduled ?? []).filter((r) => r.major === major && Array.isArray(r.runs));
}

/** The measured run of a scheduled series, the Every Row copy beside it, the full read after it, the unfiltered run. */
export function scheduledRuns(r: ScheduledSyncResult) {
	const find = (prefix: string) => r.runs.find((run) => run.label.startsWith(prefix));
	return {
		bulk: find('bulk load'),
		everyRow: find('Every Row'),
		measured: find('measured'),
		series: r.runs.filter((run) => run.label.startsWith('series')),
		fullRead: find('full read after'),
		unfiltered: find('server ignoring'),
	};
}

const churnText = (c: { closed: number; created: number; updated: number }) =>
	`${fmt(c.closed)} / ${fmt(c.created)} / ${fmt(c.updated)}`;
export const actionsText = (a: Record<string, number>) =>
	churnText({ closed: a.close ?? 0, created: a.create ?? 0, updated: a.update ?? 0 });
/** What the run did is what its tickets ask of the store before it, and nothing else changed. */
export const churnLanded = (run: ScheduledSyncResult['runs'][number]) =>
	run.ok &&
	run.storeMatches &&
	actionsText(run.actions) === churnText(run.expected) &&
	!['reopen', 'unarchive', 'kept_open', 'duplicate', 'conflict', 'failed'].some(
		(action) => (run.actions[action] ?? 0) > 0,
	);

function scheduledTargets(r: ScheduledSyncResult): Json[] {
	const targets: Json[] = [];
	const at = `n8n ${r.major}.x scheduled Sync Backlog N=${fmt(r.n)}`;
	const { everyRow, measured, fullRead, unfiltered } = scheduledRuns(r);
	if (measured) {
		const where = `${at}, measured run, window ${measured.windowMs / 1000} s`;
		targets.push({
			target:
				'measured run (the churn) reads only what changed: requests ≤ 60 (one minute of the limit)',
			at: where,
			met: measured.ok && measured.read === 'incremental' && measured.requests <= 60,
			value: `${fmt(measured.requests)} ≤ 60, read ${measured.read} (${fmt(measured.changesQueries)} changes queries, ${fmt(measured.countQueries)} count, ${fmt(measured.byUidReads)} by uid, ${fmt(measured.otherGets)} GETs, ${fmt(measured.writeRequests)} writes)`,
		});
		targets.push({
			target: `measured run fits the ${INTERVAL_MS / 60_000}-minute interval (wall of n8n execute)`,
			at: where,
			met: measured.ok && measured.processWallMs <= INTERVAL_MS,
			value: `${seconds(measured.processWallMs)} s ≤ ${seconds(INTERVAL_MS)} s (node ${seconds(measured.nodeMs)} s)`,
		});
		if (everyRow) {
			const share = measured.outputBytes / everyRow.outputBytes;
			targets.push({
				target:
					'measured run outputs ≤ 3 % of the bytes of Output Every Row (the same input and store)',
				at: where,
				met: measured.ok && everyRow.ok && share <= 0.03,
				value: `${fmt(measured.outputBytes)} B / ${fmt(everyRow.outputBytes)} B = ${fmt(share * 100, 2)} % (${fmt(measured.outputItems)} of ${fmt(everyRow.outputItems)} items)`,
			});
		}
		targets.push({
			target: `per day at a ${INTERVAL_MS / 60_000}-minute interval (${RUNS_PER_DAY} runs like the measured one; stated)`,
			at: where,
			met: measured.ok,
			value: `${fmt(measured.requests * RUNS_PER_DAY)} requests, ${fmt((measured.outputBytes * RUNS_PER_DAY) / 1e6, 1)} MB of output${everyRow ? ` (Every Row: ${fmt((everyRow.outputBytes * RUNS_PER_DAY) / 1e6, 1)} MB)` : ''}; peak RSS ${fmt(measured.peakRssMb)} MB`,
		});
	}
	const wrong = r.runs.filter((run) => !churnLanded(run));
	targets.push({
		target:
			'every run does exactly what its tickets ask (closed / created / updated as made, nothing else), and leaves the store as a full sync would',
		at,
		met: wrong.length === 0,
		value:
			wrong.length === 0
				? `${r.runs.length} runs`
				: wrong
						.map(
							(run) =>
								`${run.label}: ${actionsText(run.actions)} of ${churnText(run.expected)}${run.storeMatches ? '' : ', store differs'}${run.error ? `, ${run.error.slice(0, 200)}` : ''}`,
						)
						.join('; '),
	});
	if (fullRead) {
		const changed = ['create', 'update', 'reopen', 'unarchive', 'close'].reduce(
			(sum, action) => sum + (fullRead.actions[action] ?? 0),
			0,
		);
		targets.push({
			target: 'a full read right after the series changes nothing',
			at: `${at}, ${fullRead.label}`,
			met: fullRead.ok && fullRead.read === 'full' && changed === 0 && fullRead.writeRequests === 0,
			value: `read ${fullRead.read}, ${fmt(changed)} changes, ${fmt(fullRead.writeRequests)} writes, ${fmt(fullRead.actions.unchanged ?? 0)} unchanged`,
		});
	}
	for (const run of r.runs.filter((x) => x.bound !== undefined && x !== unfiltered))
		targets.push({
			target: 'a full read: requests ≤ 1.1 × (ceil(N / 100) + writes in batches of 100) + 5',
			at: `${at}, ${run.label}, window ${run.windowMs / 1000} s`,
			met: run.ok && run.requests <= (run.bound ?? 0),
			value: `${fmt(run.requests)} ≤ ${fmt(run.bound)} (${fmt(run.listingGets)} GET /tasks, ${fmt(run.byUidReads)} by uid, ${fmt(run.writeRequests)} writes)`,
		});
	if (unfiltered)
		targets.push({
			target:
				'a server that does not filter the query by time: the node notices and reads everything (requests stated, no target)',
			at: `${at}, window ${unfiltered.windowMs / 1000} s`,
			met: churnLanded(unfiltered) && unfiltered.read === 'full' && unfiltered.changesQueries > 0,
			value: `read ${unfiltered.read} after ${fmt(unfiltered.changesQueries)} changes queries; ${fmt(unfiltered.requests)} requests (${fmt(unfiltered.listingGets)} GET /tasks, ${fmt(unfiltered.writeRequests)} writes)`,
		});
	const rejected = r.runs.reduce((sum, run) => sum + run.rejected429, 0);
	targets.push({ target: 'zero 429s', at, met: rejected === 0, value: rejected });
	return targets;
}
