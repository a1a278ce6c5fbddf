// What stands between an authenticated request and its handler: the fixed-window rate limit per token, the faults
// scripted with failNext(), the random faults of `options.faults` (latency, resets, 5xx, 429) and the contents the
// service refuses (`options.refuseContent`), all before any side effect.
import { HttpError } from './helpers';
import type { Store } from './store';
import type { LoggedRequest } from './types';

/** Counts the request in its token's window; a 429 when the window is full. */
export function rateLimit(store: Store, token: string): void {
	const limit = store.opts.requestsPerWindow ?? 0;
	if (limit <= 0) return;
	const now = Date.now();
	const windowMs = store.opts.windowMs ?? 60000;
	let w = store.windows.get(token);
	if (!w || now - w.start >= windowMs) {
		w = { start: now, count: 0 };
		store.windows.set(token, w);
	}
	w.count++;
	if (w.count > limit) {
		const headers: Record<string, string> = store.opts.retryAfterOnLimit
			? { 'retry-after': String(Math.max(1, Math.ceil((w.start + windowMs - now) / 1000))) }
			: {};
		throw new HttpError(
			429,
			{ message: `Too many requests: limit is ${limit} per window` },
			headers,
		);
	}
}

/**
 * Applies the scripted and the random faults: throws the HttpError to answer, or says `reset` (cut the connection),
 * `gone` (the client went away or the server stopped during the latency: nothing more to do), `cutAfterEffect` (do the
 * work, then cut the connection) or `proceed`. `gone()` says whether the client has gone.
 */
export async function applyFaults(
	store: Store,
	entry: LoggedRequest,
	gone: () => boolean,
): Promise<'reset' | 'gone' | 'cutAfterEffect' | 'proceed'> {
	const { method, path } = entry;
	// 3a. scripted faults, before any side effect
	const scripted = store.scriptedFaults.findIndex(
		(fault) => !fault.when || fault.when({ method, path }),
	);
	let cutAfterEffect = false;
	if (scripted >= 0) {
		const [fault] = store.scriptedFaults.splice(scripted, 1);
		if (fault.afterEffect) {
			cutAfterEffect = true;
		} else if (fault.status === 'reset') {
			entry.fault = 'reset';
			return 'reset';
		} else {
			entry.fault = `scripted-${fault.status}`;
			const headers =
				fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : undefined;
			throw new HttpError(
				fault.status,
				fault.body ?? { message: `Scripted ${fault.status}` },
				headers,
				fault.body !== undefined,
			);
		}
	}
	// 3b. random faults, before any side effect. A fixed number of draws per request keeps seeded runs reproducible.
	const f = store.opts.faults;
	if (f && (!f.only || f.only({ method, path }))) {
		const rng = store.rng;
		const [rLatency, rReset, rError, rCode, rLimit, rRetry] = [
			rng(),
			rng(),
			rng(),
			rng(),
			rng(),
			rng(),
		];
		if (f.latencyMs) {
			const [lo, hi] = f.latencyMs;
			await store.sleep(lo + rLatency * Math.max(0, hi - lo));
			if (store.stopped || gone()) return 'gone';
		}
		const retryAfter =
			rRetry < (f.retryAfterRate ?? 0)
				? { 'retry-after': String(f.retryAfterSeconds ?? 1) }
				: undefined;
		if (rReset < (f.resetRate ?? 0)) {
			entry.fault = 'reset';
			return 'reset';
		}
		if (rError < (f.error5xxRate ?? 0)) {
			const code = [500, 502, 503][Math.min(2, Math.floor(rCode * 3))];
			entry.fault = `error-${code}`;
			const text =
				code === 500
					? 'Internal Server Error'
					: code === 502
						? 'Bad Gateway'
						: 'Service Unavailable';
			throw new HttpError(
				code,
				{ message: `Simulated ${code} ${text}` },
				code === 503 ? retryAfter : undefined,
			);
		}
		if (rLimit < (f.rateLimitRate ?? 0)) {
			entry.fault = 'rate-limit';
			throw new HttpError(429, { message: 'Too many requests (simulated)' }, retryAfter);
		}
		if (f.resetAfterEffectRate && store.rng() < f.resetAfterEffectRate) cutAfterEffect = true;
	}
	return cutAfterEffect ? 'cutAfterEffect' : 'proceed';
}

/** Where `text` first occurs in a JSON value, as a path (`items[3].fields.title`; '' for the value itself). */
function findText(value: unknown, text: string, where = ''): string | undefined {
	if (typeof value === 'string') return value.includes(text) ? where : undefined;
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) {
			const found = findText(value[i], text, `${where}[${i}]`);
			if (found !== undefined) return found;
		}
		return undefined;
	}
	if (value === null || typeof value !== 'object') return undefined;
	for (const [key, item] of Object.entries(value)) {
		const at = where ? `${where}.${key}` : key;
		if (key.includes(text)) return at;
		const found = findText(item, text, at);
		if (found !== undefined) return found;
	}
	return undefined;
}

/**
 * A task write (POST, PUT or PATCH of /tasks, /tasks/{uid} or /tasks/batch) whose body holds a text of
 * `options.refuseContent`: a 400 naming where the text is and the text itself, before any side effect.
 */
export function refuseContent(store: Store, entry: LoggedRequest, body: unknown): void {
	const texts = store.opts.refuseContent ?? [];
	if (!texts.length || !['POST', 'PUT', 'PATCH'].includes(entry.method)) return;
	if (!/^\/tasks(\/[^/]+)?$/.test(entry.path) || entry.path === '/tasks/query') return;
	for (const refusal of texts) {
		const {
			text,
			status = 400,
			message,
		} = typeof refusal === 'string' ? { text: refusal } : refusal;
		const where = text ? findText(body, text) : undefined;
		if (where === undefined) continue;
		entry.fault = 'refused-content';
		throw new HttpError(status, {
			message: message ?? `${where || 'body'}: forbidden content ${JSON.stringify(text)}`,
		});
	}
}
