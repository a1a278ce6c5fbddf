/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// One client process of test/scale-out/processes.test.ts (run from its compiled copy in .build/): the Task
// Backlog node, through n8n-core's execution engine and its real HTTP helper (test/helpers/run-node.ts), getting one
// task once per input item over a credential shared with the other processes. Each process has its own module state,
// so its own rate limiter, exactly as an n8n queue-mode worker has.
//
// argv[2]: the job as JSON (ClientJob). Prints "ready" once loaded, starts on a line "go" on stdin, prints one line
// of JSON (ClientResult) when done, then exits.
import { createInterface } from 'readline';

import { byId, runBacklog } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

export interface ClientJob {
	url: string;
	token: string;
	/** sent as the service-account header: tells the processes apart in the simulator's log */
	account: string;
	uid: string;
	requests: number;
	requestsPerMinute: number;
	rateLimitWindowSeconds: number;
	retryDelayMs: number;
	maxAttempts: number;
	/** ms to wait after "go" before the first request (a late starter) */
	startDelayMs?: number;
}

export interface ClientResult {
	account: string;
	ok: boolean;
	error?: string;
	items: number;
	startedAt: number;
	endedAt: number;
}

async function main() {
	const job = JSON.parse(process.argv[2]) as ClientJob;
	// Load the node and n8n-core before saying ready, so that every process starts sending at the same moment.
	const lines = createInterface({ input: process.stdin });
	const go = new Promise<void>((resolve) =>
		lines.on('line', (line) => line.trim() === 'go' && resolve()),
	);
	process.stdout.write('ready\n');
	await go;
	lines.close();
	if (job.startDelayMs) await new Promise((resolve) => setTimeout(resolve, job.startDelayMs));
	const startedAt = Date.now();
	const run = await runBacklog(
		{ url: job.url } as Simulator,
		{
			resource: 'task',
			operation: 'get',
			task: byId(job.uid),
			requestOptions: { retryDelayMs: job.retryDelayMs, maxAttempts: job.maxAttempts },
		},
		{
			items: Array.from({ length: job.requests }, () => ({})),
			credentials: {
				token: job.token,
				account: job.account,
				requestsPerMinute: job.requestsPerMinute,
				rateLimitWindowSeconds: job.rateLimitWindowSeconds,
			},
		},
	);
	const result: ClientResult = {
		account: job.account,
		ok: !run.error,
		error: run.error ? String(run.error.message) : undefined,
		items: run.json.length,
		startedAt,
		endedAt: Date.now(),
	};
	process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
	() => process.exit(0),
	(error: Error) => {
		process.stderr.write(`${error.stack ?? error}\n`);
		process.exit(1);
	},
);
