// `npm run bench`: the Task Backlog node against the way users do the same job today (the HTTP Request node, one PUT
// per item), in a real n8n, against the simulator of the service with its rate limit on and a time-scaled minute.
// Not part of `npm test`. Prints a table, writes bench-results/bench.json and bench-results/requests-over-time.svg.
//
//   node .build/test/bench/bench.js [--majors 2|1|2,1] [--sizes 1000,10000] [--window-ms 1000]
//        [--http-max 10000] [--no-real-minute] [--out bench-results]
//
// --http-max N runs the HTTP Request contender for real up to N tickets and extrapolates (linearly, marked as such)
// above it. --no-real-minute skips the run of our node at N = 10,000 with the service's real 60 s window.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { N8nInstall, N8nMajor } from '../e2e/lib/n8n';
import { describeVersions, ensureN8n, packPackage } from '../e2e/lib/n8n';
import type { Simulator } from '../simulator/simulator';
import { startSimulator } from '../simulator/simulator';
import type { Panel } from './chart';
import { requestsOverTimeSvg } from './chart';
import type { MeasuredRun } from './measured';
import { MeasuredFolder } from './measured';
import type { HttpContenderOptions, Json, Workflow } from './workflows';
import * as W from './workflows';

// ---------------------------------------------------------------------------------------------------------------------
// Options

interface Options {
	majors: N8nMajor[];
	sizes: number[];
	windowMs: number;
	httpMax: number;
	realMinute: boolean;
	out: string;
}

function parseArgs(argv: string[]): Options {
	const options: Options = {
		majors: [2],
		sizes: [1000, 10000],
		windowMs: 1000,
		httpMax: 10000,
		realMinute: true,
		out: path.resolve(__dirname, '..', '..', '..', 'bench-results'),
	};
	for (let i = 0; i < argv.length; i++) {
		const flag = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) throw new Error(`${flag} needs a value`);
			return next;
		};
		if (flag === '--majors') options.majors = value().split(',').map((m) => Number(m) as N8nMajor);
		else if (flag === '--sizes') options.sizes = value().split(',').map(Number);
		else if (flag === '--window-ms') options.windowMs = Number(value());
		else if (flag === '--http-max') options.httpMax = Number(value());
		else if (flag === '--no-real-minute') options.realMinute = false;
		else if (flag === '--out') options.out = path.resolve(value());
		else if (flag === '--help' || flag === '-h') {
			process.stdout.write(fs.readFileSync(__filename, 'utf8').split('\n').slice(0, 10).join('\n') + '\n');
			process.exit(0);
		} else throw new Error(`unknown flag ${flag} (see --help)`);
	}
	if (options.majors.some((m) => m !== 1 && m !== 2)) throw new Error('--majors takes 1 and/or 2');
	if (options.sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--sizes takes whole numbers');
	return options;
}

// ---------------------------------------------------------------------------------------------------------------------
// Constants of the set-up

/** The service's limit: 60 requests per window (a minute, time-scaled here). */
const LIMIT = 60;
const BATCH_SIZE = 100;
const TOKEN = `bench-token-${process.pid}-7d1f3a`;
const PAGE_SIZE = 100;
const RETURN_ALL_TASKS = 10000;
const OVERHEAD_N = 10000;
const RUN_TIMEOUT_MS = 45 * 60_000;

/**
 * How today's users pace the HTTP Request node (stated in the output and the README): the node's own Batching option
 * set to the documented limit (Items per Batch 60, Batch Interval one window, as n8n's 429 message and community
 * answers advise), plus the node setting Retry On Fail with n8n's defaults (3 tries, 1000 ms apart; 1000 ms is one
 * scaled window). Retry On Fail re-runs the whole node, every item, when any item failed.
 */
function httpContender(windowMs: number): HttpContenderOptions {
	return { itemsPerBatch: LIMIT, batchIntervalMs: windowMs, retryOnFail: { maxTries: 3, waitBetweenTries: 1000 } };
}

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------------------------------------------------------------
// Results

type Contender = 'task-backlog' | 'http-request';

