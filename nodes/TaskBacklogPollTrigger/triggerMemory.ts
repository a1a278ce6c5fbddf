import { createHash } from 'crypto';

import type { PollState } from './changes';

// What n8n's process keeps per trigger (workflow id and node id), beside the static data n8n saves: the state a poll
// that emitted nothing left (carryOver), and the polls under way (startPoll, endPoll).

/**
 * n8n 2.x's durable scheduler (N8N_SCHEDULER_POLL_TRIGGERS_ENABLED) starts each poll from the static data as last
 * saved, and saves it only when the poll emits (or, with N8N_POLLER_DURABLE_CURSORS_ENABLED, after every poll). A poll
 * that reads a slice of a window with nothing in it to emit (changes already emitted, read again in the lookback, or
 * a window's empty last page) would then leave no trace: every next poll would read that same slice, and the window
 * would never end. So the state such a poll leaves is also kept here, in n8n's process, with a digest of the saved
 * state it started from: the next poll that starts from that same saved state goes on from here instead. Where n8n
 * keeps static data between polls (n8n 1.x, 2.x without the durable scheduler) the saved state has moved on and this
 * is never used. A poll that emits does not touch it: n8n saves its state with its items, or drops both, and the next
 * poll then starts again from here, so nothing emitted is skipped.
 */
const carried = new Map<string, { from: string; state: string }>();

/** Workflows whose trigger is kept at once; the least recently polled go first. */
export const MAX_CARRIED = 200;

const digest = (saved: unknown): string =>
	createHash('sha256')
		.update(JSON.stringify(saved ?? null))
		.digest('base64');

/**
 * The state to go on from: what the last poll that emitted nothing left, if it started from this same saved state,
 * otherwise the saved state. `from` is the saved state's digest, for carryOver.
 */
export function resumeState(key: string, saved: unknown): { state: unknown; from: string } {
	const from = digest(saved);
	const kept = carried.get(key);
	if (saved === undefined || !kept || kept.from !== from) return { state: saved, from };
	return { state: JSON.parse(kept.state) as unknown, from };
}

/** Keeps the state a poll that emitted nothing leaves, for the next poll starting from the same saved state. */
export function carryOver(key: string, from: string, state: PollState): void {
	carried.delete(key);
	carried.set(key, { from, state: JSON.stringify(state) });
	while (carried.size > MAX_CARRIED) carried.delete(carried.keys().next().value as string);
}

/**
 * Polls under way in this process, by trigger (key -> when the poll started). n8n 1.x (and 2.x without the durable
 * scheduler) starts a poll on time even while the last one still runs, e.g. while its requests wait behind a busy
 * workflow's at a rate limit they share: two polls from the same saved state would emit the same changes. A poll
 * that finds one under way emits nothing and leaves the window to it; one under way for longer than STALE_POLL_MS
 * is taken as lost and not waited for.
 */
const running = new Map<string, number>();

export const STALE_POLL_MS = 10 * 60 * 1000;

/** Whether a poll of this trigger may start now (none under way); if so, it is under way until endPoll. */
export function startPoll(key: string, nowMs: number): boolean {
	const started = running.get(key);
	if (started !== undefined && nowMs - started < STALE_POLL_MS) return false;
	running.set(key, nowMs);
	return true;
}

export function endPoll(key: string, startedMs: number): void {
	if (running.get(key) === startedMs) running.delete(key);
}
