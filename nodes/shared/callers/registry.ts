/**
 * What the process remembers between executions, per caller: what the transport and the task layers learnt or share.
 * A caller is the key a module gives: the hash of the base URL, the token and the headers that say who calls
 * (BacklogClient.callerKey), or of the token alone for what the server counts per token (the rate limiter, whatever the
 * Base URL). Tokens are taken as sent (trimmed). Nothing here holds a token.
 *
 * Bounded: at most MAX_CALLERS entries, the least recently used dropped first, and an entry unused for IDLE_MS dropped
 * at the next access. An entry whose parts are busy (held by an execution, as the limiter is from when it is handed to
 * one until the execution ends; a request under way; entries waiting in a lane) is never dropped, whatever the cap or
 * the time since its last use: executions holding it would otherwise go on with a copy that new executions no longer
 * see (two limiters for one token would send twice the rate). Past the cap while every entry is busy, the registry
 * grows until they are not.
 *
 * The parts of a caller, each made by the module that owns it on first use (Caller.part), and each one's bound:
 *
 * | part        | module                 | what                                        | bound                                  |
 * |-------------|------------------------|---------------------------------------------|----------------------------------------|
 * | 'limiter'   | transport/rateLimiter  | the token's rate limiter (a token's caller) | a slot per request of the last window  |
 * |             |                        |                                             | and under way (UNDER_WAY_MS at most);  |
 * |             |                        |                                             | configurations CONFIGURATION_KEPT_MS   |
 * | 'sharing'   | sharing/coalesce       | the lanes (by kind and settings), their     | MAX_WAITING entries a lane; a lane per |
 * |             |                        | paces, the tasks written lately             | settings met; MAX_REMEMBERED tasks for |
 * |             |                        |                                             | WRITTEN_HORIZON_MS                     |
 * | 'batchSize' | tasks/send             | the batch size the server accepted          | one number                             |
 * | 'reads'     | tasks/send             | uids per bulk read; tasks known to exist    | KNOWN_PER_CALLER uids                  |
 * | 'listing'   | tasks/listTasks        | /tasks/query's page size and cursors, and   | three values                           |
 * |             |                        | when it was last found unfit for listings   |                                        |
 *
 * Elsewhere, and why (none of them per caller):
 * - tasks/send.ts `readsOneByOne`, sharing/coalesce.ts `executionNumbers` (and its counter): per execution, held
 *   weakly by its client, so they end with it (a run that saw a missed task reads one by one, not every later run).
 * - transport/errors.ts `responseBodies`: the body of a failed answer, held weakly by its error.
 * - identity.ts `namespaceBytes` (at most 64 namespaces, then cleared) and one 3 KB buffer: a cache of UUID v5.
 * - TaskBacklogTrigger/replay.ts `memory`, the deliveries a webhook trigger accepted: per trigger node (a webhook
 *   has no caller), checked and updated with no await between (two copies of a request at once start one
 *   execution); MEMORY_LIMIT deliveries a node, each until its replay window ends, a map per trigger node that
 *   received one. A copy (STORED_LIMIT) is in the node's static data, which n8n saves.
 * - TaskBacklogPollTrigger/triggerMemory.ts, per trigger (workflow and node): the state a poll that emitted nothing
 *   left (MAX_CARRIED triggers, the least recently polled first) and the polls under way (one each, until it ends;
 *   one older than STALE_POLL_MS is not waited for).
 * - Sync Backlog's memory (TaskBacklog/actions/shared/syncMemory.ts) is not the process's: it is in the node's
 *   static data, which n8n saves with the execution (MAX_MEMORY_TASKS tasks at most).
 * - This module's own rest after a walk past the cap (restingTouches, restingUntil): two numbers.
 */

/** Callers kept at most (the least recently used idle one is dropped first). */
export const MAX_CALLERS = 1000;

/** A caller unused this long is forgotten (its next execution starts afresh, as after a restart). */
export const IDLE_MS = 15 * 60_000;

/** A part of a caller's state that may be busy (held or in use): it is not dropped then (see the registry's comment). */
export interface CallerPart {
	busy?(): boolean;
}

/** What the process keeps for one caller: named parts, each made by the module that owns it on first use. */
export class Caller {
	private readonly parts = new Map<string, unknown>();

	usedAt = now();

	/** The part `name`, made by `make` on first use. Each module names its own parts (e.g. 'limiter', 'lanes'). */
	part<T>(name: string, make: () => T): T {
		let part = this.parts.get(name) as T | undefined;
		if (part === undefined) {
			part = make();
			this.parts.set(name, part);
		}
		return part;
	}

	busy(): boolean {
		return [...this.parts.values()].some((part) => (part as CallerPart | null)?.busy?.() === true);
	}
}

const callers = new Map<string, Caller>();

/** The state of the caller of this key (a hash: see the registry's comment), made on first use. */
export function callerState(key: string): Caller {
	const at = now();
	let caller = callers.get(key);
	if (caller) callers.delete(key);
	else caller = new Caller();
	caller.usedAt = at;
	// The most recently used last: a Map keeps insertion order.
	callers.set(key, caller);
	prune(at, caller);
	return caller;
}

/**
 * Touches left before the next walk past the cap, after a walk that found every other caller busy: walking them all
 * again on each touch would cost O(callers) per touch while they stay busy; resting as many touches as it passed makes
 * it O(1) on average. The rest also ends REST_MS after that walk: busy callers become idle with time (a limiter once its
 * window has passed), and a process touched rarely would otherwise keep them past the cap for that many touches.
 * Within the cap, or with an idle caller to drop, a walk stops early and needs no rest.
 */
let restingTouches = 0;
let restingUntil = 0;
const REST_MS = 1000;

function prune(at: number, touched: Caller) {
	if (restingTouches > 0 && at < restingUntil) {
		restingTouches--;
		return;
	}
	restingTouches = 0;
	let passedBusy = 0;
	for (const [key, caller] of callers) {
		if (callers.size <= MAX_CALLERS && at - caller.usedAt < IDLE_MS) return;
		// The touched caller, last in the map: its parts are made after this returns (it is not busy yet), and dropped
		// now, a second one would be made at its next touch (a second limiter for one token: twice the rate).
		if (caller === touched) break;
		if (!caller.busy()) callers.delete(key);
		else passedBusy++;
	}
	restingTouches = passedBusy;
	restingUntil = at + REST_MS;
}

/** How many callers this process remembers (bounded by MAX_CALLERS while they are idle). */
export const callerCount = () => callers.size;

/** Forgets every caller: for tests, which start each from a process's first execution. */
export function resetCallers() {
	callers.clear();
	restingTouches = 0;
	restingUntil = 0;
}

// The clock the registry's bounds are measured on, and every interval of the transport, the tasks and the lanes.

/**
 * Milliseconds on a monotonic clock, for intervals: pacing, windows, pauses, timeouts. Date.now() steps when the system
 * clock is set (NTP, a VM resumed, a user), and an interval measured across the step is off by all of it: ten minutes
 * back held every request ten minutes. This clock never steps; it starts near 0 when the process starts, so its
 * readings are not dates: compare them only with each other, and turn a date (an HTTP-date Retry-After) into a
 * duration with Date.now() when it arrives.
 */
export function now(): number {
	return performance.now();
}
