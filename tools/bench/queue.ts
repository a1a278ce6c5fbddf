/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// `npm run bench -- --queue`: the scale-out run of issue 14 in n8n's queue mode, on real parts (Debian's redis-server,
// n8n 2.x main + workers sharing a sqlite user folder, the packed package), at the service's real 60 s window by
// default: 4 executions at once, each upserting its own tickets over one token, against the simulator allowing 60
// requests per window with an undocumented batch limit of 50. Reported at 1 worker and at 4 workers: 429 share, time
// from the first to the last request against the one-token floor, tickets lost and duplicated.
// Wall time at the real minute: a few minutes per row (the floor of 4 × 2,500 tickets is 4 minutes), plus about a
// minute to start each cluster.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { fail, readArgs, type FlagKind } from '../cli/args';
import { describeVersions, disposeAll, ensureN8n, N8nUserFolder, packPackage } from '../n8n/n8n';
import type { ScaleOutResult } from '../n8n/queue';
import {
	QUEUE_WEBHOOK_PATH,
	describeScaleOut,
	runScaleOut,
	scaleOutWorkflow,
	startQueueCluster,
} from '../n8n/queue';
import { ensureRedis, startRedis } from '../n8n/redis';
import { startSimulator } from '../simulator/simulator';
import * as W from '../n8n/workflows';

export const QUEUE_USAGE = `npm run bench -- --queue [flags]: issue 14's scale-out run in n8n queue mode (Redis, main + workers),
at the real 60 s window unless told otherwise. Prints a table; writes <out>/queue.json.

  --queue-workers 1,4        worker counts to run (a fresh main + workers for each row)
  --queue-sizes 1000,2500    tickets per execution
  --queue-executions 4       executions started at once (one webhook call each)
  --queue-concurrency N      each worker's --concurrency (default: 10, n8n's own, with one worker, so the executions
                             share its process; 1 with several, so that each runs on a worker of its own)
  --queue-rpm 60             the credential's Requests per Minute, which every worker reads as its own budget: 60
                             (the service's limit) has the workers learn their shares from 429s; the limit divided by
                             the workers (15 for 4) is the README's setting for no 429 at all
  --window-ms 60000          the server's window and the credential's Rate Limit Window
  --retry-delay-ms N         the node's Retry Delay (default 2000 scaled with the window: 2000 × window / 60 s)
  --out bench-results        where to write queue.json
`;

const LIMIT = 60;
const TOKEN = `bench-queue-token-${process.pid}`;
const log = (line: string) => process.stderr.write(`[bench:queue] ${line}\n`);

interface QueueOptions {
	workers: number[];
	sizes: number[];
	executions: number;
	concurrency?: number;
	requestsPerMinute: number;
	windowMs: number;
	retryDelayMs?: number;
	out: string;
}

const QUEUE_FLAGS: Record<string, FlagKind> = {
	'--queue': 'switch',
	'--queue-workers': 'value',
	'--queue-sizes': 'value',
	'--queue-executions': 'value',
	'--queue-concurrency': 'value',
	'--queue-rpm': 'value',
	'--window-ms': 'value',
	'--retry-delay-ms': 'value',
	'--out': 'value',
};

function parseQueueArgs(argv: string[]): QueueOptions {
	const options: QueueOptions = {
		workers: [1, 4],
		sizes: [1000, 2500],
		executions: 4,
		requestsPerMinute: LIMIT,
		windowMs: 60_000,
		out: path.resolve(__dirname, '..', '..', '..', 'bench-results'),
	};
	readArgs(argv, { usage: QUEUE_USAGE, flags: QUEUE_FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--queue-workers':
				options.workers = arg.numbers();
				break;
			case '--queue-sizes':
				options.sizes = arg.numbers();
				break;
			case '--queue-executions':
				options.executions = arg.number();
				break;
			case '--queue-concurrency':
				options.concurrency = arg.number();
				break;
			case '--queue-rpm':
				options.requestsPerMinute = arg.int(1, LIMIT);
				break;
			case '--window-ms':
				options.windowMs = arg.number();
				break;
			case '--retry-delay-ms':
				options.retryDelayMs = arg.number();
				break;
			case '--out':
				options.out = path.resolve(arg.text());
				break;
		}
	});
	const whole = [...options.workers, ...options.sizes, options.executions];
	if (whole.some((n) => !Number.isInteger(n) || n < 1))
		fail(
			'--queue-workers, --queue-sizes and --queue-executions take whole numbers ≥ 1',
			QUEUE_USAGE,
		);
	return options;
}

interface Row extends ScaleOutResult {
	concurrency: number;
	windowMs: number;
	retryDelayMs: number;
	clusterStartSeconds: number;
}