interface SyncResult {
	scenario: 'sync';
	major: N8nMajor;
	contender: Contender;
	n: number;
	windowMs: number;
	/** measured, or scaled up from a smaller real run */
	extrapolatedFrom?: number;
	ok: boolean;
	error?: string;
	requests: number;
	requestsNeeded: number;
	rejected429: number;
	otherErrors: number;
	tasks: number;
	duplicates: number;
	missing: number;
	wrongValues: number;
	errorItems: number;
	/** n8n's own measure of the node's run */
	nodeMs: number;
	/** node start to its first request */
	prepMs: number;
	/** first request to the node's end */
	requestPhaseMs: number;
	floorMs: number;
	processWallMs: number;
	cpuMs?: number;
	peakRssMb?: number;
	/** seconds since the node started, per request; and those answered 429 */
	requestTimes: number[];
	rejectedTimes: number[];
}

interface ReturnAllResult {
	scenario: 'returnAll';
	major: N8nMajor;
	ok: boolean;
	error?: string;
	tasks: number;
	items: number;
	requests: number;
	rejected429: number;
	nodeMs: number;
	floorMs: number;
	processWallMs: number;
	peakRssMb?: number;
	/** the same workflow with Limit 1 instead of Return All */
	baselinePeakRssMb?: number;
	cpuMs?: number;
}

interface OverheadResult {
	scenario: 'overhead';
	major: N8nMajor;
	n: number;
	ok: boolean;
	error?: string;
	requests: number;
	nodeMs: number;
	tasksPerSecond: number;
	cpuMs?: number;
	/** the same workflow with our node disabled (n8n passes the items through) */
	baselineCpuMs?: number;
	cpuSecondsPer1000?: number;
	/** n8n's Set node evaluating the same two expressions per item (title and ticket id): n8n's own per-item cost */
	setNodeMs?: number;
	setCpuSecondsPer1000?: number;
}

// ---------------------------------------------------------------------------------------------------------------------
// Helpers

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);
const seconds = (ms: number) => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

function floorMs(requestsNeeded: number, windowMs: number) {
	return ceilDiv(requestsNeeded, LIMIT) * windowMs;
}

function errorText(run: MeasuredRun): string | undefined {
	const error = W.runError(run.run);
	if (error) return `${error.message ?? ''}${error.description ? ` (${error.description})` : ''}`;
	if (run.code !== 0 || !run.run) return `n8n execute exited with ${run.code}; ${(run.stdout + run.stderr).slice(-600)}`;
	return undefined;
}

function cpuOf(run: MeasuredRun) {
	return run.usage ? run.usage.userCpuMs + run.usage.systemCpuMs : undefined;
}

/** Tasks in the simulator against tickets T-1 … T-n with title "Ticket i". */
function checkTasks(sim: Simulator, n: number) {
	const byTicket = new Map<string, number>();
	let wrongValues = 0;
	for (const task of sim.tasks.values()) {
		const ticket = String(task.fields?.ticket_id ?? '');
		byTicket.set(ticket, (byTicket.get(ticket) ?? 0) + 1);
		const number = Number(ticket.replace(/^T-/, ''));
		if (task.fields?.title !== `Ticket ${number}`) wrongValues++;
	}
	let missing = 0;
	for (let i = 1; i <= n; i++) if (!byTicket.has(`T-${i}`)) missing++;
	return { tasks: sim.tasks.size, duplicates: sim.tasks.size - byTicket.size, missing, wrongValues };
}

// ---------------------------------------------------------------------------------------------------------------------
// The run

class Bench {
	readonly sync: SyncResult[] = [];
	readonly returnAll: ReturnAllResult[] = [];
	readonly overhead: OverheadResult[] = [];
	readonly environment: Json = {};

	constructor(
		private readonly options: Options,
		private readonly sim: Simulator,
		private readonly tgz: string,
	) {}

	private resetSim(requestsPerWindow: number, windowMs: number) {
		this.sim.reset();
		this.sim.configure({ requestsPerWindow, windowMs, faults: undefined, maxPageSize: PAGE_SIZE });
	}

