import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

/**
 * Deliveries already accepted, so that a repeat inside the replay window (a replay by someone who captured the
 * request, or the service delivering again) is acknowledged without starting a second execution.
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

/** A short, non-reversible name for a delivery (the HMAC it was verified with, and the timestamp it covers). */
export function deliveryKey(parts: string[]): string {
	return createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex').slice(0, 32);
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
