// The targets the bench checks (the acceptance numbers), per n8n major: met or not, with the value found.
import type { N8nMajor } from '../n8n/n8n';
import type { Json } from '../n8n/workflows';
import { fmt, seconds, serverLabel } from './format';
import { CONTENDER_NAME, type Results } from './results';
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
	for (const r of (bench.scheduled ?? []).filter((s) => s.major === major)) {
		const at = `n8n ${major}.x Sync Backlog N=${fmt(r.n)}, window ${r.windowMs / 1000} s, issue 32's server`;
		targets.push({
			target: 'requests ≤ 1.1 × (ceil(N / 100) + writes in batches of 50) + 5',
			at,
			met: r.ok && r.requests <= r.bound,
			value: `${fmt(r.requests)} ≤ ${fmt(r.bound)} (${fmt(r.listingGets)} GET /tasks, ${fmt(r.listingQueries)} listing queries, ${fmt(r.writeRequests)} writes)`,
		});
		targets.push({ target: 'zero 429s', at, met: r.rejected429 === 0, value: r.rejected429 });
		const { closed, created, updated } = r.expected;
		targets.push({
			target: 'the churn applied: closed, created, updated as made; nothing doubled',
			at,
			met:
				r.ok &&
				(r.actions.close ?? 0) === closed &&
				(r.actions.create ?? 0) === created &&
				(r.actions.update ?? 0) === updated &&
				r.closed === closed &&
				r.tasks === r.n + created &&
				r.duplicates === 0,
			value: `${fmt(r.actions.close ?? 0)} / ${fmt(r.actions.create ?? 0)} / ${fmt(r.actions.update ?? 0)} of ${fmt(closed)} / ${fmt(created)} / ${fmt(updated)}; ${fmt(r.tasks)} tasks, ${fmt(r.duplicates)} dup`,
		});
		targets.push({
			target: 'peak RSS of n8n execute (stated)',
			at,
			met: r.ok,
			value: r.peakRssMb === undefined ? 'n/a' : `${fmt(r.peakRssMb)} MB`,
		});
	}
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