	async runMajor(install: N8nInstall) {
		const { major } = install;
		const { windowMs } = this.options;
		const folder = await MeasuredFolder.create(install, { tgz: this.tgz, log, measure: true });
		try {
			const limited = { id: 'benchCredLimited', name: 'Task Backlog (time-scaled minute)' };
			const realMinute = { id: 'benchCredMinute', name: 'Task Backlog (real minute)' };
			const unlimited = { id: 'benchCredNoLimit', name: 'Task Backlog (no limit)' };
			const header = { id: 'benchCredHeader', name: 'Bearer token (Header Auth)' };
			const base = { baseUrl: this.sim.url, token: TOKEN };
			await folder.folder.importCredentials([
				W.backlogCredential(limited, { ...base, requestsPerMinute: LIMIT, rateLimitWindowSeconds: windowMs / 1000 }),
				W.backlogCredential(realMinute, { ...base, requestsPerMinute: LIMIT, rateLimitWindowSeconds: 60 }),
				W.backlogCredential(unlimited, { ...base, requestsPerMinute: 1_000_000, rateLimitWindowSeconds: 60 }),
				W.headerAuthCredential(header, TOKEN),
			]);

			const workflows: Workflow[] = [];
			const add = (id: string, name: string, ...nodes: W.WorkflowNode[]) => {
				workflows.push(W.workflow(id, name, [W.manualTrigger(), ...nodes]));
				return id;
			};
			const ours = (credential: W.CredentialRef, n: number, settings: Json = {}) =>
				W.backlogNode('Task Backlog', credential, W.upsertParameters({ batchSize: BATCH_SIZE }), settings);
			const ids = {
				ours: new Map<number, string>(),
				http: new Map<number, string>(),
			};
			const httpSizes = new Set(this.options.sizes.map((n) => Math.min(n, this.options.httpMax)));
			for (const n of this.options.sizes) {
				ids.ours.set(n, add(`benchOurs${String(n).padStart(7, '0')}`, `bench: Task Backlog upsert ${n}`, W.ticketsNode('Tickets', n), ours(limited, n)));
			}
			for (const n of httpSizes) {
				ids.http.set(
					n,
					add(`benchHttp${String(n).padStart(7, '0')}`, `bench: HTTP Request PUT ${n}`, W.ticketsNode('Tickets', n), W.httpPutNode('HTTP Request', this.sim.url, header, httpContender(windowMs))),
				);
			}
			const realMinuteId = add('benchOursMinute1', 'bench: Task Backlog upsert 10000, real minute', W.ticketsNode('Tickets', 10000), ours(realMinute, 10000));
			const returnAllId = add('benchReturnAll01', 'bench: Return All', W.backlogNode('Task Backlog', limited, { resource: 'task', operation: 'getAll', returnAll: true }));
			const limitOneId = add('benchReturnOne01', 'bench: Limit 1', W.backlogNode('Task Backlog', limited, { resource: 'task', operation: 'getAll', returnAll: false, limit: 1 }));
			const overheadId = add('benchOverhead001', 'bench: overhead', W.ticketsNode('Tickets', OVERHEAD_N), ours(unlimited, OVERHEAD_N));
			const disabledId = add('benchDisabled001', 'bench: overhead baseline', W.ticketsNode('Tickets', OVERHEAD_N), ours(unlimited, OVERHEAD_N, { disabled: true }));
			const setId = add(
				'benchSetNode0001',
				'bench: Set node, same expressions',
				W.ticketsNode('Tickets', OVERHEAD_N),
				W.setNode('Task Backlog', { ticket_id: '={{ $json.id }}', title: '={{ $json.title }}' }),
			);
			await folder.folder.importWorkflow(workflows);

			// Sync N tickets
			for (const n of this.options.sizes) {
				this.sync.push(await this.runSync(folder, major, 'task-backlog', ids.ours.get(n)!, n, windowMs));
				const httpN = Math.min(n, this.options.httpMax);
				const http = await this.runSync(folder, major, 'http-request', ids.http.get(httpN)!, httpN, windowMs);
				this.sync.push(httpN === n ? http : extrapolate(http, n));
			}
			if (this.options.realMinute) this.sync.push(await this.runSync(folder, major, 'task-backlog', realMinuteId, 10000, 60_000));

			// Return All
			this.returnAll.push(await this.runReturnAll(folder, major, returnAllId, limitOneId));

			// Overhead, rate limit off
			this.overhead.push(await this.runOverhead(folder, major, overheadId, disabledId, setId));
		} finally {
			await folder.dispose();
		}
	}

	private async execute(folder: MeasuredFolder, id: string, what: string): Promise<MeasuredRun> {
		log(`${what} ...`);
		const run = await folder.execute(id, RUN_TIMEOUT_MS);
		const error = errorText(run);
		log(`${what}: ${seconds(run.wallMs)} s${error ? `, failed: ${error.slice(0, 300)}` : ''}`);
		return run;
	}

