import type { IDataObject } from 'n8n-workflow';

export type PollEvent = 'newTask' | 'updatedTask' | 'closedTask';

/** What the trigger remembers between polls, in the workflow's static data. */
export interface PollState {
	/** The event the markers in `seen` belong to; choosing another event starts over. */
	event: PollEvent;
	/** Newest updated_at seen in a listing: the next poll asks for changes from here (minus the lookback). */
	position: string;
	/**
	 * uid -> marker (created_at, updated_at or done_at, per event) of the last emission, for every emission whose
	 * marker is still inside the window. It is what keeps a (uid, time) from being emitted twice: across polls that
	 * overlap, for tasks sharing the position's timestamp, and when the server ignores the time filter.
	 */
	seen: Record<string, string>;
	/** Set only after `seen` overflowed: markers at or before it are never emitted again. */
	floor?: string;
	/**
	 * The last poll stopped before the end of the listing (n8n 2.x poll budget): the next one continues from the
	 * position itself, without the lookback, or it would read the same first pages again and never get further.
	 */
	resume?: boolean;
}

/** Cap on `seen`; static data is stored with the workflow, so it must stay small. */
export const MAX_SEEN = 2000;

/** A server stamp further ahead of our clock than this is not allowed to move the position (it would hide changes). */
export const MAX_CLOCK_AHEAD_MS = 10 * 60 * 1000;

/** [milliseconds since the epoch, digits below the millisecond as nanoseconds]: the API may send microseconds. */
export type Instant = [number, number];

export function instant(value: unknown): Instant | undefined {
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	const text = value.trim();
	const match = /^(.*T\d{2}:\d{2}:\d{2})[.,](\d+)(.*)$/.exec(text);
	if (!match) {
		const ms = Date.parse(text);
		return Number.isNaN(ms) ? undefined : [ms, 0];
	}
	const [, head, fraction, zone] = match;
	const ms = Date.parse(`${head}.${fraction.slice(0, 3).padEnd(3, '0')}${zone}`);
	if (Number.isNaN(ms)) return undefined;
	return [ms, Number(fraction.slice(3, 9).padEnd(6, '0'))];
}