function table(rows: Row[]): string {
	const header = [
		'Workers (concurrency)',
		'Executions × tickets',
		'Succeeded',
		'Requests',
		'429s (share)',
		'First → last request (s)',
		'Floor (s)',
		'× floor',
		'Target 1.5 × floor + 5 s',
		'Tasks / lost / dup',
		'Workers used',
	];
	const cells = rows.map((r) => {
		const f = r.figures;
		const target = 1.5 * f.floorMs + 5000 * (r.windowMs / 60_000);
		return [
			`${r.workers} (${r.concurrency})`,
			`${r.executions} × ${r.ticketsEach.toLocaleString('en-US')}`,
			`${r.succeeded}/${r.executions}`,
			String(f.requests),
			`${f.rejected429} (${(f.share429 * 100).toFixed(1)} %)`,
			(f.durationMs / 1000).toFixed(1),
			(f.floorMs / 1000).toFixed(0),
			(f.durationMs / f.floorMs).toFixed(2),
			`${(target / 1000).toFixed(1)} s: ${f.durationMs <= target ? 'met' : 'NOT met'}`,
			`${r.tasks} / ${r.lost} / ${r.duplicated}`,
			String(r.workersUsed),
		];
	});
	const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)));
	const line = (row: string[]) =>
		`| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
	return [
		line(header),
		`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
		...cells.map(line),
	].join('\n');
}

/** The whole `--queue` run; resolves when the table is printed and queue.json written. */
export async function queueBench(argv: string[]): Promise<void> {
	const options = parseQueueArgs(argv);
	const projectDir = path.resolve(__dirname, '..', '..', '..');
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes')))
		throw new Error('dist/ is not built: run npm run build');
	const redisAvailability = ensureRedis(log);
	if ('skipped' in redisAvailability)
		throw new Error(`--queue needs redis-server: ${redisAvailability.skipped}`);
	const started = Date.now();
	const install = await ensureN8n(2, log);
	const tgz = await packPackage(projectDir);
	const redis = await startRedis(redisAvailability.bin, log);
	const sim = await startSimulator({
		tokens: [TOKEN],
		requestsPerWindow: LIMIT,
		windowMs: options.windowMs,
		seed: 14,
	});
	const retryDelayMs = options.retryDelayMs ?? Math.round((2000 * options.windowMs) / 60_000);
	const rows: Row[] = [];
	try {
		for (const workers of options.workers) {
			for (const size of options.sizes) {
				const concurrency = options.concurrency ?? (workers === 1 ? 10 : 1);
				// A fresh user folder and cluster per row: no worker starts with what an earlier row taught its limiter.
				const folder = await N8nUserFolder.create(install, { tgz, log });
				try {
					const credential = { id: 'benchQueueCred01', name: 'Task Backlog (queue bench)' };
					await folder.importCredentials([
						W.backlogCredential(credential, {
							baseUrl: sim.url,
							token: TOKEN,
							requestsPerMinute: options.requestsPerMinute,
							rateLimitWindowSeconds: options.windowMs / 1000,
						}),
					]);
					const workflow = scaleOutWorkflow('benchQueueWf0001', credential, { retryDelayMs });
					await folder.importWorkflow(workflow);
					await folder.activate(workflow.id);
					const clusterStarted = Date.now();
					const cluster = await startQueueCluster(folder, redis, {
						workers,
						concurrency,
						log,
						maxLifetimeMs: 60 * 60_000,
					});
					try {
						await folder.waitForWebhook(cluster.main.baseUrl, QUEUE_WEBHOOK_PATH, 120_000);
						const clusterStartSeconds = Math.round((Date.now() - clusterStarted) / 1000);
						sim.reset();
						sim.configure({
							tokens: [TOKEN],
							requestsPerWindow: LIMIT,
							windowMs: options.windowMs,
							profile: 'strict',
							readings: { maxBatchSize: 50, batchTooLarge: '413' },
						});
						const result = await runScaleOut(cluster, sim, {
							executions: options.executions,
							ticketsEach: size,
							limit: LIMIT,
							windowMs: options.windowMs,
							timeoutMs: 45 * 60_000,
							log,
						});
						log(describeScaleOut(result));
						rows.push({
							...result,
							concurrency,
							windowMs: options.windowMs,
							retryDelayMs,
							clusterStartSeconds,
						});
					} finally {
						await cluster.stop();
					}
				} finally {
					await folder.dispose();
				}
			}
		}
	} finally {
		await sim.stop();
		await redis.stop();
		disposeAll();
	}
	const intro =
		`Queue mode: ${describeVersions(install)}, redis-server ${redisAvailability.version}, sqlite; ${os.cpus().length} CPUs. ` +
		`Simulator: ${LIMIT} requests per ${options.windowMs / 1000} s window per token (fixed window, 429s counted), strict profile, batch limit 50 undocumented (413). ` +
		`Workflow: Webhook → Code (tickets) → Task Backlog Create or Update by external ID, Batch Size 100, Retry Delay ${retryDelayMs} ms; credential Requests per Minute ${options.requestsPerMinute} (each worker's own budget), Rate Limit Window ${options.windowMs / 1000} s. ` +
		`${options.executions} webhook calls at once per row. Floor = ceil(accepted requests / ${LIMIT}) windows.`;
	process.stdout.write(`${intro}\n\n${table(rows)}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	fs.writeFileSync(
		path.join(options.out, 'queue.json'),
		JSON.stringify(
			{
				at: new Date().toISOString(),
				options,
				rows,
				totalSeconds: Math.round((Date.now() - started) / 1000),
			},
			null,
			2,
		) + '\n',
	);
	log(
		`wrote ${path.join(options.out, 'queue.json')} in ${Math.round((Date.now() - started) / 1000)} s`,
	);
}
