import { createHash } from 'crypto';
import type {
	ICredentialsDecrypted,
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

import type { RetryPolicy } from './errors';
import {
	apiError,
	backoffMs,
	DEFAULT_RETRY_POLICY,
	HOST_NOT_FOUND,
	hostNotFoundError,
	locationOf,
	networkError,
	networkErrorCode,
	redactAnswer,
	redirectError,
	RETRIED_STATUSES,
	retryAfterMs,
	retryLaterError,
} from './errors';
import type { LimiterHold, RateLimiter } from './rateLimiter';
import { limiterFor } from './rateLimiter';
import { now as clock } from '../callers/registry';
import {
	credentialNumber,
	hasUserInfo,
	isSecureEnough,
	normalizeBaseUrl,
	redactor,
	tokenAsSent,
	userInfoError,
	withoutUserInfo,
} from './credential';
import type { Redactor } from './credential';

/** The credential type's name, as credentials/TaskBacklogApi.credentials.ts declares it and saved workflows store it. */
export const CREDENTIAL_TYPE = 'taskBacklogApi';

export type BacklogContext =
	IExecuteFunctions | ILoadOptionsFunctions | IPollFunctions | IHookFunctions | IWebhookFunctions;

export type { RetryPolicy } from './errors';
export { DEFAULT_RETRY_POLICY } from './errors';

// Kept in step with package.json by a unit test: node code may not read package.json at run time.
export const PACKAGE_VERSION = '0.1.0';

export const USER_AGENT = `n8n-nodes-task-backlog/${PACKAGE_VERSION}`;

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
	/**
	 * Sent for several executions at once: a failure other than a 429 (the token's, waited out and sent again whole) is
	 * not retried here but thrown at once, so that the caller splits the request by execution and each part is retried
	 * under its own execution's policy (sharing/coalesce.ts Lane.split).
	 */
	shared?: boolean;
}

export interface Page {
	items: IDataObject[];
	meta?: { self_cursor?: string | null; next_cursor?: string | null; total_count?: number };
}

