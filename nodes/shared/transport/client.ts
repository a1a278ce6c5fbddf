import { createHash } from 'crypto';
import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

import {
	apiError,
	hostNotFoundError,
	networkError,
	redirectError,
	retryLaterError,
} from './errors';
import type { RateLimiter } from './rateLimiter';
import { limiterFor } from './rateLimiter';
import { CREDENTIAL_TYPE } from '../credentialTypes';
import { USER_AGENT } from './version';

export type BacklogContext =
	IExecuteFunctions | ILoadOptionsFunctions | IPollFunctions | IHookFunctions | IWebhookFunctions;

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

export interface ApiRequest {
	method: IHttpRequestMethods;
	/** Path below the base URL, e.g. `/tasks/{uid}`. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/**
	 * Whether sending the request twice has the effect of sending it once. GET, PUT, PATCH and DELETE are;
	 * a POST is only when the caller says so (a create with a client-chosen uid, or a read such as /tasks/query).
	 */
	idempotent?: boolean;
	itemIndex?: number;
}

export interface Page {
	items: IDataObject[];
	meta?: { self_cursor?: string | null; next_cursor?: string | null; total_count?: number };
}

/**
 * Statuses the spec calls transient, and 504 (a gateway in front of the service gave up waiting: transient as a 502).
 * A 429 was not processed, so it is retried even for a non-idempotent write; the 5xx only for an idempotent request.
 */
const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
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
const HOST_NOT_FOUND = 'ENOTFOUND';
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

