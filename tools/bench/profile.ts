// Reads a V8 CPU profile (.cpuprofile, written by node --cpu-prof) and summarises it: self time by function and by
// area (our package, n8n-core, n8n-workflow, other packages, Node internals, GC), and the time with a frame of our
// package on the stack. Optionally only the samples inside a time window (the node's run, mapped onto the profile's
// monotonic clock with the start instant the rusage hook records).

interface CallFrame {
	functionName: string;
	url: string;
	lineNumber: number;
	columnNumber: number;
}

interface ProfileNode {
	id: number;
	callFrame: CallFrame;
	children?: number[];
}

export interface CpuProfile {
	nodes: ProfileNode[];
	startTime: number;
	endTime: number;
	samples: number[];
	timeDeltas: number[];
}

export interface ProfileEntry {
	name: string;
	where: string;
	area: string;
	selfMs: number;
	share: number;
}

export interface ProfileSummary {
	/** sampled time considered (the window, or the whole profile) */
	totalMs: number;
	samples: number;
	top: ProfileEntry[];
	areas: Array<{ area: string; selfMs: number; share: number }>;
	/** samples with a frame of our package anywhere on the stack (our code and what it calls synchronously) */
	ourStackMs: number;
}

export const OUR_PACKAGE = 'n8n-nodes-task-backlog';
/** Our package as n8n loads it (<user folder>/.n8n/nodes/node_modules/…); the n8n install's cache folder has the name too. */
const OURS = `node_modules/${OUR_PACKAGE}/`;

function areaOf(frame: CallFrame): string {
	const { url, functionName } = frame;
	if (!url) {
		if (functionName === '(garbage collector)') return 'garbage collector';
		if (functionName === '(idle)' || functionName === '(program)' || functionName === '(root)')
			return functionName.slice(1, -1);
		return 'native';
	}
	if (url.startsWith('node:')) return 'Node internals';
	if (url.includes(OURS)) return OUR_PACKAGE;
	const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(url);
	return match ? match[1] : 'other';
}

function shortWhere(frame: CallFrame): string {
	const { url, lineNumber } = frame;
	if (!url) return '';
	const cut = url.lastIndexOf('node_modules/');
	const file = cut >= 0 ? url.slice(cut + 'node_modules/'.length) : url.replace(/^file:\/\//, '');
	return `${file}:${lineNumber + 1}`;
}

/** Self time per function (and per area) over the samples inside [startUs, endUs) of the profile's clock. */
export function summarizeProfile(
	profile: CpuProfile,
	window?: { startUs: number; endUs: number },
	topN = 15,
): ProfileSummary {
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map<number, number>();
	for (const node of profile.nodes)
		for (const child of node.children ?? []) parent.set(child, node.id);
	const onOurStack = new Map<number, boolean>();
	const ours = (id: number): boolean => {
		const known = onOurStack.get(id);
		if (known !== undefined) return known;
		const node = byId.get(id)!;
		const up = parent.get(id);
		const value = node.callFrame.url.includes(OURS) || (up !== undefined && ours(up));
		onOurStack.set(id, value);
		return value;
	};

	const self = new Map<number, number>();
	let time = profile.startTime;
	let totalUs = 0;
	let samples = 0;
	let ourStackUs = 0;
	for (let i = 0; i < profile.samples.length; i++) {
		time += profile.timeDeltas[i] ?? 0;
		// a sample stands for the interval up to the next one
		const duration = Math.max(0, profile.timeDeltas[i + 1] ?? 0);
		if (window && (time < window.startUs || time >= window.endUs)) continue;
		const id = profile.samples[i];
		self.set(id, (self.get(id) ?? 0) + duration);
		totalUs += duration;
		samples++;
		if (ours(id)) ourStackUs += duration;
	}

	const entries = new Map<string, ProfileEntry>();
	const areas = new Map<string, number>();
	for (const [id, us] of self) {
		const { callFrame } = byId.get(id)!;
		const area = areaOf(callFrame);
		areas.set(area, (areas.get(area) ?? 0) + us);
		const name = callFrame.functionName || '(anonymous)';
		const where = shortWhere(callFrame);
		const key = `${name} ${where}`;
		const entry = entries.get(key) ?? { name, where, area, selfMs: 0, share: 0 };
		entry.selfMs += us / 1000;
		entries.set(key, entry);
	}
	const share = (ms: number) => (totalUs > 0 ? ms / (totalUs / 1000) : 0);
	const top = [...entries.values()]
		.map((entry) => ({ ...entry, share: share(entry.selfMs) }))
		.sort((a, b) => b.selfMs - a.selfMs)
		.slice(0, topN);
	return {
		totalMs: totalUs / 1000,
		samples,
		top,
		areas: [...areas.entries()]
			.map(([area, us]) => ({ area, selfMs: us / 1000, share: share(us / 1000) }))
			.sort((a, b) => b.selfMs - a.selfMs),
		ourStackMs: ourStackUs / 1000,
	};
}
