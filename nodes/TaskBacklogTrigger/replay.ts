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
 *   its kind; an `id` equal to the task's own uid or id is the task's, not the event's, and is not used;
 * - else by its kind, the task's uid and the task's `updated_at` (the task read from `data.task`, `task`, `data`
 *   or the payload itself): a task's next change has another `updated_at`, so it is another event. But a caller may
 *   write `updated_at` (spec 2.2), the same old value twice: so also by `internal_updated_at`, the service's own
 *   stamp of each write, where the event carries it, else by the task's content (all but the time metrics, which
 *   grow while it waits);
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

/** The task an event is about: the first of `data.task`, `task`, `data` and the payload that has a uid or id. */
function taskOf(event: IDataObject): IDataObject | undefined {
	for (const path of ['data.task', 'task', 'data']) {
		const candidate = valueAtPath(event, path);
		if (candidate && typeof candidate === 'object' && !Array.isArray(candidate)) {
			const task = candidate as IDataObject;
			if (scalar(task.uid) ?? scalar(task.id)) return task;
		}
	}
	return (scalar(event.uid) ?? scalar(event.id)) ? event : undefined;
}

/** What makes an event the same event however it is serialised or stamped (see above); undefined when unknown. */
export function eventIdentity(event: IDataObject, eventField: string): string | undefined {
	const kind = eventKind(event, eventField);
	const task = taskOf(event);
	const taskIds = [scalar(task?.uid), scalar(task?.id)].filter((id) => id !== undefined);
	const id = EVENT_ID_FIELDS.map((field) => scalar(event[field])).find(
		(value) => value !== undefined && !taskIds.includes(value),
	);
	if (id !== undefined) return JSON.stringify(['id', kind ?? null, id]);
	const uid = scalar(task?.uid) ?? scalar(task?.id);
	const updatedAt = scalar(task?.updated_at) ?? scalar(task?.updatedAt);
	if (kind === undefined || uid === undefined || updatedAt === undefined) return undefined;
	const internal = scalar(task?.internal_updated_at);
	return JSON.stringify(['task', kind, uid, updatedAt, internal ?? contentDigest(task!)]);
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
