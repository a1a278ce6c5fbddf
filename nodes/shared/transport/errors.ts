// A failed exchange, read the same way on n8n 1.x and 2.x: the error the node shows for it, whether its status or
// network failure is transient, when the server asks to come back (Retry-After), where a redirect points (Location),
// and how a request is retried (RetryPolicy).
import type { IDataObject, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { Redactor } from './credential';

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	409: 'Conflict',
	422: 'Unprocessable Entity',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

function describeDetail(detail: unknown): string | undefined {
	if (typeof detail === 'string') return detail;
	if (!Array.isArray(detail)) return undefined;
	const parts = detail.map((entry) => {
		if (typeof entry === 'string') return entry;
		const { loc, msg, message } = (entry ?? {}) as {
			loc?: unknown;
			msg?: unknown;
			message?: unknown;
		};
		const text =
			typeof msg === 'string' ? msg : typeof message === 'string' ? message : JSON.stringify(entry);
		return Array.isArray(loc) && loc.length > 0 ? `${loc.join('.')}: ${text}` : text;
	});
	return parts.join('; ');
}

/** The server's own message, from whichever body shape it sent (the spec does not fix one). */
export function serverMessage(body: unknown): string | undefined {
	if (typeof body === 'string') return body.trim().slice(0, 500) || undefined;
	if (!body || typeof body !== 'object') return undefined;
	const record = body as Record<string, unknown>;
	if (typeof record.message === 'string') return record.message;
	const detail =
		record.detail && typeof record.detail === 'object' && !Array.isArray(record.detail)
			? serverMessage(record.detail)
			: describeDetail(record.detail);
	if (detail) return detail;
	if (typeof record.error === 'string') return record.error;
	if (record.error && typeof record.error === 'object') return serverMessage(record.error);
	if (Array.isArray(record.errors)) return describeDetail(record.errors);
	return undefined;
}

function fixFor(status: number, path: string, attempts: number): string {
	if (status === 401)
		return 'The API token was rejected. Open the Task Backlog API credential and check the token; tokens are created under Settings > Developers, and a revoked token stops working at once.';
	if (status === 403)
		return 'The token is valid but may not do this. Check the token, the Account and the Acting User UID in the credential.';
	if (status === 404)
		return `Nothing found at ${path}. Check the uid, and that the credential's Base URL ends in /api/v1.`;
	if (status === 409)
		return 'An object with this uid already exists. Use Create or Update to change it.';
	if (status === 422)
		return 'The service rejected the field named in the message. Correct that field in the node parameters (or in the input item).';
	if (status === 429)
		return `Still rate limited after ${attempts} attempts: something else is using this token's budget. Lower Requests per Minute in the credential (with n8n queue mode, to the service's limit divided by the number of workers), or run fewer workflows with this token at once.`;
	if (status >= 500)
		return `The service failed ${attempts} time(s) in a row. It may be down: check its status page, then run the workflow again (writes are idempotent, so nothing is duplicated).`;
	return 'Check the parameters named in the message.';
}

/** The parsed body of the response an error was made from (kept beside the error, whatever n8n version made it). */
const responseBodies = new WeakMap<Error, unknown>();

export function responseBody(error: unknown): unknown {
	return error instanceof Error ? responseBodies.get(error) : undefined;
}

/** Replaces a secret (the token) wherever it appears in text the service sent back. */
export type Redact = (text: string) => string;

const keepAsIs: Redact = (text) => text;

/** A copy of a parsed body with every string (keys included) passed through `redact`. */
export function redactDeep(value: unknown, redact: Redact): unknown {
	if (typeof value === 'string') return redact(value);
	if (Array.isArray(value)) return value.map((entry) => redactDeep(entry, redact));
	if (value && typeof value === 'object') {
		return Object.fromEntries(
			Object.entries(value as Record<string, unknown>).map(([key, entry]) => [
				redact(key),
				redactDeep(entry, redact),
			]),
		);
	}
	return value;
}

/**
 * A successful answer with the token redacted (redactDeep), or the answer itself when it holds no form of the token:
 * one look at its JSON text decides (most answers hold none, and a copy of each would cost every request).
 */
export function redactAnswer(value: unknown, redact: Redactor): unknown {
	if (value === null || value === undefined) return value;
	if (typeof value === 'string') return redact(value);
	let text: string | undefined;
	try {
		text = JSON.stringify(value);
	} catch {
		return redactDeep(value, redact);
	}
	return text === undefined || redact.inJson(text) ? redactDeep(value, redact) : value;
}

export function apiError(
	node: INode,
	status: number,
	rawBody: unknown,
	request: { method: string; path: string; attempts: number; itemIndex?: number },
	redact: Redact = keepAsIs,
): NodeApiError {
	// Everything below is built from what the server sent, which may echo the token: redact it first, so
	// neither the message, the description, the error's kept response nor the body read later can carry it.
	const body = redactDeep(rawBody, redact);
	const text = serverMessage(body);
	const statusText = STATUS_TEXT[status] ?? 'Error';
	const message = redact(
		`${request.method} ${request.path} failed with ${status} ${statusText}${text ? `: ${text}` : ''}`,
	);
	const response: JsonObject = { status, message: text ?? statusText };
	if (body && typeof body === 'object') response.body = body as JsonObject;
	const error = new NodeApiError(node, response, {
		message,
		description: redact(fixFor(status, request.path, request.attempts)),
		httpCode: String(status),
		itemIndex: request.itemIndex,
	});
	responseBodies.set(error, body);
	return error;
}

/**
 * A 3xx answer. The token is never sent on to the Location (the client does not follow redirects), so a
 * redirect is reported with its target: usually the Base URL is an old or http:// address of the service.
 */
export function redirectError(
	node: INode,
	status: number,
	location: string | undefined,
	request: { method: string; path: string; baseUrl: string; itemIndex?: number },
	redact: Redact = keepAsIs,
): NodeApiError {
	const target = location ? redact(location) : '(no Location header)';
	return new NodeApiError(
		node,
		{ status, message: `Redirected to ${target}` },
		{
			message: redact(
				`${request.method} ${request.path} was redirected (${status}) to ${target}; redirects are not followed`,
			),
			description: redact(
				`The API token is never sent to a redirect target. If ${target} is the right address of the service, set the Task Backlog API credential's Base URL (now ${request.baseUrl}) to it; otherwise check the Base URL.`,
			),
			httpCode: String(status),
			itemIndex: request.itemIndex,
		},
	);
}

/** The service asked (Retry-After) for a longer wait than the retry policy allows: fail now, say when to retry. */
export function retryLaterError(
	node: INode,
	status: number,
	waitMs: number,
	maxDelayMs: number,
	rawBody: unknown,
	request: { method: string; path: string; attempts: number; itemIndex?: number },
	redact: Redact = keepAsIs,
	nowMs = Date.now(),
): NodeApiError {
	const text = serverMessage(redactDeep(rawBody, redact));
	const statusText = STATUS_TEXT[status] ?? 'Error';
	const retryAt = new Date(nowMs + waitMs).toISOString();
	const seconds = Math.ceil(waitMs / 1000);
	return new NodeApiError(
		node,
		{ status, message: text ?? statusText, retryAfterSeconds: seconds, retryAt },
		{
			message: redact(
				`${request.method} ${request.path} failed with ${status} ${statusText}: the service asks to retry after ${retryAt} (in ${seconds} s)${text ? `: ${text}` : ''}`,
			),
			description: `The service's Retry-After (${seconds} s) is longer than the longest wait between attempts (${Math.round(maxDelayMs / 1000)} s), so the node did not wait. Run the workflow again after ${retryAt}.`,
			httpCode: String(status),
			itemIndex: request.itemIndex,
		},
	);
}

export function networkError(
	node: INode,
	code: string,
	request: { method: string; path: string; attempts: number; baseUrl: string; itemIndex?: number },
): NodeApiError {
	return new NodeApiError(
		node,
		{ message: code, code },
		{
			message: `${request.method} ${request.path} could not reach the service (${code}) after ${request.attempts} attempt(s)`,
			description: `Check that the credential's Base URL (${request.baseUrl}) is right and reachable from n8n.`,
			itemIndex: request.itemIndex,
		},
	);
}

/** The host name of the Base URL does not resolve (ENOTFOUND): a configuration error, reported without a retry. */
export function hostNotFoundError(
	node: INode,
	request: { method: string; path: string; attempts: number; baseUrl: string; itemIndex?: number },
): NodeApiError {
	let host = request.baseUrl;
	try {
		host = new URL(request.baseUrl).hostname;
	} catch {
		// The Base URL was checked before anything was sent; keep it whole if it cannot be read again.
	}
	// Neither the message nor the response names the code: n8n would put its own sentence for it in place of the
	// message, which names neither the host nor the field to correct.
	return new NodeApiError(
		node,
		{ message: `Host not found: ${host}` },
		{
			message: `${request.method} ${request.path} could not reach the service: the host name "${host}" was not found`,
			description: `Check the Base URL in the Task Backlog API credential (now ${request.baseUrl}): its host name does not exist in the DNS (ENOTFOUND), so the request was not retried. Correct a typo, or use an address n8n can resolve (a name known only inside another network is not found from here).`,
			itemIndex: request.itemIndex,
		},
	);
}

/** The HTTP status the service answered an API error (NodeApiError) with; undefined for any other failure. */
export function statusOf(error: unknown): number | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	const status = Number(error.httpCode ?? NaN);
	return Number.isInteger(status) ? status : undefined;
}

/** Whether the service answered with one of these statuses. */
export const hasStatus = (error: unknown, ...statuses: number[]): error is NodeApiError => {
	const status = statusOf(error);
	return status !== undefined && statuses.includes(status);
};

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
