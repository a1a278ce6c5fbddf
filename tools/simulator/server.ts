/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, no-console -- tool code, never ships */
// The HTTP server: every request is logged, then (under /api/v1) authenticated, counted against its token's window,
// exposed to faults, routed and answered; /_sim goes to the control routes.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { API_PREFIX, HttpError, httpError, isUuid, msgIssue, unprocessable } from './helpers';
import { control } from './control';
import { applyFaults, rateLimit, refuseContent } from './faults';
import { readBody, send, sendError, takeToken } from './plumbing';
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

async function handle(
	store: Store,
	req: http.IncomingMessage,
	res: http.ServerResponse,
): Promise<void> {
	const method = (req.method ?? 'GET').toUpperCase();
	const url = new URL(req.url ?? '/', 'http://127.0.0.1');
	if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
		await control(store, req, res, url);
		return;
	}
	const isApi = url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`);
	const path = isApi ? url.pathname.slice(API_PREFIX.length) || '/' : url.pathname;
	const entry: LoggedRequest = {
		method,
		path,
		query: queryRecord(url.searchParams),
		status: 0,
		at: Date.now(),
		headers: { ...req.headers },
	};
	store.requests.push(entry);
	res.on('finish', () => {
		entry.status = res.statusCode;
	});

	let raw: string;
	try {
		raw = await readBody(req, store.opts.maxBodyBytes);
	} catch (e) {
		if (e instanceof HttpError) throw e;
		return; // the client went away mid-body
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
	const token = takeToken(req.headers.authorization);
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
		if (store.stopped || res.destroyed) return;
	}
	rateLimit(store, token);
	// 3. scripted and random faults, then refused contents, before any side effect
	const outcome = await applyFaults(store, req, res, entry);
	if (outcome === 'gone') return;
	if (bodyError) throw httpError(400, 'Invalid JSON body');
	refuseContent(store, entry, body);
	const intercepted = store.opts.intercept?.({ method, path, query: entry.query, body });
	if (intercepted) {
		if (intercepted.delayMs) await store.sleep(intercepted.delayMs);
		if (store.stopped || res.destroyed) return;
		if (intercepted.status === 'reset') {
			entry.fault = 'intercepted-reset';
			req.socket.destroy();
			return;
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
	const su = req.headers['service-user'];
	if (typeof su === 'string' && su !== '' && !isUuid(su))
		throw unprocessable([msgIssue(['header', 'service-user'], 'uuid')]);

	// 4. another caller's writes while this request is under way (Simulator.meanwhile)
	const other = store.meanwhile.findIndex((m) =>
		m.when({ method, path, body, query: entry.query }),
	);
	if (other >= 0) {
		await store.meanwhile.splice(other, 1)[0].action();
		if (store.stopped || res.destroyed) return;
	}

	const seg = path.split('/').filter(Boolean);
	const r = route(store, { method, seg, sp: url.searchParams, body, token, headers: req.headers });
	if (outcome === 'cutAfterEffect') {
		entry.fault = 'reset-after-effect';
		req.socket.destroy();
		return;
	}
	send(res, r.status ?? 200, r.body);
}

/** Listens on 127.0.0.1 (`opts.port`, 0 = a free port) and serves the store. */
export async function listen(store: Store): Promise<{ server: http.Server; port: number }> {
	const server = http.createServer((req, res) => {
		handle(store, req, res).catch((e: unknown) => {
			if (e instanceof HttpError) sendError(store, res, e);
			else {
				console.error('simulator: internal error', e);
				sendError(
					store,
					res,
					httpError(500, `Simulator internal error: ${(e as Error)?.message ?? String(e)}`),
				);
			}
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
