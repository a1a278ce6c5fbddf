import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import { eventKind, valueAtPath } from './events';
import type { VerificationSettings } from './verify';

/**
 * Deliveries already accepted, so that a repeat inside the replay window (a replay by someone who captured the
 * request, or the service delivering again) is acknowledged without starting a second execution.
 *
 * A delivery is keyed by the events it carries (replayKey), so that the same event re-sent with a new timestamp
 * and signature, or re-serialised (other key order, whitespace, a new `sentAt`), is still a repeat:
 * - by the event's own id (`id`, `event_id` or `eventId` at the top of the payload; the spec names none), with
 *   its kind, whatever the payload's shape: a flat event (`{id, type, uid}`, the payload naming the task) as much as
 *   a nested one; an `id` equal to the uid (or, nested, the id) of the task the event is about is the task's, not
 *   the event's, and is not used;
 * - else by its kind, the task's uid and the task's `updated_at` (the task read from `data.task`, `task`, `data`
 *   or the payload itself): a task's next change has another `updated_at`, so it is another event. But a caller may
 *   write `updated_at` (spec 2.2), the same old value twice: so also by `internal_updated_at`, the service's own
 *   stamp of each write, where the event carries it, else by the task's content (all but the time metrics, which
 *   grow while it waits); and by the comment's uid where the event is about one (two comments on one task version
 *   are two events);
 * - else (any of these missing, in any event of the request) by the signed bytes, as before: the HMAC, which
 *   covers the timestamp when the signature does. A distinct event is never taken for a repeat on a guess.
 * A request carrying several events (an array) is keyed by all of them, in any order.
 *
 * Two stores, because a node has no other:
 * - module memory, per n8n process: checked and updated without any await in between, so two identical requests
 *   arriving at once in one process start one execution;
 * - the node's workflow static data, which n8n saves after each production webhook call and loads for the next
 *   one, so a repeat is still caught after a restart or by another process, unless both copies of a request are
 *   handled at the same moment by two processes (queue mode with several webhook processes).
 */

/** Entries kept per trigger node in memory, and in static data (which n8n writes to its database). */
const MEMORY_LIMIT = 10_000;
const STORED_LIMIT = 500;
const STORE_KEY = 'acceptedDeliveries';

const memory = new Map<string, Map<string, number>>();

/** How long a delivery is remembered when the request carries no usable timestamp window. */
const DEFAULT_REMEMBER_MS = 300_000;

/** Top-level fields read as the event's own id. */
const EVENT_ID_FIELDS = ['id', 'event_id', 'eventId'];

/** A short, non-reversible name for a delivery (the HMAC it was verified with, and the timestamp it covers). */
export function deliveryKey(parts: string[]): string {
	return createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex').slice(0, 32);
}

