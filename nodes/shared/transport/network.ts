// What a failed exchange says, read the same way on n8n 1.x and 2.x: whether its status or network failure is
// transient, when the server asks to come back (Retry-After), where a redirect points (Location).
import type { IDataObject } from 'n8n-workflow';

/**
 * Statuses the spec calls transient, and 504 (a gateway in front of the service gave up waiting: transient as a 502).
 * A 429 was not processed, so it is retried even for a non-idempotent write; the 5xx only for an idempotent request.
 */
export const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
/**
 * Network failures retried (for an idempotent request) as the spec's transient errors. EHOSTUNREACH and ENETUNREACH
 * (no route to the host) are among them, as ECONNREFUSED is: a route or a VPN coming back, or a host restarting,
 * clears them, and a wrong address still fails after the last attempt with the Base URL named.
 */
const NETWORK_ERROR_CODES = [
	'ECONNRESET',
	'ETIMEDOUT',
	'ECONNREFUSED',
	'EPIPE',
	'ECONNABORTED',
	'ESOCKETTIMEDOUT',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'UND_ERR_SOCKET',
];
/**
 * The host name of the Base URL does not exist (the DNS answered "no such name"): a configuration error, which no
 * retry mends. The request fails at once, saying to check the Base URL. (A DNS that could not answer is EAI_AGAIN,
 * retried above.)
 */
export const HOST_NOT_FOUND = 'ENOTFOUND';
/**
 * What a network failure says once wrapped: n8n 1.x turns it into a NodeApiError whose message is a sentence per
 * code and drops the cause, so the sentence is all that is left to recognise it by.
 */
const NETWORK_ERROR_TEXTS: Array<[RegExp, string]> = [
	[/socket hang up|closed unexpectedly/i, 'ECONNRESET'],
	[/timeout of \d+ms exceeded|connection timed out/i, 'ETIMEDOUT'],
	[/refused the connection/i, 'ECONNREFUSED'],
	[/connection was aborted/i, 'ECONNABORTED'],
	[/host is unreachable/i, 'EHOSTUNREACH'],
	[/DNS server returned an error/i, 'EAI_AGAIN'],
	[/incorrect host \(domain\)/i, HOST_NOT_FOUND],
];

const KNOWN_ERROR_CODES = [...NETWORK_ERROR_CODES, HOST_NOT_FOUND];

export function networkErrorCode(error: unknown): string | undefined {
	const seen = new Set<unknown>();
	let current: unknown = error;
	while (current && typeof current === 'object' && !seen.has(current)) {
		seen.add(current);
		const { code, message, cause } = current as {
			code?: unknown;
			message?: unknown;
			cause?: unknown;
		};
		if (typeof code === 'string' && KNOWN_ERROR_CODES.includes(code)) return code;
		if (typeof message === 'string') {
			const found = KNOWN_ERROR_CODES.find((known) => message.includes(known));
			if (found) return found;
			const described = NETWORK_ERROR_TEXTS.find(([pattern]) => pattern.test(message));
			if (described) return described[1];
		}
		current = cause;
	}
	return undefined;
}

/**
 * Retry-After in seconds or as an HTTP date; undefined when absent, empty, unreadable, or asking for no wait at all
 * (0, a negative number, a date already past): such a value would turn the backoff off and retry at once, so the
 * normal exponential backoff is kept instead.
 */
export function retryAfterMs(
	headers: IDataObject | undefined,
	nowMs = Date.now(),
): number | undefined {
	const raw = headers?.['retry-after'];
	const value = Array.isArray(raw) ? raw[0] : raw;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const text = String(value).trim();
	if (text === '') return undefined;
	const seconds = Number(text);
	const waitMs = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(text) - nowMs;
	return Number.isFinite(waitMs) && waitMs > 0 ? waitMs : undefined;
}

/** The Location header of a response, whatever case or shape the headers came in. */
export function locationOf(headers: IDataObject | undefined): string | undefined {
	const value = headers?.location ?? headers?.Location;
	const first = Array.isArray(value) ? value[0] : value;
	return typeof first === 'string' && first.trim() ? first.trim() : undefined;
}
