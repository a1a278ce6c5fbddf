import type { IDataObject } from 'n8n-workflow';

import type { Instant, Stamps } from '../shared/tasks/stamps';
import { changedAt, compareInstants, instant, stampsShown } from '../shared/tasks/stamps';

// The service's stamps, read as Sync Backlog's read of what changed reads them (shared/tasks/stamps.ts).
export type { Instant, Stamps } from '../shared/tasks/stamps';
export {
	changedAt,
	compareInstants,
	fillsInternalStamp,
	instant,
	stampsShown,
} from '../shared/tasks/stamps';

const text = (value: unknown): string | undefined =>
	typeof value === 'string' && value !== '' ? value : undefined;

export type PollEvent = 'newTask' | 'updatedTask' | 'closedTask';

/** What the trigger remembers between polls, in the workflow's static data. */
export interface PollState {
	/** The event the markers in `seen` belong to; choosing another event starts over. */
	event: PollEvent;
	/**
	 * Newest change time (changedAt) seen in a listing, never later than the start of the poll that saw it: the next
	 * poll asks for changes from here (minus the lookback).
	 */
	position: string;
	/**
	 * uid -> window stamp (windowStamp: created_at for New Task, changedAt otherwise) of the last emission, for every
	 * emission whose stamp is still inside the window. It is what keeps a (uid, time) from being emitted twice: across
	 * polls that overlap, for tasks sharing the position's timestamp, and when the server ignores the time filter.
	 */
	seen: Record<string, string>;
	/**
	 * Closed Task only: uid -> done_at of the closing last emitted (or found at the baseline), kept after the window
	 * has passed (up to MAX_SEEN), so that a later edit of a closed task is not emitted as closing it again. Absent in
	 * a state saved before it existed: `seen` then held the done_at values.
	 */
	closed?: Record<string, string>;
	/** Set only after `seen` overflowed: markers at or before it are never emitted again. */
	floor?: string;
	/**
	 * What the service dates writes with, decided between windows (every slice of a window asks the same). `internal`:
	 * a task read carried internal_updated_at, so a window asks for tasks whose updated_at or internal_updated_at is in
	 * it (a caller may write an old updated_at). `updated`: no task read had it yet: a window asks on updated_at alone,
	 * until one does. `refused`: the query refused a condition on internal_updated_at: updated_at alone, for good.
	 * Absent: nothing read could tell yet (as `updated`).
	 */
	stamps?: Stamps;
	/**
	 * A window being read over several polls (one poll stopped at n8n's poll budget before the end of the listing).
	 * The position stays where it was until the whole window has been read.
	 */
	pass?: PollPass;
}

/**
 * One window, read in slices. The listing is in uid order, so a slice read whole is every task of the window up to
 * its last uid: the next poll asks for the same window after that uid, and no task is read twice or skipped.
 */
export interface PollPass {
	/** Milliseconds since the epoch: the listing's time condition (changedAt >=), the same for every slice. */
	afterMs?: number;
	/** The greatest uid read so far; absent until the first slice is read. */
	uid?: string;
	/**
	 * When the pass's first poll started. Marks after it are left to the next window, which starts at or before it
	 * (the position never moves past it): a task read early in the pass and changed later is read again there.
	 */
	startedMs: number;
	/** Newest change time read so far: the position once the pass ends. */
	newest?: string;
	/** Markers dropped from `seen` during the pass (over MAX_SEEN): the floor rises to the newest when it ends. */
	floor?: string;
	/** The first poll's baseline: nothing is emitted. */
	baseline?: boolean;
	/**
	 * The state was saved by version 0.1.0, whose `seen` held each Updated Task emission's updated_at, not its changedAt
	 * (see savedByVersion010): a task whose updated_at is not newer than that is the change already emitted.
	 */
	seenByUpdatedAt?: boolean;
}

/** Cap on `seen`; static data is stored with the workflow, so it must stay small. */
export const MAX_SEEN = 2000;

