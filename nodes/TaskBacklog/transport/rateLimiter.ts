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
	/** One entry per request in the window: when it left, or, once it has finished, when it finished. */
	private readonly slots: Array<{ at: number }> = [];

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

	/**
	 * Resolves when the caller may send; the slot is already counted. Call the returned function when the request has
	 * finished: the server may have counted it at any moment until then, so its slot moves to the finish time.
	 */
	async acquire(): Promise<() => void> {
		const now = Date.now();
		for (let index = this.slots.length - 1; index >= 0; index--) {
			if (this.slots[index].at <= now - this.windowMs) this.slots.splice(index, 1);
		}
		let at = Math.max(now, this.blockedUntil);
		if (this.slots.length >= this.limit) {
			// The slot frees when the request `limit` places earlier leaves the window.
			const times = this.slots.map((slot) => slot.at).sort((a, b) => a - b);
			at = Math.max(at, times[times.length - this.limit] + this.windowMs);
		}
		const slot = { at };
		this.slots.push(slot);
		if (at > now) await sleep(at - now);
		return () => {
			slot.at = Math.max(slot.at, Date.now());
		};
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