export function compareInstants(a: Instant, b: Instant): number {
	return a[0] - b[0] || a[1] - b[1];
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The time a task's event happened, or undefined when the task is not in that event's state. New: the service's
 * own creation time (created_at can be set by the caller, internal_created_at cannot). Closed: when the task
 * became DONE, so that later edits of a closed task do not count as closing it again.
 */
export function marker(event: PollEvent, task: IDataObject): string | undefined {
	if (event === 'newTask') return text(task.internal_created_at) ?? text(task.created_at);
	if (event === 'closedTask') return task.status === 'DONE' ? (text(task.done_at) ?? text(task.updated_at)) : undefined;
	return text(task.updated_at);
}

/** Start of the window the next poll looks at: the position minus the lookback. */
export function windowStart(position: string, lookbackMs: number): Instant | undefined {
	const at = instant(position);
	return at ? [at[0] - lookbackMs, at[1]] : undefined;
}

/** One entry per uid, its newest version: a task changed while we paged may come twice. */
export function latestByUid(tasks: IDataObject[]): IDataObject[] {
	const byUid = new Map<string, { task: IDataObject; at: Instant }>();
	for (const task of tasks) {
		const uid = text(task.uid);
		const at = instant(task.updated_at);
		if (!uid || !at) continue;
		const known = byUid.get(uid);
		if (!known || compareInstants(at, known.at) > 0) byUid.set(uid, { task, at });
	}
	return [...byUid.values()].map(({ task }) => task);
}

/** The newest updated_at among the tasks, ignoring stamps implausibly far in our future. */
export function newestUpdate(tasks: IDataObject[], current: string | undefined, nowMs: number): string | undefined {
	let best = current;
	let bestAt = instant(current);
	for (const task of tasks) {
		const at = instant(task.updated_at);
		if (!at || at[0] > nowMs + MAX_CLOCK_AHEAD_MS) continue;
		if (!bestAt || compareInstants(at, bestAt) > 0) {
			best = task.updated_at as string;
			bestAt = at;
		}
	}
	return best;
}

/** Drops entries the window has passed; past MAX_SEEN, the oldest go and the floor rises above them. */
export function prune(state: PollState, lookbackMs: number): PollState {
	const start = windowStart(state.position, lookbackMs);
	const kept = Object.entries(state.seen)
		.map(([uid, value]) => ({ uid, value, at: instant(value) }))
		.filter((entry): entry is { uid: string; value: string; at: Instant } => !!entry.at)
		.filter((entry) => !start || compareInstants(entry.at, start) >= 0)
		.sort((a, b) => compareInstants(a.at, b.at));
	let floor = state.floor;
	if (floor && start && compareInstants(instant(floor) ?? start, start) < 0) floor = undefined;
	if (kept.length > MAX_SEEN) {
		const dropped = kept.splice(0, kept.length - MAX_SEEN);
		floor = dropped[dropped.length - 1].value;
	}
	const next: PollState = { event: state.event, position: state.position, seen: {} };
	for (const entry of kept) next.seen[entry.uid] = entry.value;
	if (floor) next.floor = floor;
	if (state.resume) next.resume = true;
	return next;
}

/**
 * First run: remember where the service stands without emitting anything. Every task in the window counts as
 * seen, so the next poll's overlap does not report changes from before the trigger started.
 */
export function baseline(
	event: PollEvent,
	fetched: IDataObject[],
	fallbackPosition: string,
	lookbackMs: number,
	nowMs: number,
): PollState {
	const position = newestUpdate(fetched, undefined, nowMs) ?? fallbackPosition;
	const state: PollState = { event, position, seen: {} };
	for (const task of latestByUid(fetched)) {
		const value = marker(event, task);
		if (value && instant(value)) state.seen[task.uid as string] = value;
	}
	return prune(state, lookbackMs);
}

/**
 * Picks the tasks to emit from a listing and moves the state on. Pure, so the rules can be tested on their own:
 * a task is emitted when it passes the filters, its marker is inside the window (and above the floor), and the
 * marker is newer than the one last emitted for its uid.
 */
export function selectChanges(
	state: PollState,
	fetched: IDataObject[],
	matches: (task: IDataObject) => boolean,
	lookbackMs: number,
	nowMs: number,
	complete = true,
): { emit: IDataObject[]; next: PollState } {
	const start = windowStart(state.position, lookbackMs);
	const floor = instant(state.floor);
	const seen = { ...state.seen };
	const picked: Array<{ task: IDataObject; at: Instant; uid: string }> = [];
	for (const task of latestByUid(fetched)) {
		const uid = task.uid as string;
		const value = marker(state.event, task);
		const at = instant(value);
		if (!value || !at || !matches(task)) continue;
		if (start && compareInstants(at, start) < 0) continue;
		if (floor && compareInstants(at, floor) <= 0) continue;
		const previous = instant(seen[uid]);
		if (previous && compareInstants(previous, at) >= 0) continue;
		seen[uid] = value;
		picked.push({ task, at, uid });
	}
	picked.sort((a, b) => compareInstants(a.at, b.at) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
	const position = newestUpdate(fetched, state.position, nowMs) ?? state.position;
	const next = prune({ event: state.event, position, seen, floor: state.floor, resume: !complete }, lookbackMs);
	return { emit: picked.map(({ task }) => task), next };
}

export function isPollState(value: unknown, event: PollEvent): value is PollState {
	if (!value || typeof value !== 'object') return false;
	const state = value as Partial<PollState>;
	return (
		state.event === event &&
		instant(state.position) !== undefined &&
		!!state.seen &&
		typeof state.seen === 'object' &&
		!Array.isArray(state.seen)
	);
}
