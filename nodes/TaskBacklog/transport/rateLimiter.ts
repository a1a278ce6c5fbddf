import { sleep } from 'n8n-workflow';

/**
 * Requests reach the server later than they leave, by varying amounts: spacing windows 3% wider than the server's
 * keeps a burst that straddles its window boundary under its count.
 */
const WINDOW_MARGIN = 1.03;

/**
 * Client-side rate limit: at most `limit` requests in any window of `windowMs`.
 *
 * Each caller reserves a send time synchronously (JavaScript runs one callback at a time), so concurrent
 * executions in one n8n process that share a base URL and token queue up behind each other instead of racing.
 */
export class RateLimiter {
	private readonly sendTimes: number[] = [];

	private blockedUntil = 0;

	private limit = 1;

	private windowMs = 1;

	constructor(limit: number, windowMs: number) {
		this.configure(limit, windowMs);
	}

	configure(limit: number, windowMs: number) {
		this.limit = Math.max(1, Math.floor(limit));
		this.windowMs = Math.max(1, windowMs) * WINDOW_MARGIN;
	}

	/** Resolves when the caller may send; the slot is already counted. */
	async acquire(): Promise<void> {
		const now = Date.now();
		while (this.sendTimes.length > 0 && this.sendTimes[0] <= now - this.windowMs) this.sendTimes.shift();
		let at = Math.max(now, this.blockedUntil);
		if (this.sendTimes.length >= this.limit) {
			// The slot frees when the request `limit` places earlier leaves the window.
			at = Math.max(at, this.sendTimes[this.sendTimes.length - this.limit] + this.windowMs);
		}
		// `at` never decreases from one call to the next, so sendTimes stays sorted.
		this.sendTimes.push(at);
		if (at > now) await sleep(at - now);
	}

	/** After a 429 the server's view wins: no request (from any caller) leaves before `until`. */
	pauseUntil(until: number) {
		this.blockedUntil = Math.max(this.blockedUntil, until);
	}
}

const limiters = new Map<string, RateLimiter>();

/** One limiter per base URL and token (the key is a hash: the token itself is never kept here). */
export function limiterFor(key: string, limit: number, windowMs: number): RateLimiter {
	let limiter = limiters.get(key);
	if (!limiter) {
		limiter = new RateLimiter(limit, windowMs);
		limiters.set(key, limiter);
	} else {
		limiter.configure(limit, windowMs);
	}
	return limiter;
}