/** A server stamp further ahead of our clock than this is not allowed to move the position (it would hide changes). */
export const MAX_CLOCK_AHEAD_MS = 10 * 60 * 1000;

/**
 * The time a task's event happened, or undefined when the task is not in that event's state. New: the service's
 * own creation time (created_at can be set by the caller, internal_created_at cannot). Closed: when the task
 * became DONE, so that later edits of a closed task do not count as closing it again.
 */
export function marker(event: PollEvent, task: IDataObject): string | undefined {
	if (event === 'newTask') return text(task.internal_created_at) ?? text(task.created_at);
	if (event === 'closedTask')
		return task.status === 'DONE' ? (text(task.done_at) ?? changedAt(task)) : undefined;
	return changedAt(task);
}

/**
 * The time that places a task in a poll's window. Closed Task: the task's change time, since the write that closed it
 * may carry a done_at from the past (a client may set it, e.g. to the time a ticket was closed elsewhere), which a
 * window on done_at would never see; which closing it is, is told by done_at (the `closed` memory). Otherwise the
 * marker.
 */
export function windowStamp(event: PollEvent, task: IDataObject): string | undefined {
	const value = marker(event, task);
	if (event !== 'closedTask' || value === undefined) return value;
	return changedAt(task) ?? value;
}

/** The position never moves past the start of the poll: a stamp from a clock ahead would skip changes not yet read. */
function notAfter(position: string, nowMs: number): string {
	const at = instant(position);
	return at && compareInstants(at, [nowMs, 0]) > 0 ? new Date(nowMs).toISOString() : position;
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
		const at = instant(changedAt(task));
		if (!uid || !at) continue;
		const known = byUid.get(uid);
		if (!known || compareInstants(at, known.at) > 0) byUid.set(uid, { task, at });
	}
	return [...byUid.values()].map(({ task }) => task);
}

