// A hand-written SVG chart (no dependencies): cumulative requests over time, one panel per ticket count, one line per
// contender, 429 answers marked, and the rate limit's ceiling (limit × windows begun) as a dashed staircase.

export interface Series {
	label: string;
	color: string;
	/** seconds since the node started, one per request that reached the service */
	times: number[];
	/** seconds of the requests answered 429 */
	rejected: number[];
	/** shown after the label, e.g. "extrapolated" */
	note?: string;
}

export interface Panel {
	title: string;
	series: Series[];
	/** requests per window and window length (s), for the ceiling */
	limit: number;
	windowSeconds: number;
}

const WIDTH = 900;
const PANEL_HEIGHT = 300;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 45 };

const escape = (text: string) =>
	text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceStep(span: number, ticks: number): number {
	const raw = span / ticks;
	const power = 10 ** Math.floor(Math.log10(raw));
	const unit = [1, 2, 5, 10].find((step) => step * power >= raw) ?? 10;
	return unit * power;
}

function panelSvg(panel: Panel, top: number): string {
	const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
	const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
	const maxTime = Math.max(1, ...panel.series.map((s) => s.times[s.times.length - 1] ?? 0)) * 1.02;
	const maxCount = Math.max(10, ...panel.series.map((s) => s.times.length));
	const maxExponent = Math.ceil(Math.log10(maxCount));
	const x = (seconds: number) => MARGIN.left + (seconds / maxTime) * plotWidth;
	// log scale from 1 request to 10^maxExponent
	const y = (count: number) =>
		top + MARGIN.top + plotHeight - (Math.log10(Math.max(1, count)) / maxExponent) * plotHeight;
	const parts: string[] = [];
	parts.push(
		`<text x="${MARGIN.left}" y="${top + 22}" font-size="15" font-weight="bold">${escape(panel.title)}</text>`,
	);
	// axes and grid
	for (let exponent = 0; exponent <= maxExponent; exponent++) {
		const yy = y(10 ** exponent).toFixed(1);
		parts.push(
			`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yy}" y2="${yy}" stroke="#e5e5e5"/>`,
		);
		parts.push(
			`<text x="${MARGIN.left - 8}" y="${yy}" font-size="11" text-anchor="end" dominant-baseline="middle">${(10 ** exponent).toLocaleString('en-US')}</text>`,
		);
	}
	const step = niceStep(maxTime, 8);
	for (let t = 0; t <= maxTime; t += step) {
		const xx = x(t).toFixed(1);
		parts.push(
			`<line x1="${xx}" x2="${xx}" y1="${top + MARGIN.top}" y2="${top + MARGIN.top + plotHeight}" stroke="#f0f0f0"/>`,
		);
		parts.push(
			`<text x="${xx}" y="${top + MARGIN.top + plotHeight + 16}" font-size="11" text-anchor="middle">${Number(t.toFixed(3))}</text>`,
		);
	}
	parts.push(
		`<text x="${MARGIN.left + plotWidth / 2}" y="${top + PANEL_HEIGHT - 6}" font-size="12" text-anchor="middle">seconds since the node started</text>`,
	);
	parts.push(
		`<text transform="translate(16 ${top + MARGIN.top + plotHeight / 2}) rotate(-90)" font-size="12" text-anchor="middle">requests sent (log scale)</text>`,
	);
	parts.push(
		`<rect x="${MARGIN.left}" y="${top + MARGIN.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
	);
	// ceiling: at most `limit` requests per window, windows starting at the first request
	const ceiling: string[] = [];
	const start = Math.min(...panel.series.map((s) => s.times[0] ?? 0));
	for (let window = 0; start + window * panel.windowSeconds <= maxTime; window++) {
		const t0 = start + window * panel.windowSeconds;
		const t1 = Math.min(maxTime, t0 + panel.windowSeconds);
		const count = (window + 1) * panel.limit;
		ceiling.push(
			`${x(t0).toFixed(1)},${y(count).toFixed(1)} ${x(t1).toFixed(1)},${y(count).toFixed(1)}`,
		);
		if (count > 10 ** maxExponent) break;
	}
	parts.push(
		`<polyline points="${ceiling.join(' ')}" fill="none" stroke="#888" stroke-dasharray="4 3"/>`,
	);
	// series
	panel.series.forEach((series, index) => {
		const points = series.times.map((t, i) => `${x(t).toFixed(1)},${y(i + 1).toFixed(1)}`);
		// thin the polyline for 10,000 points: keep every point whose pixel differs from the previous kept one
		const kept = points.filter(
			(point, i) => i === 0 || i === points.length - 1 || point !== points[i - 1],
		);
		parts.push(
			`<polyline points="${kept.join(' ')}" fill="none" stroke="${series.color}" stroke-width="2"/>`,
		);
		for (const t of series.rejected) {
			const i = series.times.indexOf(t);
			parts.push(
				`<circle cx="${x(t).toFixed(1)}" cy="${y(i + 1).toFixed(1)}" r="3" fill="#d62728"/>`,
			);
		}
		const ly = top + MARGIN.top + 16 + index * 18;
		const label = `${series.label}: ${series.times.length.toLocaleString('en-US')} requests, ${series.rejected.length} × 429${series.note ? ` (${series.note})` : ''}`;
		parts.push(
			`<line x1="${MARGIN.left + 12}" x2="${MARGIN.left + 36}" y1="${ly}" y2="${ly}" stroke="${series.color}" stroke-width="3"/>`,
		);
		parts.push(
			`<text x="${MARGIN.left + 42}" y="${ly}" font-size="12" dominant-baseline="middle">${escape(label)}</text>`,
		);
	});
	const ly = top + MARGIN.top + 16 + panel.series.length * 18;
	parts.push(
		`<line x1="${MARGIN.left + 12}" x2="${MARGIN.left + 36}" y1="${ly}" y2="${ly}" stroke="#888" stroke-dasharray="4 3"/>`,
	);
	parts.push(
		`<text x="${MARGIN.left + 42}" y="${ly}" font-size="12" dominant-baseline="middle">rate limit: ${panel.limit} requests per ${panel.windowSeconds} s window (red dots: 429)</text>`,
	);
	return parts.join('\n');
}

export function requestsOverTimeSvg(title: string, panels: Panel[]): string {
	const height = 40 + panels.length * PANEL_HEIGHT;
	const body = panels.map((panel, i) => panelSvg(panel, 30 + i * PANEL_HEIGHT)).join('\n');
	return [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
		`<rect width="100%" height="100%" fill="white"/>`,
		`<text x="${WIDTH / 2}" y="22" font-size="16" text-anchor="middle">${escape(title)}</text>`,
		body,
		'</svg>',
		'',
	].join('\n');
}
