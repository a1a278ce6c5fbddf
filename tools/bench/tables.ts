// The bench's tables, per n8n major (sync, Return All, overhead, CPU profile), and the targets table under them.
import type { N8nMajor } from '../n8n/n8n';
import type { Json } from '../n8n/workflows';
import { fmt, seconds, serverLabel, table } from './format';
import type { Options } from './options';
import type { ProfileSummary } from './profile';
import { CONTENDER_NAME, type Results } from './results';
import { INTERVAL_MS, ISSUE_PAGE_SIZE, RUNS_PER_DAY } from './run-scheduled';
import { BATCH_SIZE, LIMIT, PAGE_SIZE } from './setup';
import { actionsText, majorTargets, scheduledOf, scheduledRuns } from './targets';

export function reportTables(bench: Results, options: Options): { text: string; targets: Json[] } {
	const out: string[] = [];
	const targets: Json[] = [];
	for (const major of options.majors) {
		out.push(
			...syncTable(bench, major),
			...returnAllTable(bench, major),
			...scheduledTable(bench, major),
			...overheadTable(bench, major),
			...profileSection(bench, major),
		);
		targets.push(...majorTargets(bench, major));
	}
	out.push('\n### Targets\n');
	out.push(
		table(
			['Target', 'Where', 'Met', 'Value'],
			targets.map((t) => [t.target, t.at, t.met ? 'yes' : 'NO', String(t.value)]),
		),
	);
	return { text: out.join('\n'), targets };
}

function syncTable(bench: Results, major: N8nMajor): string[] {
	const sync = bench.sync.filter((r) => r.major === major);
	if (sync.length === 0) return [];
	const rows = sync.map((r) => {
		const http = sync.find(
			(p) =>
				p.n === r.n &&
				p.windowMs === r.windowMs &&
				p.contender === 'http-request' &&
				p.server === r.server,
		);
		const vsHttp = r.contender !== 'http-request' && http ? fmt(r.nodeMs / http.nodeMs, 3) : '';
		return [
			`${CONTENDER_NAME[r.contender]}${r.extrapolatedFrom ? ` (extrapolated from N=${fmt(r.extrapolatedFrom)})` : ''}${r.ok ? '' : ' FAILED'}`,
			serverLabel(r.server),
			fmt(r.n),
			`${r.windowMs / 1000} s`,
			`${fmt(r.requests)} (${fmt(r.writeRequests)})`,
			fmt(r.requestsNeeded),
			fmt(r.rejected429),
			`${fmt(r.tasks)} / ${fmt(r.duplicates)} / ${fmt(r.missing)} / ${fmt(r.wrongValues)}`,
			seconds(r.nodeMs),
			seconds(r.prepMs),
			seconds(r.requestPhaseMs),
			seconds(r.floorMs),
			fmt(r.nodeMs / r.floorMs, 2),
			vsHttp,
			r.cpuMs === undefined ? 'n/a' : seconds(r.cpuMs),
			r.peakRssMb === undefined ? 'n/a' : fmt(r.peakRssMb),
		];
	});
	return [
		`\n### Sync N tickets, n8n ${major}.x (rate limit ${LIMIT} requests per window; Create or Update, Batch Size ${BATCH_SIZE})\n`,
		table(
			[
				'Contender',
				'Server',
				'N',
				'Window',
				'Requests (writes)',
				'Needed',
				'429s',
				'Tasks / dup / missing / wrong',
				'Wall (s)',
				'Prep (s)',
				'Requests phase (s)',
				'Floor (s)',
				'Wall / floor',
				'Wall / HTTP',
				'CPU (s)',
				'Peak RSS (MB)',
			],
			rows,
		),
	];
}

