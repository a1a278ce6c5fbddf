/* eslint-disable @n8n/community-nodes/no-restricted-globals -- tool code, never ships */
// The set-up every bench run shares: the service's rate limit, the node's batch size, the sizes of the fixed runs, and
// how the HTTP Request contender is paced.
import type { HttpContenderOptions } from '../n8n/workflows';

/** The service's limit: 60 requests per window (a minute, time-scaled here). */
export const LIMIT = 60;
export const BATCH_SIZE = 100;
export const TOKEN = `bench-token-${process.pid}-7d1f3a`;
export const PAGE_SIZE = 100;
export const RETURN_ALL_TASKS = 10000;
export const OVERHEAD_N = 10000;
export const PROFILE_N = 10000;
export const RUN_TIMEOUT_MS = 45 * 60_000;
/** The capped server's batch limit, which it does not state. */
export const CAPPED_BATCH_LIMIT = 50;

/**
 * How today's users pace the HTTP Request node (stated in the output and the README): the node's own Batching option
 * set to the documented limit (Items per Batch 60, Batch Interval one window, as n8n's 429 message and community
 * answers advise), plus the node setting Retry On Fail with n8n's defaults (3 tries, 1000 ms apart; 1000 ms is one
 * scaled window). Retry On Fail re-runs the whole node, every item, when any item failed.
 */
export function httpContender(windowMs: number): HttpContenderOptions {
	return {
		itemsPerBatch: LIMIT,
		batchIntervalMs: windowMs,
		retryOnFail: { maxTries: 3, waitBetweenTries: 1000 },
	};
}

export const ceilDiv = (a: number, b: number) => Math.ceil(a / b);

/** The least time a job of this many requests takes under the limit: ceil(requests / 60) windows. */
export function floorMs(requestsNeeded: number, windowMs: number) {
	return ceilDiv(requestsNeeded, LIMIT) * windowMs;
}

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