	private async runSync(folder: MeasuredFolder, major: N8nMajor, contender: Contender, id: string, n: number, windowMs: number): Promise<SyncResult> {
		this.resetSim(LIMIT, windowMs);
		const nodeName = contender === 'task-backlog' ? 'Task Backlog' : 'HTTP Request';
		const run = await this.execute(folder, id, `n8n ${major}.x ${contender} N=${n} (window ${windowMs / 1000} s)`);
		const node = W.nodeRun(run.run, nodeName);
		const requests = [...this.sim.requests];
		const start = node?.startTime ?? requests[0]?.at ?? 0;
		const nodeMs = node?.executionTime ?? 0;
		const requestsNeeded = contender === 'task-backlog' ? ceilDiv(n, BATCH_SIZE) : n;
		const firstAt = requests[0]?.at ?? start;
		return {
			scenario: 'sync',
			major,
			contender,
			n,
			windowMs,
			ok: !errorText(run),
			error: errorText(run),
			requests: requests.length,
			requestsNeeded,
			rejected429: requests.filter((r) => r.status === 429).length,
			otherErrors: requests.filter((r) => r.status !== 429 && (r.status >= 400 || r.status === 0)).length,
			...checkTasks(this.sim, n),
			errorItems: (node?.items ?? []).filter((item) => item.error !== undefined).length,
			nodeMs,
			prepMs: firstAt - start,
			requestPhaseMs: start + nodeMs - firstAt,
			floorMs: floorMs(requestsNeeded, windowMs),
			processWallMs: run.wallMs,
			cpuMs: cpuOf(run),
			peakRssMb: run.usage?.peakRssMb,
			requestTimes: requests.map((r) => (r.at - start) / 1000),
			rejectedTimes: requests.filter((r) => r.status === 429).map((r) => (r.at - start) / 1000),
		};
	}

	private async runReturnAll(folder: MeasuredFolder, major: N8nMajor, id: string, limitOneId: string): Promise<ReturnAllResult> {
		const { windowMs } = this.options;
		this.resetSim(LIMIT, windowMs);
		this.sim.seedTasks(RETURN_ALL_TASKS, (i) => ({ fields: { title: `Seeded ${i + 1}`, ticket_id: `S-${i + 1}` } }));
		const baseline = await this.execute(folder, limitOneId, `n8n ${major}.x Get Many, Limit 1 (memory baseline)`);
		this.sim.clearRequests();
		const run = await this.execute(folder, id, `n8n ${major}.x Get Many, Return All of ${RETURN_ALL_TASKS}`);
		const node = W.nodeRun(run.run, 'Task Backlog');
		const requests = this.sim.requests;
		return {
			scenario: 'returnAll',
			major,
			ok: !errorText(run),
			error: errorText(run),
			tasks: RETURN_ALL_TASKS,
			items: node?.items.length ?? 0,
			requests: requests.length,
			rejected429: requests.filter((r) => r.status === 429).length,
			nodeMs: node?.executionTime ?? 0,
			floorMs: floorMs(ceilDiv(RETURN_ALL_TASKS, PAGE_SIZE), windowMs),
			processWallMs: run.wallMs,
			peakRssMb: run.usage?.peakRssMb,
			baselinePeakRssMb: baseline.usage?.peakRssMb,
			cpuMs: cpuOf(run),
		};
	}

	private async runOverhead(folder: MeasuredFolder, major: N8nMajor, id: string, disabledId: string, setId: string): Promise<OverheadResult> {
		this.resetSim(0, 60_000);
		const baseline = await this.execute(folder, disabledId, `n8n ${major}.x ${OVERHEAD_N} items, our node disabled (CPU baseline)`);
		const set = await this.execute(folder, setId, `n8n ${major}.x ${OVERHEAD_N} items through a Set node with the same two expressions`);
		this.resetSim(0, 60_000);
		const run = await this.execute(folder, id, `n8n ${major}.x ${OVERHEAD_N} upserts, no rate limit`);
		const node = W.nodeRun(run.run, 'Task Backlog');
		const cpu = cpuOf(run);
		const baselineCpu = cpuOf(baseline);
		const setCpu = cpuOf(set);
		const per1000 = (total?: number) =>
			total !== undefined && baselineCpu !== undefined ? (total - baselineCpu) / 1000 / (OVERHEAD_N / 1000) : undefined;
		const nodeMs = node?.executionTime ?? 0;
		return {
			scenario: 'overhead',
			major,
			n: OVERHEAD_N,
			ok: !errorText(run),
			error: errorText(run),
			requests: this.sim.requests.length,
			nodeMs,
			tasksPerSecond: nodeMs > 0 ? OVERHEAD_N / (nodeMs / 1000) : 0,
			cpuMs: cpu,
			baselineCpuMs: baselineCpu,
			cpuSecondsPer1000: per1000(cpu),
			setNodeMs: W.nodeRun(set.run, 'Task Backlog')?.executionTime,
			setCpuSecondsPer1000: per1000(setCpu),
		};
	}
}