function returnAllTable(bench: Results, major: N8nMajor): string[] {
	const rows = bench.returnAll.filter((r) => r.major === major);
	if (rows.length === 0) return [];
	return [
		`\n### Return All, n8n ${major}.x (Get Many of ${fmt(rows[0].tasks)} seeded tasks; open server: pages of ${PAGE_SIZE}; issue 32's server: GET /tasks pages of ${ISSUE_PAGE_SIZE}, /tasks/query pages of ${PAGE_SIZE})\n`,
		table(
			[
				'Server',
				'Items',
				'Requests (GET /tasks / queries)',
				'429s',
				'Wall (s)',
				'Floor (s)',
				'Peak RSS of n8n execute (MB)',
				'Same with Limit 1 (MB)',
				'CPU (s)',
			],
			rows.map((returnAll) => [
				`${returnAll.server === 'issue' ? "issue 32's server" : 'open'}${returnAll.ok ? '' : ' FAILED'}`,
				fmt(returnAll.items),
				`${fmt(returnAll.requests)} (${fmt(returnAll.listingGets)} / ${fmt(returnAll.queries)})`,
				fmt(returnAll.rejected429),
				seconds(returnAll.nodeMs),
				seconds(returnAll.floorMs),
				fmt(returnAll.peakRssMb),
				fmt(returnAll.baselinePeakRssMb),
				returnAll.cpuMs === undefined ? 'n/a' : seconds(returnAll.cpuMs),
			]),
		),
	];
}

function scheduledTable(bench: Results, major: N8nMajor): string[] {
	const results = scheduledOf(bench, major);
	if (results.length === 0) return [];
	const rows = results.flatMap((r) =>
		r.runs.map((run) => [
			`${fmt(r.n)}: ${run.label}${run.ok ? '' : ' FAILED'}`,
			`${run.windowMs / 1000} s`,
			run.read,
			fmt(run.requests),
			`${fmt(run.listingGets)} / ${fmt(run.listingQueries)} / ${fmt(run.changesQueries)} / ${fmt(run.countQueries)} / ${fmt(run.byUidReads)} / ${fmt(run.otherGets)}`,
			fmt(run.writeRequests),
			fmt(run.rejected429),
			`${actionsText(run.actions)} (${fmt(run.expected.closed)} / ${fmt(run.expected.created)} / ${fmt(run.expected.updated)})`,
			run.bound === undefined ? '' : fmt(run.bound),
			fmt(run.outputItems),
			fmt(run.outputBytes / 1000),
			seconds(run.nodeMs),
			seconds(run.processWallMs),
			run.cpuMs === undefined ? 'n/a' : seconds(run.cpuMs),
			fmt(run.peakRssMb),
		]),
	);
	const perDay = results.flatMap((r) => {
		const { measured, everyRow } = scheduledRuns(r);
		if (!measured) return [];
		return [
			[
				fmt(r.n),
				fmt(measured.requests),
				fmt(measured.requests * RUNS_PER_DAY),
				fmt(measured.outputBytes / 1000),
				everyRow ? fmt(everyRow.outputBytes / 1000) : 'n/a',
				everyRow ? `${fmt((measured.outputBytes / everyRow.outputBytes) * 100, 2)} %` : 'n/a',
				fmt((measured.outputBytes * RUNS_PER_DAY) / 1e6, 1),
				everyRow ? fmt((everyRow.outputBytes * RUNS_PER_DAY) / 1e6, 1) : 'n/a',
				seconds(measured.processWallMs),
				fmt(measured.peakRssMb),
			],
		];
	});
	return [
		`\n### Scheduled sync, n8n ${major}.x (Sync Backlog v3 run again by n8n execute; the simulator's lenient profile, which filters a query by time, pages of ${PAGE_SIZE}; rate limit ${LIMIT} requests per window)\n`,
		table(
			[
				'N: run',
				'Window',
				'Read',
				'Requests',
				'GET /tasks / listing / changes / count queries / by uid / other GETs',
				'Writes',
				'429s',
				'Closed / created / updated (expected)',
				'Bound',
				'Output items',
				'Output (kB)',
				'Node (s)',
				'Wall (s)',
				'CPU (s)',
				'Peak RSS (MB)',
			],
			rows,
		),
		`\nPer day at a ${INTERVAL_MS / 60_000}-minute interval: ${RUNS_PER_DAY} runs like the measured one (Output Every Row: the same input and store through a copy with that output)\n`,
		table(
			[
				'N',
				'Requests a run',
				'Requests a day',
				'Output a run (kB)',
				'Every Row a run (kB)',
				'Share',
				'Output a day (MB)',
				'Every Row a day (MB)',
				'Wall a run (s)',
				'Peak RSS (MB)',
			],
			perDay,
		),
	];
}

