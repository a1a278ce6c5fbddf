// Figures of a run against one rate-limited token, read from the simulator's request log: the share of 429s, the
// time from the first to the last request against the one-token floor, and what each client (process, worker) got
// accepted in each of the server's windows. Shared by the adaptive-limiter test, the queue-mode e2e test and the bench.
import type { LoggedRequest } from './simulator';

export interface WindowCount {
	/** ms since the first request */
	start: number;
	/** when it started (epoch ms) */
	at: number;
	/** accepted (not 429) requests per owner in this window */
	accepted: Record<string, number>;
	rejected: Record<string, number>;
}

export interface RateFigures {
	requests: number;
	rejected429: number;
	/** rejected429 / requests */
	share429: number;
	/** requests not answered 429: the work the server accepted into its budget */
	accepted: number;
	/** first request to the last one's answer (ms) */
	durationMs: number;
	/** ceil(accepted / limit) windows: the least time the accepted requests need on one token */
	floorMs: number;
	/** 1.5 × floor + 5 s (scaled with the window: 5 s of a 60 s window) */
	targetMs: number;
	windows: WindowCount[];
	owners: string[];
}

/**
 * The simulator's windows, rebuilt from its log: a window starts with the first request after the previous one has
 * ended, and counts every request that passed authentication (429s included), as the simulator's own limiter does.
 */
export function serverWindows(
	requests: LoggedRequest[],
	windowMs: number,
	ownerOf: (request: LoggedRequest) => string,
): WindowCount[] {
	const windows: WindowCount[] = [];
	const first = requests[0]?.at ?? 0;
	let current: WindowCount | undefined;
	let start = -Infinity;
	for (const request of [...requests].sort((a, b) => a.at - b.at)) {
		if (request.status === 401) continue;
		if (!current || request.at - start >= windowMs) {
			start = request.at;
			current = { start: request.at - first, at: request.at, accepted: {}, rejected: {} };
			windows.push(current);
		}
		const owner = ownerOf(request);
		const into = request.status === 429 ? current.rejected : current.accepted;
		into[owner] = (into[owner] ?? 0) + 1;
	}
	return windows;
}

export function rateFigures(
	requests: LoggedRequest[],
	opts: {
		limit: number;
		windowMs: number;
		ownerOf?: (request: LoggedRequest) => string;
		lastAnswerAt?: number;
	},
): RateFigures {
	const ownerOf = opts.ownerOf ?? (() => 'all');
	const sorted = [...requests].sort((a, b) => a.at - b.at);
	const rejected429 = sorted.filter((request) => request.status === 429).length;
	const accepted = sorted.length - rejected429;
	const durationMs =
		sorted.length === 0
			? 0
			: Math.max(opts.lastAnswerAt ?? 0, sorted[sorted.length - 1].at) - sorted[0].at;
	const floorMs = Math.ceil(accepted / opts.limit) * opts.windowMs;
	const windows = serverWindows(sorted, opts.windowMs, ownerOf);
	return {
		requests: sorted.length,
		rejected429,
		share429: sorted.length === 0 ? 0 : rejected429 / sorted.length,
		accepted,
		durationMs,
		floorMs,
		targetMs: 1.5 * floorMs + 5000 * (opts.windowMs / 60_000),
		windows,
		owners: [...new Set(sorted.map(ownerOf))].sort(),
	};
}

/**
 * Jain's fairness index of what each owner got accepted in one window, among the owners still sending then
 * (1 = equal shares; 1/n = one owner got everything).
 */
export function jainIndex(counts: number[]): number {
	const sum = counts.reduce((a, b) => a + b, 0);
	const squares = counts.reduce((a, b) => a + b * b, 0);
	return squares === 0 ? 1 : (sum * sum) / (counts.length * squares);
}

/** One line per window: "  3  +4.1 s  c0 15 c1 14 c2 16 c3 15 | 429: c2 1". */
export function describeWindows(figures: RateFigures): string {
	return figures.windows
		.map((window, index) => {
			const accepted = figures.owners
				.map((owner) => `${owner} ${window.accepted[owner] ?? 0}`)
				.join(' ');
			const rejected = Object.entries(window.rejected)
				.map(([owner, count]) => `${owner} ${count}`)
				.join(' ');
			return `${String(index + 1).padStart(3)} ${`+${(window.start / 1000).toFixed(1)} s`.padStart(9)}  ${accepted}${rejected ? ` | 429: ${rejected}` : ''}`;
		})
		.join('\n');
}