/** A run of the HTTP Request contender at a smaller N, scaled up linearly (marked as such everywhere). */
function extrapolate(result: SyncResult, n: number): SyncResult {
	const factor = n / result.n;
	const scale = (value: number) => Math.round(value * factor);
	return {
		...result,
		n,
		extrapolatedFrom: result.n,
		requests: scale(result.requests),
		requestsNeeded: n,
		rejected429: scale(result.rejected429),
		otherErrors: scale(result.otherErrors),
		tasks: scale(result.tasks),
		duplicates: scale(result.duplicates),
		missing: scale(result.missing),
		wrongValues: scale(result.wrongValues),
		errorItems: scale(result.errorItems),
		nodeMs: scale(result.nodeMs),
		prepMs: result.prepMs,
		requestPhaseMs: scale(result.requestPhaseMs),
		floorMs: floorMs(n, result.windowMs),
		processWallMs: scale(result.processWallMs),
		cpuMs: result.cpuMs === undefined ? undefined : scale(result.cpuMs),
		requestTimes: result.requestTimes.map((t) => t * factor),
		rejectedTimes: result.rejectedTimes.map((t) => t * factor),
	};
}

// ---------------------------------------------------------------------------------------------------------------------
// Report

function table(header: string[], rows: string[][]): string {
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
	const line = (cells: string[]) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
	return [line(header), `|${widths.map((w, i) => (i === 0 ? ':' : '-') + '-'.repeat(w) + (i === 0 ? '-' : ':')).join('|')}|`, ...rows.map(line)].join('\n');
}