function overheadTable(bench: Results, major: N8nMajor): string[] {
	const overhead = bench.overhead.find((r) => r.major === major);
	if (!overhead) return [];
	return [
		`\n### Overhead, n8n ${major}.x (rate limit off, ${fmt(overhead.n)} upserts by external ID, batches of ${BATCH_SIZE}; CPU of the n8n process minus the same workflow with our node disabled, ${overhead.baselineCpuMs === undefined ? 'n/a' : seconds(overhead.baselineCpuMs)} s)\n`,
		table(
			[
				'Node',
				'Node time (s)',
				'Items per second (node time)',
				'CPU s per 1,000 items',
				'Items per CPU second',
				'Requests',
				'Peak RSS (MB)',
			],
			overhead.rows.map((row) => [
				`${row.contender === 'set-node' ? "n8n's Set node, the same 2 expressions" : CONTENDER_NAME[row.contender]}${row.ok ? '' : ' FAILED'}`,
				seconds(row.nodeMs),
				fmt(row.nodeMs > 0 ? overhead.n / (row.nodeMs / 1000) : undefined),
				fmt(row.cpuSecondsPer1000, 3),
				fmt(row.cpuSecondsPer1000 ? 1000 / row.cpuSecondsPer1000 : undefined),
				fmt(row.requests),
				fmt(row.peakRssMb),
			]),
		),
	];
}

function profileSection(bench: Results, major: N8nMajor): string[] {
	const profile = bench.profiles.find((p) => p.major === major);
	if (!profile) return [];
	const out = [
		`\n### CPU profile of one ${fmt(profile.n)}-item Map Automatically run, n8n ${major}.x (rate limit off; node --cpu-prof on the n8n execute process)\n`,
	];
	if (profile.node && profile.process) {
		const node = profile.node;
		out.push(
			`Node run ${seconds(profile.nodeMs)} s; ${fmt(node.totalMs)} ms sampled in it (${fmt(node.samples)} samples), of which ${fmt(node.ourStackMs)} ms (${fmt((node.ourStackMs / node.totalMs) * 100, 1)} %) with a frame of our package on the stack = ${fmt(node.ourStackMs / (profile.n / 1000), 2)} ms per 1,000 items. Self time by area: ${node.areas
				.slice(0, 8)
				.map((a) => `${a.area} ${fmt(a.share * 100, 1)} %`)
				.join(', ')}. Profile: ${profile.file}\n`,
		);
		out.push(profileTable(node));
		out.push(
			`\nWhole process (start-up included, ${fmt(profile.process.totalMs)} ms): ${profile.process.areas
				.slice(0, 6)
				.map((a) => `${a.area} ${fmt(a.share * 100, 1)} %`)
				.join(', ')}`,
		);
	} else out.push(`No profile: ${profile.error ?? 'unknown reason'}`);
	return out;
}

function profileTable(summary: ProfileSummary): string {
	return table(
		['Function (self time)', 'Where', 'Self (ms)', 'Share'],
		summary.top.map((entry) => [
			entry.name,
			entry.where || entry.area,
			fmt(entry.selfMs),
			`${fmt(entry.share * 100, 1)} %`,
		]),
	);
}
