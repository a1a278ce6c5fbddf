/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// The benchmark's main usage measured in process (issue 44): N one-ticket executions of Create or Update by External ID
// on one credential, started in bunches as n8n starts a burst of webhooks, through n8n-core's real WorkflowExecute
// against the simulator at 60 requests per 60 s with its undocumented batch limit of 50 (as `npm run bench --
// --events`). It counts the requests and the time to the last execution's end, so that a change to the sharing layer
// can be compared with the build before it in a minute, without real n8n. On the virtual clock (the default) time
// moves only when every execution waits, so the figures are the lanes' alone and replay exactly; on the real clock
// (realClock) n8n-core's and the node's own work takes time too, as in real n8n (with 15 executions started a second:
// 18 requests in 21.7 s, where the benchmark on a quiet machine drew 16 in 21.8 s, 2026-11-28). Not a test: nothing is asserted.
import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { resetCallers } from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { installInProcessHttp, type InProcessHttp } from '../helpers/in-process-http';
import { runNode } from '../helpers/run-node';
import { VirtualClock } from './virtual-clock';

export interface BurstOptions {
	events: number;
	/** Executions started together, and how long after the bunch before them (0: all at once). */
	bunch: number;
	bunchGapMs: number;
	/** Each request's latency on the simulator. */
	latencyMs: number;
	/** The real clock and real HTTP instead of the virtual clock and the in-process transport. */
	realClock: boolean;
}

export interface BurstResult {
	requests: number;
	/** From the first start to the last execution's end. */
	drainMs: number;
	failed: number;
	stored: number;
	/** One line per request: seconds after the start, method, path, status, tasks it carried. */
	log: string[];
}

const TOKEN = 'burst-token';

const carried = (body: unknown): string => {
	const { items, condition } = (body ?? {}) as {
		items?: unknown[];
		condition?: { value?: unknown };
	};
	if (Array.isArray(items)) return String(items.length);
	return Array.isArray(condition?.value) ? String(condition.value.length) : '';
};

export async function runBurst(sim: Simulator, options: BurstOptions): Promise<BurstResult> {
	const clock = options.realClock ? undefined : new VirtualClock(1);
	const http: InProcessHttp | undefined = clock
		? installInProcessHttp((url) =>
				url.port === String(sim.port) ? (request) => sim.handle(request) : undefined,
			)
		: undefined;
	const nowMs = () => clock?.now ?? Date.now();
	try {
		resetCallers();
		sim.reset();
		sim.configure({
			tokens: [TOKEN],
			requestsPerWindow: 60,
			windowMs: 60_000,
			retryAfterOnLimit: false,
			readings: { maxBatchSize: 50, batchTooLarge: '413' },
			intercept: () => ({ delayMs: options.latencyMs }),
		});
		const start = nowMs();
		const execution = async (i: number) => {
			const at = Math.floor(i / Math.max(1, options.bunch)) * options.bunchGapMs;
			if (at > 0) await new Promise((resolve) => setTimeout(resolve, at));
			const result = await runNode({
				nodeType: new TaskBacklog(),
				parameters: {
					resource: 'task',
					operation: 'upsert',
					identifyBy: 'externalId',
					externalId: '={{ $json.id }}',
					title: '={{ $json.title }}',
				},
				items: [{ id: `BURST-${i}`, title: `Ticket ${i}` }],
				credentials: {
					type: 'taskBacklogApi',
					data: {
						baseUrl: sim.url,
						token: TOKEN,
						requestsPerMinute: 60,
						rateLimitWindowSeconds: 60,
					},
				},
				credentialType: new TaskBacklogApi(),
			});
			return { failed: result.error !== undefined, endMs: nowMs() - start };
		};
		const all = Promise.all(Array.from({ length: options.events }, (_, i) => execution(i)));
		let ends: Array<{ failed: boolean; endMs: number }>;
		if (clock) {
			const driven = await clock.run(all, 600_000);
			if ('stuck' in driven)
				throw new Error(`The burst did not end: ${driven.stuck} at ${driven.atMs} ms`);
			ends = driven.value;
		} else ends = await all;
		return {
			requests: sim.requests.length,
			drainMs: Math.max(...ends.map((end) => end.endMs)),
			failed: ends.filter((end) => end.failed).length,
			stored: sim.tasks.size,
			log: sim.requests.map(
				(r) =>
					`${((r.at - start) / 1000).toFixed(2)} ${r.method} ${r.path} ${r.status} ${carried(r.body)}`,
			),
		};
	} finally {
		http?.uninstall();
		clock?.uninstall();
		resetCallers();
		sim.configure({ intercept: undefined });
	}
}