const fmt = (value: number | undefined, digits = 0) =>
	value === undefined || Number.isNaN(value) ? 'n/a' : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function report(bench: Bench, options: Options): { text: string; targets: Json[] } {
	const out: string[] = [];
	const targets: Json[] = [];
	const contenderName = (r: SyncResult) => (r.contender === 'task-backlog' ? 'Task Backlog node' : 'HTTP Request node');
	for (const major of options.majors) {
		const sync = bench.sync.filter((r) => r.major === major);
		out.push(`\n### Sync N tickets, n8n ${major}.x (rate limit ${LIMIT} requests per window)\n`);
		const rows = sync.map((r) => {
			const peer = sync.find((p) => p.n === r.n && p.windowMs === r.windowMs && p.contender !== r.contender);
			const vsHttp = r.contender === 'task-backlog' && peer ? fmt(r.nodeMs / peer.nodeMs, 3) : '';
			return [
				`${contenderName(r)}${r.extrapolatedFrom ? ` (extrapolated from N=${r.extrapolatedFrom})` : ''}${r.ok ? '' : ' FAILED'}`,
				fmt(r.n),
				`${r.windowMs / 1000} s`,
				fmt(r.requests),
				fmt(r.rejected429),
				`${fmt(r.tasks)} / ${fmt(r.duplicates)} / ${fmt(r.missing)}`,
				seconds(r.nodeMs),
				seconds(r.prepMs),
				seconds(r.requestPhaseMs),
				seconds(r.floorMs),
				fmt(r.nodeMs / r.floorMs, 2),
				fmt(r.requestPhaseMs / r.floorMs, 2),
				vsHttp,
				r.cpuMs === undefined ? 'n/a' : seconds(r.cpuMs),
			];
		});
		out.push(
			table(
				['Contender', 'N', 'Window', 'Requests', '429s', 'Tasks / dup / missing', 'Wall (s)', 'Prep (s)', 'Requests phase (s)', 'Floor (s)', 'Wall / floor', 'Req. phase / floor', 'Wall / HTTP', 'CPU (s)'],
				rows,
			),
		);
		const returnAll = bench.returnAll.find((r) => r.major === major);
		if (returnAll) {
			out.push(`\n### Return All, n8n ${major}.x (Get Many of ${fmt(returnAll.tasks)} seeded tasks, pages of ${PAGE_SIZE})\n`);
			out.push(
				table(
					['Items', 'Requests', '429s', 'Wall (s)', 'Floor (s)', 'Peak RSS of n8n execute (MB)', 'Same with Limit 1 (MB)', 'CPU (s)'],
					[[fmt(returnAll.items), fmt(returnAll.requests), fmt(returnAll.rejected429), seconds(returnAll.nodeMs), seconds(returnAll.floorMs), fmt(returnAll.peakRssMb), fmt(returnAll.baselinePeakRssMb), returnAll.cpuMs === undefined ? 'n/a' : seconds(returnAll.cpuMs)]],
				),
			);
		}
		const overhead = bench.overhead.find((r) => r.major === major);
		if (overhead) {
			out.push(`\n### Overhead, n8n ${major}.x (rate limit off, ${fmt(overhead.n)} upserts by external id, batches of ${BATCH_SIZE})\n`);
			out.push(
				table(
					['Measure', 'Task Backlog node', "n8n's Set node, same 2 expressions"],
					[
						['Node time (s)', seconds(overhead.nodeMs), overhead.setNodeMs === undefined ? 'n/a' : seconds(overhead.setNodeMs)],
						['Items per second', fmt(overhead.tasksPerSecond), overhead.setNodeMs ? fmt(overhead.n / (overhead.setNodeMs / 1000)) : 'n/a'],
						['CPU s per 1,000 items (n8n process, minus node disabled)', fmt(overhead.cpuSecondsPer1000, 2), fmt(overhead.setCpuSecondsPer1000, 2)],
						['Requests', fmt(overhead.requests), '0'],
					],
				),
			);
		}
		// targets
		for (const r of sync.filter((s) => s.contender === 'task-backlog')) {
			const at = `n8n ${major}.x N=${r.n}, window ${r.windowMs / 1000} s`;
			targets.push({ target: 'zero 429s for our node', at, met: r.rejected429 === 0, value: r.rejected429 });
			targets.push({ target: `requests ≤ ceil(N / ${BATCH_SIZE}) + 2`, at, met: r.requests <= r.requestsNeeded + 2, value: `${r.requests} ≤ ${r.requestsNeeded + 2}` });
			targets.push({ target: 'wall time ≤ 1.1 × floor', at, met: r.nodeMs <= 1.1 * r.floorMs, value: `${seconds(r.nodeMs)} s / ${seconds(r.floorMs)} s = ${fmt(r.nodeMs / r.floorMs, 2)}` });
			targets.push({ target: 'requests phase ≤ 1.1 × floor', at, met: r.requestPhaseMs <= 1.1 * r.floorMs, value: `${seconds(r.requestPhaseMs)} s / ${seconds(r.floorMs)} s = ${fmt(r.requestPhaseMs / r.floorMs, 2)}` });
			targets.push({ target: 'every ticket once, with its values', at, met: r.ok && r.tasks === r.n && r.duplicates === 0 && r.missing === 0 && r.wrongValues === 0, value: `${r.tasks} tasks, ${r.duplicates} dup, ${r.missing} missing, ${r.wrongValues} wrong` });
			const http = sync.find((p) => p.n === r.n && p.contender === 'http-request' && p.windowMs === r.windowMs);
			if (r.n >= 10000 && http) {
				targets.push({ target: '≥ 50× fewer requests than HTTP Request at N = 10,000', at, met: http.requests / r.requests >= 50, value: `${fmt(http.requests / r.requests, 1)}×${http.extrapolatedFrom ? ' (HTTP extrapolated)' : ''}` });
			}
		}
	}
	out.push('\n### Targets\n');
	out.push(table(['Target', 'Where', 'Met', 'Value'], targets.map((t) => [t.target, t.at, t.met ? 'yes' : 'NO', String(t.value)])));
	return { text: out.join('\n'), targets };
}