/** A non-empty string or a finite number, as text; anything else is no value. */
function scalar(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Where an event may carry the task it is about, first found first (the older API: `data.task`). */
const TASK_PATHS = ['data.task', 'task', 'data'];

/** What an event is about: the task (its object, for its stamps and content), its uid, and the ids that are its own. */
interface About {
	task: IDataObject;
	uid: string;
	/** Values a top-level id may have that name the task, not the event. */
	taskIds: string[];
}

/**
 * The task an event is about:
 * - nested: the first of `data.task`, `task` and `data` that has a uid or id; both are the task's;
 * - flat (the payload is the task, or names it): the payload; the task is named by its `uid`, else `task_uid`, and
 *   then a top-level `id` is the event's own unless it is that uid. With neither, the `id` may only be the task's
 *   (`{id, type, updated_at}`): taken as the task's, never the event's, so that two changes of one task are never
 *   taken for one event.
 */
function aboutOf(event: IDataObject): About | undefined {
	for (const path of TASK_PATHS) {
		const candidate = valueAtPath(event, path);
		if (candidate && typeof candidate === 'object' && !Array.isArray(candidate)) {
			const task = candidate as IDataObject;
			const ids = [scalar(task.uid), scalar(task.id)].filter((id) => id !== undefined);
			if (ids.length > 0) return { task, uid: ids[0], taskIds: ids };
		}
	}
	const uid = scalar(event.uid) ?? scalar(event.task_uid) ?? scalar(event.id);
	return uid === undefined ? undefined : { task: event, uid, taskIds: [uid] };
}

/**
 * The comment an event is about, where it names one: its uid (`data.comment`, `comment`, or `comment_uid`), else
 * the digest of the comment's content. Two comments on one task version are two events.
 */
function commentOf(event: IDataObject): string | undefined {
	for (const path of ['data.comment', 'comment']) {
		const comment = valueAtPath(event, path);
		if (comment && typeof comment === 'object' && !Array.isArray(comment)) {
			const record = comment as IDataObject;
			const uid = scalar(record.uid) ?? scalar(record.id);
			return uid !== undefined ? `uid:${uid}` : `content:${contentDigest(record)}`;
		}
	}
	const uid = scalar(valueAtPath(event, 'data.comment_uid')) ?? scalar(event.comment_uid);
	return uid === undefined ? undefined : `uid:${uid}`;
}

/**
 * What makes an event the same event however it is serialised or stamped (see above); undefined when unknown:
 * its own id whatever the payload's shape, else its kind, the task's uid, `updated_at` and `internal_updated_at`
 * (else the task's content) and the comment's uid where it names one.
 */
export function eventIdentity(event: IDataObject, eventField: string): string | undefined {
	const kind = eventKind(event, eventField);
	const about = aboutOf(event);
	const id = EVENT_ID_FIELDS.map((field) => scalar(event[field])).find(
		(value) => value !== undefined && !about?.taskIds.includes(value),
	);
	if (id !== undefined) return JSON.stringify(['id', kind ?? null, id]);
	if (about === undefined || kind === undefined) return undefined;
	const { task, uid } = about;
	const updatedAt = scalar(task.updated_at) ?? scalar(task.updatedAt);
	if (updatedAt === undefined) return undefined;
	const internal = scalar(task.internal_updated_at);
	const comment = commentOf(event);
	return JSON.stringify([
		'task',
		kind,
		uid,
		updatedAt,
		internal ?? contentDigest(task),
		...(comment === undefined ? [] : [comment]),
	]);
}

/** Task fields that grow with time alone (spec 2.2's time metrics): a redelivery may carry newer values. */
const TIME_METRICS = new Set(
	['queue', 'work', 'incremental_work', 'resolution', 'wait'].flatMap((metric) => [
		`${metric}_time`,
		`${metric}_time_business`,
	]),
);

/** The same JSON with object keys in one order. */
function canonical(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(canonical);
	if (!value || typeof value !== 'object') return value;
	const object = value as IDataObject;
	return Object.fromEntries(
		Object.keys(object)
			.sort()
			.map((key) => [key, canonical(object[key])]),
	);
}

/** What a task holds, whatever the key order, without its time metrics. */
function contentDigest(task: IDataObject): string {
	const content = Object.fromEntries(
		Object.entries(task).filter(([key]) => !TIME_METRICS.has(key)),
	);
	return deliveryKey([JSON.stringify(canonical(content))]);
}

/**
 * The key a delivery is remembered by: its events' identities when every event has one, else its signature
 * (`digest`, the HMAC the request was verified with). `byEvent` says which.
 */
export function replayKey(
	events: IDataObject[],
	eventField: string,
	digest: string,
): { key: string; byEvent: boolean } {
	const identities = events.map((event) => eventIdentity(event, eventField));
	if (identities.length === 0 || identities.some((identity) => identity === undefined)) {
		return { key: deliveryKey([digest]), byEvent: false };
	}
	return { key: deliveryKey(['events', ...(identities as string[]).sort()]), byEvent: true };
}

/**
 * How long an accepted delivery could be accepted again: until its timestamp leaves the replay window when the
 * signature covers the timestamp; otherwise (a fresh timestamp can be put on an old body) for one window. An event
 * keyed by its identity can come back re-signed with any fresh timestamp, so it is kept for at least one window.
 */
export function rememberMs(
	settings: VerificationSettings,
	sentAtMs: number | undefined,
	nowMs: number,
	byEvent = false,
): number {
	const windowMs = settings.replayWindowSeconds * 1000;
	if (windowMs <= 0) return DEFAULT_REMEMBER_MS;
	if (settings.signatureCoversTimestamp && sentAtMs !== undefined) {
		const untilStale = Math.max(sentAtMs + windowMs - nowMs, 0) + 1000;
		return byEvent ? Math.max(untilStale, windowMs) : untilStale;
	}
	return windowMs;
}

function prune(entries: Map<string, number>, nowMs: number, limit: number) {
	for (const [key, expiresAt] of entries) if (expiresAt <= nowMs) entries.delete(key);
	// Oldest first (insertion order): when the limit is reached the earliest deliveries are forgotten first.
	while (entries.size > limit) entries.delete(entries.keys().next().value as string);
}

function storedEntries(staticData: IDataObject): Map<string, number> {
	const stored = staticData[STORE_KEY];
	const entries = new Map<string, number>();
	if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
		for (const [key, value] of Object.entries(stored as IDataObject)) {
			if (typeof value === 'number' && Number.isFinite(value)) entries.set(key, value * 1000);
		}
	}
	return entries;
}

/**
 * Records a delivery; false when it was already recorded and has not expired. `scope` names the trigger node
 * (workflow and node id), `keepMs` how long the delivery could still be accepted again.
 */
export function firstDelivery(
	scope: string,
	staticData: IDataObject,
	key: string,
	nowMs: number,
	keepMs: number,
): boolean {
	let seen = memory.get(scope);
	if (!seen) memory.set(scope, (seen = new Map()));
	const stored = storedEntries(staticData);
	const known = (seen.get(key) ?? 0) > nowMs || (stored.get(key) ?? 0) > nowMs;
	if (known) return false;

	const expiresAt = nowMs + keepMs;
	seen.set(key, expiresAt);
	prune(seen, nowMs, MEMORY_LIMIT);
	stored.set(key, expiresAt);
	prune(stored, nowMs, STORED_LIMIT);
	// Whole seconds keep the stored object small; it is written back whole so that n8n notices the change.
	staticData[STORE_KEY] = Object.fromEntries(
		[...stored].map(([name, at]) => [name, Math.ceil(at / 1000)]),
	);
	return true;
}
