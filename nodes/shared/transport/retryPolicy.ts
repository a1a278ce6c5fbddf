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
