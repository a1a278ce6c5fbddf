// Simulator of the Task Backlog Service (backlog-api.md, filled in with facts.md and our own choices where the spec
// says "not shown"). A real HTTP server on 127.0.0.1 built on node:http only, so it can run inside jest, in the demo
// and as a benchmark target without any dependency; `handle` serves the same requests without a socket (the seeded
// simulation's transport).
//
// The modules, from the outside in: server.ts (logging, auth, rate limit and faults, then routes.ts), control.ts
// (the /_sim routes), tasks.ts, batch.ts, listing.ts and comments.ts (the endpoints), store.ts (the state),
// validation.ts and pagination.ts, webhooks.ts, readings.ts (the spec's open points) and query.ts (condition trees).
import { API_PREFIX, MAX_BODY_BYTES, httpError } from './helpers';
import { exchange, listen, type Exchange } from './server';
import { Store } from './store';
import { seedTasks } from './tasks';
import type { ScriptedFault, Simulator, SimulatorOptions } from './types';

export type { Condition, Issue, Sort } from './query';
export {
	LENIENT_READINGS,
	STRICT_READINGS,
	READING_NAMES,
	readingsFor,
	type Profile,
	type Readings,
} from './readings';
export type * from './types';
export {
	API_PREFIX,
	COMMENT_EXPANDS,
	STATUSES,
	TASK_EXPANDS,
	isUuid,
	uuidFromName,
} from './helpers';
export { validateTaskBody } from './validation';

/** Counts logged requests by method ('*' for any) and path (exact string or RegExp), e.g. countRequests(sim, 'PUT', '/tasks/batch'). */
export function countRequests(
	sim: Pick<Simulator, 'requests'>,
	method: string,
	pathPattern: string | RegExp,
): number {
	return sim.requests.filter(
		(r) =>
			(method === '*' || r.method === method.toUpperCase()) &&
			(typeof pathPattern === 'string' ? r.path === pathPattern : pathPattern.test(r.path)),
	).length;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
	const store = new Store(options);
	const { server, port } = await listen(store);

	const sim: Simulator = {
		url: `http://127.0.0.1:${port}${API_PREFIX}`,
		port,
		requests: store.requests,
		tasks: store.tasks,
		comments: store.comments,
		deliveries: store.deliveries,
		get options() {
			return store.opts;
		},
		configure: (o) => store.configure(o),
		reset: () => store.reset(),
		seedTasks: (n, make) => seedTasks(store, n, make),
		clearRequests: () => {
			store.requests.length = 0;
		},
		flushDeliveries: () => store.flushDeliveries(),
		failNext: (...faults: ScriptedFault[]) => {
			store.scriptedFaults.push(...faults);
		},
		meanwhile: (when, action) => {
			store.meanwhile.push({ when, action });
		},
		handle: (request) => {
			const body = request.body ?? '';
			const gone = request.gone ?? (() => false);
			return exchange(store, {
				method: request.method,
				url: request.url,
				headers: request.headers as Exchange['headers'],
				// As readBody over a socket: past the server's body limit a 413 (past MAX_BODY_BYTES the socket is cut
				// there, which a client sees as an error too).
				readBody: async (limit = MAX_BODY_BYTES) => {
					if (Buffer.byteLength(body) > Math.min(limit, MAX_BODY_BYTES))
						throw httpError(413, 'Request body too large');
					return body;
				},
				gone,
			});
		},
		stop: async () => {
			if (store.stopped) return;
			store.stop();
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			server.closeAllConnections();
			store.webhooks.destroy();
			await closed;
		},
	};
	return sim;
}
