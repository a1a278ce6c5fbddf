/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// A transport without sockets, for the seeded simulation (issue 44, item 2): the one place where one is right, as a
// seed must replay exactly and fast. It replaces only what lies below axios: n8n-core's request helpers
// (httpRequestWithAuthentication: the credential's authenticate, removeEmptyBody, the cancel signal, the NodeApiError
// it wraps a failure in), @n8n/backend-network's conversion of n8n's options to axios (qs and arrayFormat, Accept, the
// User-Agent, validateStatus from ignoreHttpStatusErrors) and axios itself (the JSON body, parsing the answer, the
// AxiosError of a status a request does not ignore) all run as they do over HTTP. The adapter hands the request to an
// in-process server (the simulator's Simulator.handle) and turns what it does into what axios's http adapter gives:
// a response, `socket hang up` (ECONNRESET) for a cut connection, `canceled` when n8n aborts the execution, and
// `timeout of N ms exceeded` (ECONNABORTED) past the request's timeout, on whatever clock setTimeout is (the
// simulation's virtual one).
import { STATUS_CODES } from 'node:http';

// axios is n8n's (n8n-core and n8n-workflow send through it), not a package of this project: the one copy npm
// installs for them, which the adapter below must reach (in-process-http.test.ts fails when it does not).
import axios, {
	AxiosError,
	AxiosHeaders,
	CanceledError,
	type AxiosAdapter,
	type AxiosResponse,
	type InternalAxiosRequestConfig,
} from 'axios';

import type { InProcessOutcome, InProcessRequest } from '../../tools/simulator/simulator';

/** The in-process server for a URL, or undefined when none serves it (the request then fails as refused). */
export type InProcessRoute = (
	url: URL,
) => ((request: InProcessRequest) => Promise<InProcessOutcome>) | undefined;

export interface InProcessHttp {
	/** Requests handed over and not yet answered, cut or abandoned. */
	readonly inFlight: number;
	/** Puts axios's own adapter back. */
	uninstall(): void;
}

/** The headers as the server would read them off the socket (names in lower case, in the order axios sends them). */
function headersOf(config: InternalAxiosRequestConfig, url: URL, body: string) {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(AxiosHeaders.from(config.headers).toJSON(true)))
		headers[name.toLowerCase()] = value;
	if (body) headers['content-length'] = String(Buffer.byteLength(body));
	headers['accept-encoding'] ??= 'gzip, compress, deflate, br';
	headers.host = url.host;
	headers.connection = 'close';
	return headers;
}

/** What axios's http adapter rejects with when the request's signal aborts (its typings give it AxiosError's constructor). */
const canceled = (config: InternalAxiosRequestConfig, request: unknown): AxiosError =>
	new (
		CanceledError as unknown as new (
			message: string | undefined,
			config: InternalAxiosRequestConfig,
			request: unknown,
		) => AxiosError
	)(undefined, config, request);

function bodyOf(data: unknown): string {
	if (data === undefined || data === null) return '';
	if (typeof data === 'string') return data;
	if (Buffer.isBuffer(data)) return data.toString('utf8');
	// axios's transformRequest has made JSON text of an object body by now; anything else is sent as JSON too.
	return JSON.stringify(data);
}

/**
 * Sends every request of axios's default instance (the one n8n-core uses) to `route`'s server, in this process.
 * A URL no server takes fails as a refused connection: nothing leaves the process.
 */
export function installInProcessHttp(route: InProcessRoute): InProcessHttp {
	const previous = axios.defaults.adapter;
	let inFlight = 0;
	const adapter: AxiosAdapter = (config) => {
		const url = new URL(axios.getUri(config));
		const serve = route(url);
		const request = { method: config.method?.toUpperCase() ?? 'GET', url: url.href };
		const signal = config.signal as AbortSignal | undefined;
		if (signal?.aborted) return Promise.reject(canceled(config, request));
		if (!serve) {
			const cause = Object.assign(new Error(`connect ECONNREFUSED ${url.host}`), {
				code: 'ECONNREFUSED',
			});
			return Promise.reject(AxiosError.from(cause, 'ECONNREFUSED', config, request));
		}
		const body = bodyOf(config.data);
		return new Promise<AxiosResponse>((resolve, reject) => {
			let over = false;
			let timer: ReturnType<typeof setTimeout> | undefined;
			inFlight++;
			const end = () => {
				over = true;
				inFlight--;
				if (timer !== undefined) clearTimeout(timer);
				signal?.removeEventListener('abort', onAbort);
			};
			const onAbort = () => {
				if (over) return;
				end();
				reject(canceled(config, request));
			};
			signal?.addEventListener('abort', onAbort, { once: true });
			if (config.timeout)
				timer = setTimeout(() => {
					if (over) return;
					end();
					const code = config.transitional?.clarifyTimeoutError
						? AxiosError.ETIMEDOUT
						: AxiosError.ECONNABORTED;
					reject(
						new AxiosError(
							config.timeoutErrorMessage ?? `timeout of ${config.timeout}ms exceeded`,
							code,
							config,
							request,
						),
					);
				}, config.timeout);
			serve({
				method: request.method,
				url: `${url.pathname}${url.search}`,
				headers: headersOf(config, url, body),
				...(body && { body }),
				gone: () => over,
			}).then(
				(outcome) => {
					if (over) return; // aborted or timed out: the client has already failed
					end();
					if (outcome === 'gone') return;
					if (outcome === 'reset') {
						const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
						reject(AxiosError.from(cause, 'ECONNRESET', config, request));
						return;
					}
					const response: AxiosResponse = {
						data: outcome.body,
						status: outcome.status,
						statusText: STATUS_CODES[outcome.status] ?? '',
						headers: AxiosHeaders.from(outcome.headers),
						config,
						request,
					};
					// What axios's settle() does for its own adapters.
					if (!config.validateStatus || config.validateStatus(outcome.status)) resolve(response);
					else
						reject(
							new AxiosError(
								`Request failed with status code ${outcome.status}`,
								outcome.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST,
								config,
								request,
								response,
							),
						);
				},
				(error: unknown) => {
					if (over) return;
					end();
					reject(error);
				},
			);
		});
	};
	axios.defaults.adapter = adapter;
	return {
		get inFlight() {
			return inFlight;
		},
		uninstall() {
			if (axios.defaults.adapter === adapter) axios.defaults.adapter = previous;
		},
	};
}