function networkErrorCode(error: unknown): string | undefined {
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

/**
 * A number of the credential: its default when the field is empty (a credential saved before the field existed),
 * otherwise a finite number of at least `min`, or an error naming the field. Nothing is silently replaced: a limit of
 * 0 does not become 60, nor a negative window a millisecond.
 */
function credentialNumber(
	ctx: BacklogContext,
	value: unknown,
	field: string,
	fallback: number,
	min: number,
	rule: string,
): number {
	if (value === undefined || value === null || value === '') return fallback;
	const number =
		typeof value === 'number'
			? value
			: typeof value === 'string' && value.trim() !== ''
				? Number(value)
				: NaN;
	if (Number.isFinite(number) && number >= min) return number;
	throw new NodeOperationError(
		ctx.getNode(),
		`The Task Backlog API credential's ${field} is ${JSON.stringify(value) ?? String(value)}: it must be ${rule}`,
		{
			description: `Open the Task Backlog API credential and set ${field} (the service allows 60 requests per 60 seconds).`,
		},
	);
}

/**
 * The forms in which a server may echo the token: as is, URL-encoded (a query string, a redirect's Location, a form
 * body: %XX in either case, a space as %20 or +), and URL-encoded twice. Longest first, so that a form holding another is
 * replaced whole.
 */
export function tokenForms(token: string): string[] {
	if (token.length < 4) return [];
	const component = encodeURIComponent(token);
	const form = new URLSearchParams({ t: token }).toString().slice(2);
	const forms = new Set([token, component, encodeURI(token), form, encodeURIComponent(component)]);
	for (const encoded of [...forms])
		forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
	return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every form of the token (tokenForms) in a text with ***. */
export function redactor(token: string): (text: string) => string {
	const forms = tokenForms(token);
	return (text) => forms.reduce((result, form) => result.split(form).join('***'), text);
}

export function normalizeBaseUrl(value: unknown): string | undefined {
	const url = String(value ?? '')
		.trim()
		.replace(/\/+$/, '');
	return /^https?:\/\/[^/\s]+/i.test(url) ? url : undefined;
}

/** Hosts whose traffic never leaves the machine: plain http:// to them exposes the token to nobody else. */
export function isLoopbackHost(hostname: string): boolean {
	const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
	return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Whether the token may be sent to this base URL: https://, or http:// to a loopback host, or http:// anywhere
 * when the credential's "Allow Insecure HTTP" is on.
 */
export function isSecureEnough(baseUrl: string, allowInsecureHttp: boolean): boolean {
	if (/^https:\/\//i.test(baseUrl) || allowInsecureHttp) return true;
	try {
		return isLoopbackHost(new URL(baseUrl).hostname);
	} catch {
		return false;
	}
}

/** The Location header of a response, whatever case or shape the headers came in. */
function locationOf(headers: IDataObject | undefined): string | undefined {
	const value = headers?.location ?? headers?.Location;
	const first = Array.isArray(value) ? value[0] : value;
	return typeof first === 'string' && first.trim() ? first.trim() : undefined;
}

interface Connection {
	/**
	 * A hash of the base URL, the token and the headers that say who calls (account, versioning, acting user): the same
	 * for every execution that talks to the same service as the same caller, whose requests may therefore be shared.
	 */
	callerKey: string;
	baseUrl: string;
	headers: IDataObject;
	limiter: RateLimiter;
	/** Replaces the token wherever it might surface in a message. */
	redact: (text: string) => string;
}

/**
 * The one way our nodes talk to the service: authentication (through n8n's credential), the client-side rate
 * limit, retries with backoff, error translation, cursor paging. Make one per execution.
 */
export class BacklogClient {
	private connection?: Promise<Connection>;

	/** A 401 ends the run for this credential: nothing after it is sent. */
	private authFailure?: NodeApiError;

	constructor(
		readonly ctx: BacklogContext,
		readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {}

	private async connect(): Promise<Connection> {
		const credentials = await this.ctx.getCredentials(CREDENTIAL_TYPE);
		const baseUrl = normalizeBaseUrl(credentials.baseUrl);
		if (!baseUrl) {
			throw new NodeOperationError(
				this.ctx.getNode(),
				`The Task Backlog API credential's Base URL "${String(credentials.baseUrl ?? '')}" is not an http(s) address`,
				{
					description:
						'Set it to the API address with its version prefix, e.g. https://api.example.com/api/v1.',
				},
			);
		}
		if (!isSecureEnough(baseUrl, credentials.allowInsecureHttp === true)) {
			throw new NodeOperationError(
				this.ctx.getNode(),
				`The Task Backlog API credential's Base URL "${baseUrl}" uses plain http://, which would send the API token unencrypted`,
				{
					description:
						'Use the https:// address of the service. Plain http:// is accepted for localhost, 127.0.0.1 and ::1, or anywhere when "Allow Insecure HTTP" is turned on in the credential (only on a network you trust).',
				},
			);
		}
		const token = String(credentials.token ?? '');
		const headers: IDataObject = { 'User-Agent': USER_AGENT, Accept: 'application/json' };
		if (credentials.account) headers['service-account'] = String(credentials.account);
		if (credentials.versioning) headers['service-versioning'] = String(credentials.versioning);
		if (credentials.actingUserUid) headers['service-user'] = String(credentials.actingUserUid);
		const key = createHash('sha256').update(`${baseUrl}\n${token}`).digest('hex');
		const limit = credentialNumber(
			this.ctx,
			credentials.requestsPerMinute,
			'Requests per Minute',
			60,
			1,
			'a number of 1 or more',
		);
		const windowSeconds = credentialNumber(
			this.ctx,
			credentials.rateLimitWindowSeconds,
			'Rate Limit Window (Seconds)',
			60,
			0.01,
			'a number of seconds of at least 0.01',
		);
		const windowMs = windowSeconds * 1000;
		const redact = redactor(token);
		const callerKey = createHash('sha256')
			.update(`${key}\n${JSON.stringify(headers)}`)
			.digest('hex');
		return { callerKey, baseUrl, headers, limiter: limiterFor(key, limit, windowMs), redact };
	}

	/** Which service and caller this client talks to as (see Connection.callerKey): requests of one key may be shared. */
	async callerKey(): Promise<string> {
		return (await (this.connection ??= this.connect())).callerKey;
	}

	/** How far apart this caller's requests leave when spread evenly at its rate limit (1 s at 60 per minute). */
	async requestSpacingMs(): Promise<number> {
		return (await (this.connection ??= this.connect())).limiter.spacingMs;
	}

	private backoffMs(attempt: number): number {
		const exponential = this.retry.baseDelayMs * 2 ** (attempt - 1);
		// A little jitter keeps parallel executions from retrying in lockstep.
		return Math.min(this.retry.maxDelayMs, exponential) * (0.9 + Math.random() * 0.2);
	}

	async request<T = IDataObject>(request: ApiRequest): Promise<T> {
		const { baseUrl, headers, limiter, redact } = await (this.connection ??= this.connect());
		const node = this.ctx.getNode();
		const idempotent = request.idempotent ?? request.method !== 'POST';
		for (let attempt = 1; ; attempt++) {
			if (this.authFailure) throw this.authFailure;
			const release = await limiter.acquire();
			let response: IN8nHttpFullResponse;
			try {
				response = (await this.ctx.helpers.httpRequestWithAuthentication.call(
					this.ctx,
					CREDENTIAL_TYPE,
					{
						method: request.method,
						url: `${baseUrl}${request.path}`,
						qs: request.qs,
						body: request.body,
						headers,
						json: true,
						arrayFormat: 'repeat',
						timeout: 30000,
						returnFullResponse: true,
						ignoreHttpStatusErrors: true,
						// The token goes to the Base URL only: a redirect is answered with an error naming its target.
						disableFollowRedirect: true,
						sendCredentialsOnCrossOriginRedirect: false,
					},
				)) as IN8nHttpFullResponse;
			} catch (error) {
				release();
				const code = networkErrorCode(error);
				const context = { ...request, attempts: attempt, baseUrl };
				if (code === HOST_NOT_FOUND) throw hostNotFoundError(node, context);
				if (!code) {
					// Not a network failure: say what happened without passing on the raw error (it holds the headers).
					throw new NodeApiError(
						node,
						{ message: redact(String((error as Error)?.message ?? error)) },
						{
							message: redact(
								`${request.method} ${request.path} failed: ${(error as Error)?.message ?? error}`,
							),
							itemIndex: request.itemIndex,
						},
					);
				}
				if (!idempotent || attempt >= this.retry.maxAttempts)
					throw networkError(node, code, context);
				await sleep(this.backoffMs(attempt));
				continue;
			}
			const hinted = retryAfterMs(response.headers as IDataObject);
			// The status adapts the limiter: a 429 cuts this process's rate (it grows back with time).
			release(response.statusCode, hinted);

			const status = response.statusCode;
			if (status >= 200 && status < 300) return response.body as T;
			if (status >= 300 && status < 400) {
				const location = locationOf(response.headers as IDataObject);
				throw redirectError(node, status, location, { ...request, baseUrl }, redact);
			}

			const retryable = RETRIED_STATUSES.has(status) && (idempotent || status === 429);
			if (!retryable || attempt >= this.retry.maxAttempts) {
				const error = apiError(
					node,
					status,
					response.body,
					{ ...request, attempts: attempt },
					redact,
				);
				if (status === 401) this.authFailure = error;
				throw error;
			}
			// A 429 may ask for the rest of the rate-limit window, even when that is longer than the policy's longest wait.
			const longest =
				status === 429 ? limiter.longestWaitMs(this.retry.maxDelayMs) : this.retry.maxDelayMs;
			if (hinted !== undefined && hinted > longest) {
				// Waiting that long would hold this execution (and, for a 429, every execution sharing the token).
				throw retryLaterError(
					node,
					status,
					hinted,
					longest,
					response.body,
					{ ...request, attempts: attempt },
					redact,
				);
			}
			// Without Retry-After, a 429's waits grow to a whole window by the last attempt (see RateLimiter.throttleDelayMs).
			const delay =
				hinted ??
				(status === 429 ? limiter.throttleDelayMs(attempt, this.retry) : this.backoffMs(attempt));
			if (status === 429) limiter.pauseUntil(Date.now() + delay, hinted !== undefined);
			await sleep(delay);
		}
	}

	/** Follows `meta.next_cursor` until it is empty (spec 4.1), one page at a time. */
	async *pages(
		request: ApiRequest,
		pageSize: number,
		maxItems = Infinity,
	): AsyncGenerator<IDataObject[]> {
		let cursor: string | undefined;
		let fetched = 0;
		const cursorsSeen = new Set<string>();
		while (fetched < maxItems) {
			const qs: IDataObject = { ...request.qs, limit: Math.min(pageSize, maxItems - fetched) };
			if (cursor) qs.cursor = cursor;
			const page = await this.request<Page>({ ...request, qs });
			const items = Array.isArray(page?.items) ? page.items : [];
			fetched += items.length;
			yield items;
			const next = page?.meta?.next_cursor;
			// No self_cursor: the endpoint does not paginate (rule 3). A repeated cursor would loop forever.
			if (!next || !page.meta?.self_cursor || cursorsSeen.has(next) || items.length === 0) return;
			cursorsSeen.add(next);
			cursor = next;
		}
	}

	/** Every item (or the first `maxItems`), across pages, whatever page size the server really uses. */
	async list(request: ApiRequest, pageSize: number, maxItems = Infinity): Promise<IDataObject[]> {
		const all: IDataObject[] = [];
		for await (const items of this.pages(request, pageSize, maxItems)) all.push(...items);
		return all.slice(0, maxItems);
	}
}
