// The requests-over-time chart of one n8n major: a panel per size synced (open server, then capped), and one for the
// real 60 s window, each with a line per contender.
import type { N8nMajor } from '../n8n/n8n';
import type { Panel, Series } from './chart';
import { requestsOverTimeSvg } from './chart';
import type { Options } from './options';
import { CONTENDER_NAME, type Contender, type Results, type SyncResult } from './results';
import { LIMIT } from './setup';

const CONTENDER_COLOR: Record<Contender, string> = {
	'auto-map': '#2ca02c',
	'define-below': '#1f77b4',
	'http-request': '#ff7f0e',
};

export function chart(bench: Results, options: Options, major: N8nMajor): string {
	const series = (r: SyncResult): Series => ({
		label: CONTENDER_NAME[r.contender],
		color: CONTENDER_COLOR[r.contender],
		times: r.requestTimes,
		rejected: r.rejectedTimes,
		note: r.extrapolatedFrom
			? `extrapolated from N=${r.extrapolatedFrom.toLocaleString('en-US')}`
			: undefined,
	});
	const panel = (title: string, results: SyncResult[], windowMs: number): Panel => ({
		title,
		limit: LIMIT,
		windowSeconds: windowMs / 1000,
		series: results.map(series),
	});
	const mine = bench.sync.filter((r) => r.major === major);
	const panels: Panel[] = [];
	for (const n of options.sizes) {
		const results = mine.filter(
			(r) => r.n === n && r.windowMs === options.windowMs && r.server === 'open',
		);
		if (results.length > 0)
			panels.push(
				panel(
					`Sync ${n.toLocaleString('en-US')} tickets, n8n ${major}.x`,
					results,
					options.windowMs,
				),
			);
	}
	for (const n of options.cappedSizes) {
		const results = mine.filter(
			(r) => r.n === n && r.windowMs === options.windowMs && r.server === 'capped50',
		);
		if (results.length > 0)
			panels.push(
				panel(
					`Sync ${n.toLocaleString('en-US')} tickets, n8n ${major}.x, batch limit 50 undocumented`,
					results,
					options.windowMs,
				),
			);
	}
	const minute = mine.filter((r) => r.windowMs === 60_000);
	if (minute.length > 0)
		panels.push(panel(`Sync 10,000 tickets, n8n ${major}.x, the real 60 s window`, minute, 60_000));
	return requestsOverTimeSvg(
		`Requests over time against a ${LIMIT}-requests-per-window rate limit`,
		panels,
	);
}
