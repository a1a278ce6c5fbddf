/** How a request is retried: the client's backoff, and the limiter's waits after a 429 (RateLimiter.throttleDelayMs). */
export interface RetryPolicy {
	/** Attempts in all, the first included. */
	maxAttempts: number;
	baseDelayMs: number;
	maxDelayMs: number;
}

/** The spec's client guidance: exponential backoff, up to 5 attempts, a few seconds at first, at most about 15 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxAttempts: 5,
	baseDelayMs: 2000,
	maxDelayMs: 15000,
};

/** The wait before retry `attempt + 1` under a policy: exponential, capped, with a little jitter. */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
	const exponential = policy.baseDelayMs * 2 ** (attempt - 1);
	// A little jitter keeps parallel executions from retrying in lockstep.
	return Math.min(policy.maxDelayMs, exponential) * (0.9 + Math.random() * 0.2);
}