/** The newest change time among the tasks, ignoring stamps implausibly far in our future. */
export function newestUpdate(
	tasks: IDataObject[],
	current: string | undefined,
	nowMs: number,
): string | undefined {
	let best = current;
	let bestAt = instant(current);
	for (const task of tasks) {
		const stamp = changedAt(task);
		const at = instant(stamp);
		if (!at || at[0] > nowMs + MAX_CLOCK_AHEAD_MS) continue;
		if (!bestAt || compareInstants(at, bestAt) > 0) {
			best = stamp;
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
	const pass = state.pass && { ...state.pass };
	let excess = kept.length - MAX_SEEN;
	if (excess > 0 && pass) {
		// Mid-pass: only markers of tasks this pass has read may go (a task after its last uid is still to be read,
		// and its marker is what keeps it from being emitted twice); the floor rises to them when the pass ends.
		const read = pass.uid;
		const stays = kept.filter((entry) => {
			if (excess === 0 || read === undefined || entry.uid > read) return true;
			excess--;
			pass.floor = later(pass.floor, entry.value);
			return false;
		});
		kept.splice(0, kept.length, ...stays);
	} else if (excess > 0) {
		const dropped = kept.splice(0, excess);
		floor = later(floor, dropped[dropped.length - 1].value);
	}
	const next: PollState = { event: state.event, position: state.position, seen: {} };
	for (const entry of kept) next.seen[entry.uid] = entry.value;
	if (floor) next.floor = floor;
	if (state.closed) next.closed = pruneClosed(state.closed);
	if (state.stamps) next.stamps = state.stamps;
	if (pass) next.pass = pass;
	return next;
}

/** The later of two stamps (either may be absent). */
function later(a: string | undefined, b: string | undefined): string | undefined {
	const [x, y] = [instant(a), instant(b)];
	if (!x) return y ? b : a;
	if (!y) return a;
	return compareInstants(y, x) > 0 ? b : a;
}

/** The closings remembered: the newest MAX_SEEN by done_at. */
function pruneClosed(closed: Record<string, string>): Record<string, string> {
	const entries = Object.entries(closed);
	if (entries.length <= MAX_SEEN) return { ...closed };
	const newest = entries
		.map(([uid, value]) => ({ uid, value, at: instant(value) ?? ([0, 0] as Instant) }))
		.sort((a, b) => compareInstants(b.at, a.at))
		.slice(0, MAX_SEEN);
	return Object.fromEntries(newest.map(({ uid, value }) => [uid, value]));
}

/**
 * First run: remember where the service stands without emitting anything. Every task in the window dated up to the
 * poll's start (`nowMs`) counts as seen, so the next poll's overlap does not report changes from before the trigger
 * started. A task dated after it was changed while this poll read, after the trigger started: it is left to the next
 * window, which starts before it (the position is never later than `nowMs`), as in a baseline read in slices.
 */
export function baseline(
	event: PollEvent,
	fetched: IDataObject[],
	fallbackPosition: string,
	lookbackMs: number,
	nowMs: number,
): PollState {
	const position = notAfter(newestUpdate(fetched, undefined, nowMs) ?? fallbackPosition, nowMs);
	const state: PollState = { event, position, seen: {} };
	if (event === 'closedTask') state.closed = {};
	const startedAt: Instant = [nowMs, 0];
	for (const task of latestByUid(fetched)) {
		const value = windowStamp(event, task);
		const at = instant(value);
		if (!value || !at || compareInstants(at, startedAt) > 0) continue;
		state.seen[task.uid as string] = value;
		if (state.closed) state.closed[task.uid as string] = marker(event, task) as string;
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
	seenByUpdatedAt = false,
): { emit: IDataObject[]; next: PollState } {
	const { emit, seen, closed } = pick(state, fetched, matches, lookbackMs, seenByUpdatedAt);
	const position = notAfter(newestUpdate(fetched, state.position, nowMs) ?? state.position, nowMs);
	const next = prune(
		{ event: state.event, position, seen, floor: state.floor, closed },
		lookbackMs,
	);
	return { emit, next };
}

function pick(
	state: PollState,
	fetched: IDataObject[],
	matches: (task: IDataObject) => boolean,
	lookbackMs: number,
	seenByUpdatedAt: boolean,
): { emit: IDataObject[]; seen: Record<string, string>; closed?: Record<string, string> } {
	const start = windowStart(state.position, lookbackMs);
	const floor = instant(state.floor);
	const seen = { ...state.seen };
	// Closed Task: the closings already emitted (a state saved before `closed` existed kept them, done_at, in `seen`).
	const closed = state.event === 'closedTask' ? { ...(state.closed ?? state.seen) } : undefined;
	const picked: Array<{ task: IDataObject; at: Instant; uid: string }> = [];
	for (const task of latestByUid(fetched)) {
		const uid = task.uid as string;
		const value = windowStamp(state.event, task);
		const at = instant(value);
		if (!value || !at || !matches(task)) continue;
		if (start && compareInstants(at, start) < 0) continue;
		if (floor && compareInstants(at, floor) <= 0) continue;
		const previous = instant(seen[uid]);
		if (previous && compareInstants(previous, at) >= 0) continue;
		seen[uid] = value;
		if (seenByUpdatedAt && previous) {
			// Emitted by 0.1.0, which dated it by updated_at: the same change, now dated by changedAt.
			const updated = instant(task.updated_at);
			if (updated && compareInstants(updated, previous) <= 0) continue;
		}
		if (closed) {
			// An edit of a task whose closing was already emitted: the same done_at.
			const done = marker(state.event, task) as string;
			if (closed[uid] === done) continue;
			closed[uid] = done;
		}
		picked.push({ task, at, uid });
	}
	picked.sort(
		(a, b) => compareInstants(a.at, b.at) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
	);
	return { emit: picked.map(({ task }) => task), seen, closed };
}

/**
 * One slice of `state.pass`'s window: the tasks read this poll, in uid order, and whether the listing was read to
 * its end. A pass read whole in one poll is the plain baseline or selectChanges, as without slices. Otherwise the
 * position stays until the last slice, the pass remembers the last uid read, and marks after the pass's start are
 * left to the next window (which reads them again), so that each change is emitted once across the slices.
 */
export function selectSlice(
	state: PollState,
	fetched: IDataObject[],
	matches: (task: IDataObject) => boolean,
	lookbackMs: number,
	nowMs: number,
	complete: boolean,
): { emit: IDataObject[]; next: PollState } {
	const { pass, ...rest } = state;
	if (!pass) return selectChanges(rest, fetched, matches, lookbackMs, nowMs);
	const seenByUpdatedAt = pass.seenByUpdatedAt === true;
	if (complete && pass.uid === undefined) {
		return pass.baseline
			? { emit: [], next: baseline(state.event, fetched, state.position, lookbackMs, nowMs) }
			: selectChanges(rest, fetched, matches, lookbackMs, nowMs, seenByUpdatedAt);
	}
	const startedAt: Instant = [pass.startedMs, 0];
	const inPass = fetched.filter((task) => {
		const at = instant(windowStamp(state.event, task));
		return !at || compareInstants(at, startedAt) <= 0;
	});
	let emit: IDataObject[] = [];
	let seen = { ...state.seen };
	let closed = state.closed && { ...state.closed };
	if (pass.baseline) {
		// Everything in the window counts as seen, as in the baseline.
		if (state.event === 'closedTask') closed = closed ?? {};
		for (const task of latestByUid(inPass)) {
			const value = windowStamp(state.event, task);
			if (!value || !instant(value)) continue;
			seen[task.uid as string] = value;
			if (closed) closed[task.uid as string] = marker(state.event, task) as string;
		}
	} else {
		({ emit, seen, closed } = pick(rest, inPass, matches, lookbackMs, seenByUpdatedAt));
	}
	const newest = newestUpdate(
		fetched,
		pass.newest ?? (pass.baseline ? undefined : state.position),
		nowMs,
	);
	if (complete) {
		const position = notAfter(newest ?? state.position, pass.startedMs);
		const floor = later(state.floor, pass.floor);
		return {
			emit,
			next: prune({ event: state.event, position, seen, floor, closed }, lookbackMs),
		};
	}
	const last = fetched.length > 0 ? String(fetched[fetched.length - 1].uid) : pass.uid;
	const next: PollState = {
		event: state.event,
		position: state.position,
		seen,
		floor: state.floor,
		closed,
		pass: { ...pass, uid: last, ...(newest && { newest }) },
	};
	return { emit, next: prune(next, lookbackMs) };
}

/**
 * Whether a saved state is one version 0.1.0 left for Updated Task: its `seen` holds updated_at values. That version
 * saved no `stamps` and no `pass`; this one saves `stamps` once a window has been read whole and anything read tells
 * (a task with an updated_at, or the five-task probe), and `pass` while one is read. A state of this version without
 * either holds only tasks without internal_updated_at, whose changedAt is their updated_at: the rule is the same there.
 */
export function savedByVersion010(saved: PollState): boolean {
	return saved.event === 'updatedTask' && saved.stamps === undefined && saved.pass === undefined;
}

/**
 * The stamps the next window asks with, once a window has been read whole: what its tasks (or, when they could not
 * tell, `probe`'s) show, never back from `internal`, never again after `refused`.
 */
export async function nextStamps(
	stamps: Stamps | undefined,
	tasks: IDataObject[],
	probe: () => Promise<IDataObject[]>,
): Promise<Stamps | undefined> {
	if (stamps === 'internal' || stamps === 'refused') return stamps;
	const shown =
		stampsShown(tasks) ?? (stamps === undefined ? stampsShown(await probe()) : undefined);
	return shown === 'internal' ? 'internal' : (stamps ?? shown);
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