function chart(bench: Bench, options: Options, major: N8nMajor): string {
	const panels: Panel[] = options.sizes.map((n) => ({
		title: `Sync ${n.toLocaleString('en-US')} tickets, n8n ${major}.x`,
		limit: LIMIT,
		windowSeconds: options.windowMs / 1000,
		series: bench.sync
			.filter((r) => r.major === major && r.n === n && r.windowMs === options.windowMs)
			.map((r) => ({
				label: r.contender === 'task-backlog' ? 'Task Backlog node' : 'HTTP Request node',
				color: r.contender === 'task-backlog' ? '#1f77b4' : '#ff7f0e',
				times: r.requestTimes,
				rejected: r.rejectedTimes,
				note: r.extrapolatedFrom ? `extrapolated from N=${r.extrapolatedFrom}` : undefined,
			})),
	}));
	return requestsOverTimeSvg(`Requests over time against a ${LIMIT}-per-${options.windowMs / 1000}-s rate limit`, panels);
}

// ---------------------------------------------------------------------------------------------------------------------

async function main() {
	const options = parseArgs(process.argv.slice(2));
	const projectDir = path.resolve(__dirname, '..', '..', '..');
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes'))) throw new Error('dist/ is not built: run npm run build');
	const started = Date.now();
	const installs: N8nInstall[] = [];
	for (const major of options.majors) installs.push(await ensureN8n(major, log));
	const tgz = await packPackage(projectDir);
	const sim = await startSimulator({ tokens: [TOKEN], requestsPerWindow: LIMIT, windowMs: options.windowMs, maxPageSize: PAGE_SIZE, seed: 1 });
	const bench = new Bench(options, sim, tgz);
	Object.assign(bench.environment, {
		n8n: describeVersions(),
		cpus: os.cpus().length,
		cpuModel: os.cpus()[0]?.model,
		loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
		benchNode: process.version,
		windowMs: options.windowMs,
		limit: LIMIT,
		batchSize: BATCH_SIZE,
		httpContender: { ...httpContender(options.windowMs), request: 'PUT {base}/tasks/{uid}, bearer token from a Header Auth credential, one request per item' },
	});
	try {
		for (const install of installs) await bench.runMajor(install);
	} finally {
		await sim.stop();
	}
	Object.assign(bench.environment, { loadAverageAtEnd: os.loadavg().map((l) => Number(l.toFixed(2))), totalSeconds: Math.round((Date.now() - started) / 1000) });

	const { text, targets } = report(bench, options);
	const intro = [
		`Benchmark: ${describeVersions()}; ${os.cpus().length} CPUs; load average at start ${bench.environment.loadAverageAtStart.join(' ')}.`,
		`Simulator rate limit: ${LIMIT} requests per ${options.windowMs / 1000} s window (a time-scaled minute); our credential: Requests per Minute ${LIMIT}, Rate Limit Window ${options.windowMs / 1000} s.`,
		`Task Backlog node: Create or Update by External ID, batching on, Batch Size ${BATCH_SIZE}.`,
		`HTTP Request node: PUT {base}/tasks/{uid} per item (uid given in the input), bearer token from a Header Auth credential; paced with its Batching option (${LIMIT} items per batch, Batch Interval ${options.windowMs} ms = one window) and the node setting Retry On Fail (3 tries, 1000 ms apart; n8n's defaults). Retry On Fail re-runs the whole node when any item failed.`,
		'Wall = the node\'s own run time as n8n measures it. Prep = node start to its first request (reading and checking every item). Requests phase = first request to the node\'s end. Floor = ceil(requests needed / 60) windows.',
	].join('\n');
	process.stdout.write(`${intro}\n${text}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	fs.writeFileSync(
		path.join(options.out, 'bench.json'),
		JSON.stringify({ at: new Date().toISOString(), environment: bench.environment, sync: bench.sync, returnAll: bench.returnAll, overhead: bench.overhead, targets }, null, 2) + '\n',
	);
	fs.writeFileSync(path.join(options.out, 'requests-over-time.svg'), chart(bench, options, options.majors[0]));
	for (const major of options.majors.slice(1)) fs.writeFileSync(path.join(options.out, `requests-over-time-n8n-${major}.svg`), chart(bench, options, major));
	log(`wrote ${path.join(options.out, 'bench.json')} and requests-over-time.svg in ${Math.round((Date.now() - started) / 1000)} s`);
}

main().then(
	() => process.exit(0),
	(error) => {
		process.stderr.write(`[bench] failed: ${(error as Error).stack ?? error}\n`);
		process.exit(1);
	},
);
