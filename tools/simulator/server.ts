/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, no-console -- tool code, never ships */
// The HTTP server and the in-process transport share one path: every request is logged, then (under /api/v1)
// authenticated, counted against its token's window, exposed to faults, routed and answered (exchange()). The HTTP
// server adds the sockets and the /_sim control routes; the seeded simulation calls exchange() without sockets.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { API_PREFIX, HttpError, httpError, isUuid, msgIssue, unprocessable } from './helpers';
import { control } from './control';
import { applyFaults, rateLimit, refuseContent } from './faults';
import { answer, errorAnswer, readBody, takeToken, write, type Answer } from './plumbing';
import { route } from './routes';
import type { Store } from './store';
import type { LoggedRequest } from './types';

function queryRecord(sp: URLSearchParams): Record<string, string | string[]> {
	const out: Record<string, string | string[]> = {};
	for (const [k, v] of sp) {
		const prev = out[k];
		if (prev === undefined) out[k] = v;
		else out[k] = Array.isArray(prev) ? [...prev, v] : [prev, v];
	}
	return out;
}

/** One request as it reaches the server, from a socket or from the in-process transport. */
export interface Exchange {
	method: string;
	/** The path and query, e.g. `/api/v1/tasks?limit=5`. */
	url: string;
	/** Lower-case names, as node:http gives them. */
	headers: http.IncomingHttpHeaders;
	/**
	 * The body as text: rejects with a 413 HttpError past `limit` (SimulatorOptions.maxBodyBytes), with anything else
	 * when the client went away mid-body.
	 */
	readBody: (limit?: number) => Promise<string>;
	/** Whether the client has gone (its connection closed): nothing more is done for it. */
	gone: () => boolean;
}

/** What the server does with a request: an answer, cutting the connection, or nothing (the client has gone). */
export type Outcome = Answer | 'reset' | 'gone';

/** Handles one request under /api/v1 (or answers 404 elsewhere); never throws. */
export async function exchange(store: Store, ex: Exchange): Promise<Outcome> {
	let entry: LoggedRequest | undefined;
	let outcome: Outcome;
	try {
		outcome = await handle(store, ex, (logged) => (entry = logged));
	} catch (e) {
		if (e instanceof HttpError) outcome = errorAnswer(store, e);
		else {
			console.error('simulator: internal error', e);
			outcome = errorAnswer(
				store,
				httpError(500, `Simulator internal error: ${(e as Error)?.message ?? String(e)}`),
			);
		}
	}
	if (typeof outcome === 'object' && entry && !ex.gone()) entry.status = outcome.status;
	return outcome;
}

async function handle(
	store: Store,
	ex: Exchange,
	logged: (entry: LoggedRequest) => void,
): Promise<Outcome> {
	const method = ex.method.toUpperCase();
	const url = new URL(ex.url, 'http://127.0.0.1');
	const isApi = url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`);
	const path = isApi ? url.pathname.slice(API_PREFIX.length) || '/' : url.pathname;
	const entry: LoggedRequest = {
		method,
		path,
		query: queryRecord(url.searchParams),
		status: 0,
		at: Date.now(),
		headers: { ...ex.headers },
	};
	store.requests.push(entry);
	logged(entry);

	let raw: string;
	try {
		raw = await ex.readBody(store.opts.maxBodyBytes);
	} catch (e) {
		if (e instanceof HttpError) throw e;
		return 'gone'; // the client went away mid-body
	}
	let body: unknown;
	let bodyError = false;
	if (raw.trim()) {
		try {
			body = JSON.parse(raw);
			entry.body = body;
		} catch {
			entry.body = raw;
			bodyError = true;
		}
	}
	if (!isApi) throw httpError(404, 'Not Found');

	// 1. auth, before anything is counted
	const token = takeToken(ex.headers.authorization);
	if (!token || !(store.opts.tokens ?? []).includes(token)) {
		throw new HttpError(
			401,
			{ message: 'Invalid or missing bearer token' },
			{ 'www-authenticate': 'Bearer' },
		);
	}
	// 2. fixed-window rate limit per token, counted when the request arrives (late, with `arrivalDelayMs`)
	const arrival = store.opts.faults?.arrivalDelayMs;
	if (arrival && (store.opts.faults?.only?.({ method, path }) ?? true)) {
		await store.sleep(arrival[0] + Math.random() * Math.max(0, arrival[1] - arrival[0]));
		if (store.stopped || ex.gone()) return 'gone';
	}
	rateLimit(store, token);
	// 3. scripted and random faults, then refused contents, before any side effect
	const faulted = await applyFaults(store, entry, ex.gone);
	if (faulted === 'gone' || faulted === 'reset') return faulted;
	if (bodyError) throw httpError(400, 'Invalid JSON body');
	refuseContent(store, entry, body);
	const intercepted = store.opts.intercept?.({ method, path, query: entry.query, body });
	if (intercepted) {
		if (intercepted.delayMs) await store.sleep(intercepted.delayMs);
		if (store.stopped || ex.gone()) return 'gone';
		if (intercepted.status === 'reset') {
			entry.fault = 'intercepted-reset';
			return 'reset';
		}
		if (intercepted.status !== undefined) {
			entry.fault = `intercepted-${intercepted.status}`;
			throw new HttpError(
				intercepted.status,
				intercepted.body ?? { message: `Intercepted ${intercepted.status}` },
				intercepted.headers,
				intercepted.body !== undefined,
			);
		}
	}
	const su = ex.headers['service-user'];
	if (typeof su === 'string' && su !== '' && !isUuid(su))
		throw unprocessable([msgIssue(['header', 'service-user'], 'uuid')]);

	// 4. another caller's writes while this request is under way (Simulator.meanwhile)
	const other = store.meanwhile.findIndex((m) =>
		m.when({ method, path, body, query: entry.query }),
	);
	if (other >= 0) {
		await store.meanwhile.splice(other, 1)[0].action();
		if (store.stopped || ex.gone()) return 'gone';
	}

	const seg = path.split('/').filter(Boolean);
	const r = route(store, { method, seg, sp: url.searchParams, body, token, headers: ex.headers });
	if (faulted === 'cutAfterEffect') {
		entry.fault = 'reset-after-effect';
		return 'reset';
	}
	return answer(r.status ?? 200, r.body);
}

/** Listens on 127.0.0.1 (`opts.port`, 0 = a free port) and serves the store. */
export async function listen(store: Store): Promise<{ server: http.Server; port: number }> {
	const server = http.createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
			control(store, req, res, url).catch((e: unknown) => send500(store, res, e));
			return;
		}
		void exchange(store, {
			method: req.method ?? 'GET',
			url: req.url ?? '/',
			headers: req.headers,
			readBody: (limit) => readBody(req, limit),
			gone: () => res.destroyed,
		}).then((outcome) => {
			if (outcome === 'reset') req.socket.destroy();
			else if (outcome !== 'gone') write(res, outcome);
		});
	});
	server.keepAliveTimeout = 5000;

	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(store.opts.port ?? 0, '127.0.0.1', () => {
			server.off('error', reject);
			resolve();
		});
	});
	return { server, port: (server.address() as AddressInfo).port };
}

/** A control route's error answer (the API's are exchange()'s). */
function send500(store: Store, res: http.ServerResponse, e: unknown): void {
	if (!(e instanceof HttpError)) console.error('simulator: internal error', e);
	const error =
		e instanceof HttpError
			? e
			: httpError(500, `Simulator internal error: ${(e as Error)?.message ?? String(e)}`);
	write(res, errorAnswer(store, error));
}