interface Connection {
	/**
	 * The credential as this client loaded it, handed to each request: n8n would otherwise read it from its database and
	 * decrypt it again for every request (a few milliseconds each), and every request of one client uses the same token.
	 */
	credentials: ICredentialsDecrypted;
	/**
	 * A hash of the base URL, the token and the headers that say who calls (account, versioning, acting user): the same
	 * for every execution that talks to the same service as the same caller, whose requests may therefore be shared.
	 */
	callerKey: string;
	baseUrl: string;
	headers: IDataObject;
	limiter: RateLimiter;
	/** This execution's hold on the limiter, from when it connects (before its first request) until done(). */
	hold: LimiterHold;
	/** Replaces the token wherever it might surface in a message or an answer. */
	redact: Redactor;
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
				`The Task Backlog API credential's Base URL "${withoutUserInfo(String(credentials.baseUrl ?? ''))}" is not an http(s) address`,
				{
					description:
						'Set it to the API address with its version prefix, e.g. https://api.example.com/api/v1.',
				},
			);
		}
		if (hasUserInfo(baseUrl)) throw userInfoError(this.ctx.getNode(), baseUrl);
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
		// Per-token keys are made of the token as sent, as the limiter's is: one caller however the token was saved.
		const key = createHash('sha256')
			.update(`${baseUrl}\n${tokenAsSent(token)}`)
			.digest('hex');
		const limit = credentialNumber(
			this.ctx.getNode(),
			credentials.requestsPerMinute,
			'Requests per Minute',
			60,
			1,
			'a number of 1 or more',
		);
		const windowSeconds = credentialNumber(
			this.ctx.getNode(),
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
		const hold = limiterFor(token, limit, windowMs);
		const { id, name } = this.ctx.getNode().credentials?.[CREDENTIAL_TYPE] ?? {};
		return {
			credentials: { id: id ?? '', name: name ?? '', type: CREDENTIAL_TYPE, data: credentials },
			callerKey,
			baseUrl,
			headers,
			limiter: hold.limiter,
			hold,
			redact,
		};
	}

	/**
	 * Starts loading the credential (n8n reads it from its database and decrypts it) while the caller reads its items,
	 * so the first request does not wait for it. Sends nothing; a failure surfaces at the first request, as without it.
	 */
	prepare(): void {
		this.connected().catch(() => undefined);
	}

	/**
	 * The execution is over: it no longer holds the token's limiter, which the process may then forget once idle
	 * (callers/registry.ts). Call it when the client's last request has finished.
	 */
	done(): void {
		void this.connection?.then(
			(connection) => connection.hold.release(),
			() => undefined,
		);
	}

	/** The connection, made on first use (one per client). */
	private connected(): Promise<Connection> {
		return (this.connection ??= this.connect());
	}

	/**
	 * What the node outputs, with every form of the token replaced: a success can echo it too. Applied to the output
	 * rather than to each answer, so that what the node compares and writes back is what the service holds. Returned
	 * as is when the credential could not be loaded (nothing was sent).
	 */
	async redactOutput<T>(value: T): Promise<T> {
		const connection = await this.connected().catch(() => undefined);
		return connection ? (redactAnswer(value, connection.redact) as T) : value;
	}

	/** Which service and caller this client talks to as (see Connection.callerKey): requests of one key may be shared. */
	async callerKey(): Promise<string> {
		return (await this.connected()).callerKey;
	}

	/** How far apart this caller's requests leave when spread evenly at its rate limit (1 s at 60 per minute). */
	async requestSpacingMs(): Promise<number> {
		return (await this.connected()).limiter.spacingMs;
	}

	/** The wait before retry `attempt + 1` under this client's policy. */
	backoffMs(attempt: number): number {
		return backoffMs(this.retry, attempt);
	}

	async request<T = IDataObject>(request: ApiRequest): Promise<T> {
		const { credentials, baseUrl, headers, limiter, redact } = await this.connected();
		const node = this.ctx.getNode();
		const idempotent = request.idempotent ?? request.method !== 'POST';
		for (let attempt = 1; ; attempt++) {
			if (this.authFailure) throw this.authFailure;
			const release = await limiter.acquire();
			// A retry after a 429 waits for its pause inside acquire(): a 401 may have come meanwhile.
			if (this.authFailure) {
				release();
				throw this.authFailure;
			}
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
					{ credentialsDecrypted: credentials },
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
				if (!idempotent || request.shared === true || attempt >= this.retry.maxAttempts)
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

			const retryable =
				RETRIED_STATUSES.has(status) && (status === 429 || (idempotent && request.shared !== true));
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
			if (status === 429) {
				// The pause holds every request on the token, this one too: the next acquire() waits for it. Reserving at
				// once (no await before it) keeps this request ahead of those whose reservations the pause took back.
				limiter.pauseUntil(clock() + delay, hinted !== undefined);
				continue;
			}
			await sleep(delay);
		}
	}

	/**
	 * Follows `meta.next_cursor` until it is empty (spec 4.1), one page at a time. `onMeta` sees each page's `meta`
	 * before the page is yielded.
	 */
	async *pages(
		request: ApiRequest,
		pageSize: number,
		maxItems = Infinity,
		onMeta?: (meta: Page['meta']) => void,
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
			onMeta?.(page?.meta);
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

// Whether n8n cancelled the execution a client works for: the batches and the shared lanes ask before sending.

/** n8n's cancel signal of the client's execution (only an execution has one). */
export function cancelSignal({ ctx }: BacklogClient): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal() : undefined;
}

/** Whether n8n has cancelled the owner's execution. */
export function isCancelled(owner: BacklogClient): boolean {
	return cancelSignal(owner)?.aborted === true;
}

export function cancelled(owner: BacklogClient): Error {
	return new NodeOperationError(
		owner.ctx.getNode(),
		'The execution was cancelled before its requests were sent',
	);
}
