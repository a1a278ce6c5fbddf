/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// The simulator's control routes under /_sim (state, request log, reset, configure, seed, flush, options): what tests
// and the demo use to look inside and steer it over HTTP.
import type * as http from 'node:http';

import { HttpError, isPlainObject } from './helpers';
import { readBody, send } from './plumbing';
import type { Store } from './store';
import { seedTasks } from './tasks';
import type { SimulatorOptions } from './types';

export const control = async (
	store: Store,
	req: http.IncomingMessage,
	res: http.ServerResponse,
	url: URL,
): Promise<void> => {
	const method = req.method ?? 'GET';
	const name = url.pathname.replace(/^\/_sim\/?/, '').replace(/\/$/, '');
	let body: unknown;
	let raw: string;
	try {
		raw = await readBody(req);
	} catch (e) {
		if (e instanceof HttpError) throw e;
		return;
	}
	if (raw.trim()) {
		try {
			body = JSON.parse(raw);
		} catch {
			send(res, 400, { message: 'Invalid JSON body' });
			return;
		}
	}
	if (method === 'GET' && name === 'state') {
		send(res, 200, {
			counts: {
				tasks: store.tasks.size,
				comments: store.comments.size,
				requests: store.requests.length,
				deliveries: store.deliveries.length,
			},
			tasks: [...store.tasks.values()],
			comments: [...store.comments.values()],
			deliveries: store.deliveries,
		});
	} else if (method === 'GET' && name === 'requests') {
		const since = Math.max(0, Number(url.searchParams.get('since') ?? 0) || 0);
		send(res, 200, { total: store.requests.length, requests: store.requests.slice(since) });
	} else if (method === 'DELETE' && name === 'requests') {
		store.requests.length = 0;
		send(res, 200, { ok: true });
	} else if (method === 'POST' && name === 'reset') {
		store.reset();
		send(res, 200, { ok: true });
	} else if (method === 'POST' && name === 'configure') {
		if (!isPlainObject(body)) {
			send(res, 400, { message: 'Expected a JSON object of options' });
			return;
		}
		const o = { ...body } as Partial<SimulatorOptions>;
		if (o.faults) delete o.faults.only;
		const refusals = refusalErrors(o.refuseContent);
		if (refusals) {
			send(res, 400, { message: refusals });
			return;
		}
		try {
			store.configure(o);
		} catch (e) {
			send(res, 400, { message: (e as Error).message });
			return;
		}
		send(res, 200, { options: store.jsonOptions() });
	} else if (method === 'POST' && name === 'seed') {
		const b = isPlainObject(body) ? body : {};
		const n = Number(b.n ?? 0);
		if (!Number.isInteger(n) || n < 0) {
			send(res, 400, { message: 'n must be a non-negative integer' });
			return;
		}
		const fields = isPlainObject(b.fields) ? b.fields : {};
		try {
			send(res, 200, { items: seedTasks(store, n, () => ({ fields })) });
		} catch (e) {
			send(res, 400, { message: (e as Error).message });
		}
	} else if (method === 'POST' && name === 'flush') {
		await store.flushDeliveries();
		send(res, 200, { deliveries: store.deliveries.length });
	} else if (method === 'GET' && name === 'options') {
		send(res, 200, { options: store.jsonOptions() });
	} else {
		send(res, 404, { message: 'Unknown simulator control route' });
	}
};

/**
 * Why `refuseContent` as sent to /_sim/configure is not what the service can refuse with (undefined when it is): a
 * list of texts, each a string or `{ text, status, message? }` (types.ts ContentRefusal) with an error status.
 */
function refusalErrors(value: unknown): string | undefined {
	if (value === undefined) return undefined;
	if (!Array.isArray(value)) return 'refuseContent must be a list';
	for (const [i, refusal] of value.entries()) {
		if (typeof refusal === 'string') continue;
		if (!isPlainObject(refusal) || typeof refusal.text !== 'string')
			return `refuseContent[${i}] must be a text or { text, status, message? }`;
		const { status, message } = refusal;
		if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 599)
			return `refuseContent[${i}].status must be an error status (400 to 599)`;
		if (message !== undefined && typeof message !== 'string')
			return `refuseContent[${i}].message must be a text`;
	}
	return undefined;
}
