// `npm run bench`: the Task Backlog node against the way users do the same job today (the HTTP Request node, one PUT
// per item), in a real n8n, against the simulator of the service with its rate limit on and a time-scaled minute.
// Not part of `npm test`. Flags: see USAGE below (`npm run bench -- --help` prints it).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { fail, readArgs, type FlagKind } from '../cli/args';
import type { N8nInstall, N8nMajor } from '../n8n/n8n';
import { describeVersions, ensureN8n, packPackage } from '../n8n/n8n';
import type { Simulator } from '../simulator/simulator';
import { startSimulator } from '../simulator/simulator';
import type { Panel, Series } from './chart';
import { requestsOverTimeSvg } from './chart';
import type { MeasuredRun } from './measured';
import { MeasuredFolder } from './measured';
import { queueBench } from './queue';
import type { CpuProfile, ProfileSummary } from './profile';
import { summarizeProfile } from './profile';
import type { HttpContenderOptions, Json, Workflow } from '../n8n/workflows';
import * as W from '../n8n/workflows';

// ---------------------------------------------------------------------------------------------------------------------
// Options

const USAGE = `npm run bench [-- flags]: the Task Backlog node (Input Data "Map Automatically" and "Define Below") against
n8n's HTTP Request node, in a real n8n, against the simulator with its rate limit on (60 requests per window).
Prints tables; writes bench-results/bench.json and bench-results/requests-over-time.svg.

  --majors 2|1|2,1          n8n majors to run (default 2)
  --sizes 1000,10000,50000  tickets synced against the open server (batches of 100 accepted)
  --capped-sizes 10000      tickets synced against a strict-profile server whose batch limit is 50 and
                            undocumented (a longer batch is a 413 that states no limit); empty to skip
  --window-ms 1000          the rate-limit window: a time-scaled minute (default 1000)
  --http-max 10000          run the HTTP Request contender for real up to this N (once per N), and extrapolate
                            above it, linearly and marked as such
  --only auto,define,http   contenders: auto = Map Automatically, define = Define Below, http = HTTP Request
  --parts sync,capped,returnAll,overhead
                            what to run (overhead: CPU per 1,000 items with the rate limit off)
  --real-minute             also run our node at N = 10,000 with the service's real 60 s window (minutes)
  --cpu-prof                profile one 10,000-item Map Automatically run (rate limit off) with node --cpu-prof
                            on the n8n process; prints the top of the profile, keeps the .cpuprofile in --out
  --out bench-results       where to write the results
  --report a.json,b.json    run nothing: print the tables and draw the chart again from saved bench.json files
                            (e.g. one per n8n major), into --out
  --queue                   instead: the scale-out run in n8n queue mode (Redis, main + workers) at the real
                            minute; npm run bench -- --queue --help lists its flags
`;

type ContenderKey = 'auto' | 'define' | 'http';
type Part = 'sync' | 'capped' | 'returnAll' | 'overhead';

interface Options {
	majors: N8nMajor[];
	sizes: number[];
	cappedSizes: number[];
	windowMs: number;
	httpMax: number;
	only: ContenderKey[];
	parts: Part[];
	realMinute: boolean;
	cpuProf: boolean;
	out: string;
	/** bench.json files to report on again (nothing is run) */
	reportFrom: string[];
}

const FLAGS: Record<string, FlagKind> = {
	'--majors': 'value',
	'--sizes': 'value',
	'--capped-sizes': 'value',
	'--window-ms': 'value',
	'--http-max': 'value',
	'--only': 'value',
	'--parts': 'value',
	'--real-minute': 'switch',
	'--no-real-minute': 'switch',
	'--cpu-prof': 'switch',
	'--out': 'value',
	'--report': 'value',
};

function parseArgs(argv: string[]): Options {
	const options: Options = {
		majors: [2],
		sizes: [1000, 10000, 50000],
		cappedSizes: [10000],
		windowMs: 1000,
		httpMax: 10000,
		only: ['auto', 'define', 'http'],
		parts: ['sync', 'capped', 'returnAll', 'overhead'],
		realMinute: false,
		cpuProf: false,
		out: path.resolve(__dirname, '..', '..', '..', 'bench-results'),
		reportFrom: [],
	};
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--majors':
				options.majors = arg.list().map((m) => Number(m) as N8nMajor);
				break;
			case '--sizes':
				options.sizes = arg.numbers();
				break;
			case '--capped-sizes':
				options.cappedSizes = arg.numbers();
				break;
			case '--window-ms':
				options.windowMs = arg.number();
				break;
			case '--http-max':
				options.httpMax = arg.number();
				break;
			case '--only':
				options.only = arg.list() as ContenderKey[];
				break;
			case '--parts':
				options.parts = arg.list() as Part[];
				break;
			case '--real-minute':
				options.realMinute = true;
				break;
			case '--no-real-minute': // the default; kept for older command lines
				options.realMinute = false;
				break;
			case '--cpu-prof':
				options.cpuProf = true;
				break;
			case '--out':
				options.out = path.resolve(arg.text());
				break;
			case '--report':
				options.reportFrom = arg.list().map((file) => path.resolve(file));
				break;
		}
	});
	if (options.majors.some((m) => m !== 1 && m !== 2)) fail('--majors takes 1 and/or 2', USAGE);
	if ([...options.sizes, ...options.cappedSizes].some((n) => !Number.isInteger(n) || n < 1)) fail('--sizes and --capped-sizes take whole numbers', USAGE);
	if (options.only.some((c) => !['auto', 'define', 'http'].includes(c))) fail('--only takes auto, define and/or http', USAGE);
	if (options.parts.some((p) => !['sync', 'capped', 'returnAll', 'overhead'].includes(p))) fail('--parts takes sync, capped, returnAll and/or overhead', USAGE);
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
const PROFILE_N = 10000;
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

type Contender = 'auto-map' | 'define-below' | 'http-request';
/** open: the lenient simulator (batches up to 1,000); capped50: the strict profile, batch limit 50, undocumented */
type Server = 'open' | 'capped50';

const CONTENDER: Record<ContenderKey, Contender> = { auto: 'auto-map', define: 'define-below', http: 'http-request' };
const CONTENDER_NAME: Record<Contender, string> = {
	'auto-map': 'Task Backlog, Map Automatically',
	'define-below': 'Task Backlog, Define Below',
	'http-request': 'HTTP Request node',
};
const CONTENDER_COLOR: Record<Contender, string> = { 'auto-map': '#2ca02c', 'define-below': '#1f77b4', 'http-request': '#ff7f0e' };
const CAPPED_BATCH_LIMIT = 50;

interface SyncResult {
	scenario: 'sync';
	major: N8nMajor;
	contender: Contender;
	server: Server;
	n: number;
	windowMs: number;
	/** measured, or scaled up from a smaller real run */
	extrapolatedFrom?: number;
	ok: boolean;
	error?: string;
	requests: number;
	/** requests that wrote (not GET, not POST /tasks/query) */
	writeRequests: number;
	/** the least requests the job needs on this server: ceil(N / accepted batch size), or N for one PUT per item */
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
	/** ceil(requestsNeeded / 60) windows */
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

interface OverheadRow {
	contender: Contender | 'set-node';
	ok: boolean;
	error?: string;
	requests: number;
	nodeMs: number;
	cpuMs?: number;
	/** CPU of the n8n process minus the same workflow with our node disabled, per 1,000 items */
	cpuSecondsPer1000?: number;
	peakRssMb?: number;
}

interface OverheadResult {
	scenario: 'overhead';
	major: N8nMajor;
	n: number;
	/** the same workflow with our node disabled (n8n passes the items through) */
	baselineCpuMs?: number;
	rows: OverheadRow[];
}

interface ProfileResult {
	major: N8nMajor;
	n: number;
	ok: boolean;
	error?: string;
	file?: string;
	nodeMs: number;
	/** the node's run on the profile's clock (µs) */
	window?: { startUs: number; endUs: number };
	/** the node's run only (samples between its start and end) */
	node?: ProfileSummary;
	/** the whole `n8n execute` process, start-up included */
	process?: ProfileSummary;
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

interface Results {
	sync: SyncResult[];
	returnAll: ReturnAllResult[];
	overhead: OverheadResult[];
	profiles: ProfileResult[];
}

class Bench implements Results {
	readonly sync: SyncResult[] = [];
	readonly returnAll: ReturnAllResult[] = [];
	readonly overhead: OverheadResult[] = [];
	readonly profiles: ProfileResult[] = [];
	readonly environment: Json = {};

	constructor(
		private readonly options: Options,
		private readonly sim: Simulator,
		private readonly tgz: string,
	) {}

	private resetSim(requestsPerWindow: number, windowMs: number, server: Server = 'open') {
		this.sim.reset();
		this.sim.configure({
			requestsPerWindow,
			windowMs,
			faults: undefined,
			maxPageSize: PAGE_SIZE,
			profile: server === 'capped50' ? 'strict' : 'lenient',
			readings: server === 'capped50' ? { maxBatchSize: CAPPED_BATCH_LIMIT, batchTooLarge: '413' } : undefined,
		});
	}

	private has(key: ContenderKey) {
		return this.options.only.includes(key);
	}

	private hasPart(part: Part) {
		return this.options.parts.includes(part);
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

			// One workflow per (contender, N, credential), made when first needed.
			const workflows = new Map<string, Workflow>();
			const workflowFor = (contender: Contender, n: number, credential: W.CredentialRef, settings: Json = {}) => {
				const key = `${contender}:${n}:${credential.id}:${JSON.stringify(settings)}`;
				let workflow = workflows.get(key);
				if (!workflow) {
					const id = `bench${String(workflows.size).padStart(3, '0')}${contender.slice(0, 4)}${String(n).padStart(5, '0')}`.slice(0, 16);
					const node =
						contender === 'http-request'
							? W.httpPutNode('HTTP Request', this.sim.url, header, httpContender(windowMs))
							: W.backlogNode(
									'Task Backlog',
									credential,
									contender === 'auto-map' ? W.autoMapParameters({ batchSize: BATCH_SIZE }) : W.upsertParameters({ batchSize: BATCH_SIZE }),
									settings,
								);
					workflow = W.workflow(id, `bench: ${CONTENDER_NAME[contender]} ${n}${settings.disabled ? ' (disabled)' : ''} (${credential.name})`, [
						W.manualTrigger(),
						W.ticketsNode('Tickets', n),
						node,
					]);
					workflows.set(key, workflow);
				}
				return workflow.id;
			};
			const ours = (['auto', 'define'] as ContenderKey[]).filter((key) => this.has(key)).map((key) => CONTENDER[key]);
			const plan: Array<() => Promise<void>> = [];

			// Sync N tickets against the open server, HTTP Request run once per distinct N (and extrapolated above --http-max)
			if (this.hasPart('sync')) {
				const httpRuns = new Map<number, SyncResult>();
				for (const n of this.options.sizes) {
					for (const contender of ours) {
						const id = workflowFor(contender, n, limited);
						plan.push(async () => void this.sync.push(await this.runSync(folder, major, contender, 'open', id, n, windowMs)));
					}
					if (this.has('http')) {
						const httpN = Math.min(n, this.options.httpMax);
						const id = workflowFor('http-request', httpN, limited);
						plan.push(async () => {
							let http = httpRuns.get(httpN);
							if (!http) {
								http = await this.runSync(folder, major, 'http-request', 'open', id, httpN, windowMs);
								httpRuns.set(httpN, http);
							}
							this.sync.push(httpN === n ? http : extrapolate(http, n));
						});
					}
				}
			}
			// The same against a server whose batch limit is 50 and not documented
			if (this.hasPart('capped')) {
				for (const n of this.options.cappedSizes) {
					for (const contender of ours) {
						const id = workflowFor(contender, n, limited);
						plan.push(async () => void this.sync.push(await this.runSync(folder, major, contender, 'capped50', id, n, windowMs)));
					}
				}
			}
			if (this.options.realMinute) {
				for (const contender of ours) {
					const id = workflowFor(contender, 10000, realMinute);
					plan.push(async () => void this.sync.push(await this.runSync(folder, major, contender, 'open', id, 10000, 60_000)));
				}
			}
			if (this.hasPart('returnAll')) {
				const returnAllId = 'benchReturnAll01';
				const limitOneId = 'benchReturnOne01';
				workflows.set(returnAllId, W.workflow(returnAllId, 'bench: Return All', [W.manualTrigger(), W.backlogNode('Task Backlog', limited, { resource: 'task', operation: 'getAll', returnAll: true })]));
				workflows.set(limitOneId, W.workflow(limitOneId, 'bench: Limit 1', [W.manualTrigger(), W.backlogNode('Task Backlog', limited, { resource: 'task', operation: 'getAll', returnAll: false, limit: 1 })]));
				plan.push(async () => void this.returnAll.push(await this.runReturnAll(folder, major, returnAllId, limitOneId)));
			}
			if (this.hasPart('overhead')) {
				const disabledId = workflowFor('define-below', OVERHEAD_N, unlimited, { disabled: true });
				const setId = 'benchSetNode0001';
				workflows.set(
					setId,
					W.workflow(setId, 'bench: Set node, same expressions', [
						W.manualTrigger(),
						W.ticketsNode('Tickets', OVERHEAD_N),
						W.setNode('Task Backlog', { ticket_id: '={{ $json.id }}', title: '={{ $json.title }}' }),
					]),
				);
				const contenders = ours.map((contender) => ({ contender, id: workflowFor(contender, OVERHEAD_N, unlimited) }));
				plan.push(async () => void this.overhead.push(await this.runOverhead(folder, major, contenders, disabledId, setId)));
			}
			if (this.options.cpuProf) {
				const id = workflowFor('auto-map', PROFILE_N, unlimited);
				plan.push(async () => void this.profiles.push(await this.runProfile(folder, major, id)));
			}

			await folder.folder.importWorkflow([...workflows.values()]);
			for (const step of plan) await step();
		} finally {
			await folder.dispose();
		}
	}

	private async execute(folder: MeasuredFolder, id: string, what: string, nodeOptions?: string): Promise<MeasuredRun> {
		log(`${what} ...`);
		const run = await folder.execute(id, RUN_TIMEOUT_MS, { nodeOptions });
		const error = errorText(run);
		const rss = run.usage ? `, peak RSS ${Math.round(run.usage.peakRssMb)} MB` : '';
		log(`${what}: ${seconds(run.wallMs)} s${rss}${error ? `, failed: ${error.slice(0, 300)}` : ''}`);
		return run;
	}

	private async runSync(folder: MeasuredFolder, major: N8nMajor, contender: Contender, server: Server, id: string, n: number, windowMs: number): Promise<SyncResult> {
		this.resetSim(LIMIT, windowMs, server);
		const nodeName = contender === 'http-request' ? 'HTTP Request' : 'Task Backlog';
		const serverName = server === 'capped50' ? ', batch limit 50 undocumented' : '';
		const run = await this.execute(folder, id, `n8n ${major}.x ${CONTENDER_NAME[contender]} N=${n} (window ${windowMs / 1000} s${serverName})`);
		const node = W.nodeRun(run.run, nodeName);
		const requests = [...this.sim.requests];
		const start = node?.startTime ?? requests[0]?.at ?? 0;
		const nodeMs = node?.executionTime ?? 0;
		const acceptedBatch = server === 'capped50' ? Math.min(BATCH_SIZE, CAPPED_BATCH_LIMIT) : BATCH_SIZE;
		const requestsNeeded = contender === 'http-request' ? n : ceilDiv(n, acceptedBatch);
		const firstAt = requests[0]?.at ?? start;
		const result: SyncResult = {
			scenario: 'sync',
			major,
			contender,
			server,
			n,
			windowMs,
			ok: !errorText(run),
			error: errorText(run),
			requests: requests.length,
			writeRequests: requests.filter((r) => r.method !== 'GET' && r.path !== '/tasks/query').length,
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
		// the run's JSON of 50,000 items is large: keep only what the report needs
		run.run = undefined;
		return result;
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

	private async runOverhead(
		folder: MeasuredFolder,
		major: N8nMajor,
		contenders: Array<{ contender: Contender; id: string }>,
		disabledId: string,
		setId: string,
	): Promise<OverheadResult> {
		this.resetSim(0, 60_000);
		const baseline = await this.execute(folder, disabledId, `n8n ${major}.x ${OVERHEAD_N} items, our node disabled (CPU baseline)`);
		const baselineCpu = cpuOf(baseline);
		const per1000 = (total?: number) =>
			total !== undefined && baselineCpu !== undefined ? (total - baselineCpu) / 1000 / (OVERHEAD_N / 1000) : undefined;
		const rows: OverheadRow[] = [];
		const set = await this.execute(folder, setId, `n8n ${major}.x ${OVERHEAD_N} items through a Set node with the same two expressions`);
		rows.push({
			contender: 'set-node',
			ok: !errorText(set),
			error: errorText(set),
			requests: 0,
			nodeMs: W.nodeRun(set.run, 'Task Backlog')?.executionTime ?? 0,
			cpuMs: cpuOf(set),
			cpuSecondsPer1000: per1000(cpuOf(set)),
			peakRssMb: set.usage?.peakRssMb,
		});
		for (const { contender, id } of contenders) {
			this.resetSim(0, 60_000);
			const run = await this.execute(folder, id, `n8n ${major}.x ${OVERHEAD_N} upserts, ${CONTENDER_NAME[contender]}, no rate limit`);
			rows.push({
				contender,
				ok: !errorText(run),
				error: errorText(run),
				requests: this.sim.requests.length,
				nodeMs: W.nodeRun(run.run, 'Task Backlog')?.executionTime ?? 0,
				cpuMs: cpuOf(run),
				cpuSecondsPer1000: per1000(cpuOf(run)),
				peakRssMb: run.usage?.peakRssMb,
			});
		}
		return { scenario: 'overhead', major, n: OVERHEAD_N, baselineCpuMs: baselineCpu, rows };
	}

	/** One Map Automatically run of PROFILE_N upserts, rate limit off, with the V8 CPU profiler on n8n's process. */
	private async runProfile(folder: MeasuredFolder, major: N8nMajor, id: string): Promise<ProfileResult> {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'task-backlog-cpuprof-'));
		try {
			this.resetSim(0, 60_000);
			const run = await this.execute(folder, id, `n8n ${major}.x ${PROFILE_N} upserts, Map Automatically, no rate limit, --cpu-prof`, `--cpu-prof --cpu-prof-dir=${dir}`);
			const node = W.nodeRun(run.run, 'Task Backlog');
			const result: ProfileResult = { major, n: PROFILE_N, ok: !errorText(run), error: errorText(run), nodeMs: node?.executionTime ?? 0 };
			const file = run.usage ? fs.readdirSync(dir).find((name) => name.includes(`.${run.usage!.pid}.`)) : undefined;
			if (!file || !run.usage || !node) {
				result.error = `${result.error ?? ''} no profile of the n8n execute process (files: ${fs.readdirSync(dir).join(', ') || 'none'})`.trim();
				return result;
			}
			const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
			// the node's start and end on the profile's clock, through the instant the rusage hook recorded at start-up
			const startUs = run.usage.startedAtMonotonicUs + (node.startTime - run.usage.startedAt) * 1000;
			result.window = { startUs, endUs: startUs + node.executionTime * 1000 };
			result.node = summarizeProfile(profile, result.window);
			result.process = summarizeProfile(profile);
			fs.mkdirSync(this.options.out, { recursive: true });
			result.file = path.join(this.options.out, `map-automatically-${PROFILE_N}-n8n-${major}.cpuprofile`);
			fs.copyFileSync(path.join(dir, file), result.file);
			return result;
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
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
		writeRequests: scale(result.writeRequests),
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
		peakRssMb: undefined,
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

const serverLabel = (server: Server) => (server === 'capped50' ? 'limit 50, undocumented' : 'open');

function profileTable(summary: ProfileSummary): string {
	return table(
		['Function (self time)', 'Where', 'Self (ms)', 'Share'],
		summary.top.map((entry) => [entry.name, entry.where || entry.area, fmt(entry.selfMs), `${fmt(entry.share * 100, 1)} %`]),
	);
}

function report(bench: Results, options: Options): { text: string; targets: Json[] } {
	const out: string[] = [];
	const targets: Json[] = [];
	for (const major of options.majors) {
		const sync = bench.sync.filter((r) => r.major === major);
		if (sync.length > 0) {
			out.push(`\n### Sync N tickets, n8n ${major}.x (rate limit ${LIMIT} requests per window; Create or Update, Batch Size ${BATCH_SIZE})\n`);
			const rows = sync.map((r) => {
				const http = sync.find((p) => p.n === r.n && p.windowMs === r.windowMs && p.contender === 'http-request' && p.server === r.server);
				const vsHttp = r.contender !== 'http-request' && http ? fmt(r.nodeMs / http.nodeMs, 3) : '';
				return [
					`${CONTENDER_NAME[r.contender]}${r.extrapolatedFrom ? ` (extrapolated from N=${fmt(r.extrapolatedFrom)})` : ''}${r.ok ? '' : ' FAILED'}`,
					serverLabel(r.server),
					fmt(r.n),
					`${r.windowMs / 1000} s`,
					`${fmt(r.requests)} (${fmt(r.writeRequests)})`,
					fmt(r.requestsNeeded),
					fmt(r.rejected429),
					`${fmt(r.tasks)} / ${fmt(r.duplicates)} / ${fmt(r.missing)} / ${fmt(r.wrongValues)}`,
					seconds(r.nodeMs),
					seconds(r.prepMs),
					seconds(r.requestPhaseMs),
					seconds(r.floorMs),
					fmt(r.nodeMs / r.floorMs, 2),
					vsHttp,
					r.cpuMs === undefined ? 'n/a' : seconds(r.cpuMs),
					r.peakRssMb === undefined ? 'n/a' : fmt(r.peakRssMb),
				];
			});
			out.push(
				table(
					['Contender', 'Server', 'N', 'Window', 'Requests (writes)', 'Needed', '429s', 'Tasks / dup / missing / wrong', 'Wall (s)', 'Prep (s)', 'Requests phase (s)', 'Floor (s)', 'Wall / floor', 'Wall / HTTP', 'CPU (s)', 'Peak RSS (MB)'],
					rows,
				),
			);
		}
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
			out.push(`\n### Overhead, n8n ${major}.x (rate limit off, ${fmt(overhead.n)} upserts by external ID, batches of ${BATCH_SIZE}; CPU of the n8n process minus the same workflow with our node disabled, ${overhead.baselineCpuMs === undefined ? 'n/a' : seconds(overhead.baselineCpuMs)} s)\n`);
			out.push(
				table(
					['Node', 'Node time (s)', 'Items per second (node time)', 'CPU s per 1,000 items', 'Items per CPU second', 'Requests', 'Peak RSS (MB)'],
					overhead.rows.map((row) => [
						`${row.contender === 'set-node' ? "n8n's Set node, the same 2 expressions" : CONTENDER_NAME[row.contender]}${row.ok ? '' : ' FAILED'}`,
						seconds(row.nodeMs),
						fmt(row.nodeMs > 0 ? overhead.n / (row.nodeMs / 1000) : undefined),
						fmt(row.cpuSecondsPer1000, 3),
						fmt(row.cpuSecondsPer1000 ? 1000 / row.cpuSecondsPer1000 : undefined),
						fmt(row.requests),
						fmt(row.peakRssMb),
					]),
				),
			);
			const auto = overhead.rows.find((row) => row.contender === 'auto-map');
			if (auto) {
				const perSecond = auto.cpuSecondsPer1000 ? 1000 / auto.cpuSecondsPer1000 : 0;
				targets.push({ target: 'Map Automatically: ≥ 20,000 items per CPU second, whole n8n process (rate limit off; minus the workflow with the node disabled; includes n8n storing and printing the 10,000 tasks output)', at: `n8n ${major}.x N=${fmt(overhead.n)}`, met: perSecond >= 20000, value: `${fmt(perSecond)} items/s (${fmt(auto.cpuSecondsPer1000, 3)} CPU s per 1,000)` });
			}
		}
		const nodeProfile = bench.profiles.find((p) => p.major === major)?.node;
		if (nodeProfile) {
			const perSecond = nodeProfile.ourStackMs > 0 ? PROFILE_N / (nodeProfile.ourStackMs / 1000) : 0;
			targets.push({ target: 'Map Automatically: ≥ 20,000 items per CPU second of our node alone (CPU profile: samples with a frame of our package on the stack, rate limit off)', at: `n8n ${major}.x N=${fmt(PROFILE_N)}`, met: perSecond >= 20000, value: `${fmt(perSecond)} items/s (${fmt(nodeProfile.ourStackMs / (PROFILE_N / 1000), 1)} CPU ms per 1,000)` });
		}
		const profile = bench.profiles.find((p) => p.major === major);
		if (profile) {
			out.push(`\n### CPU profile of one ${fmt(profile.n)}-item Map Automatically run, n8n ${major}.x (rate limit off; node --cpu-prof on the n8n execute process)\n`);
			if (profile.node && profile.process) {
				const node = profile.node;
				out.push(
					`Node run ${seconds(profile.nodeMs)} s; ${fmt(node.totalMs)} ms sampled in it (${fmt(node.samples)} samples), of which ${fmt(node.ourStackMs)} ms (${fmt((node.ourStackMs / node.totalMs) * 100, 1)} %) with a frame of our package on the stack = ${fmt(node.ourStackMs / (profile.n / 1000), 2)} ms per 1,000 items. Self time by area: ${node.areas.slice(0, 8).map((a) => `${a.area} ${fmt(a.share * 100, 1)} %`).join(', ')}. Profile: ${profile.file}\n`,
				);
				out.push(profileTable(node));
				out.push(`\nWhole process (start-up included, ${fmt(profile.process.totalMs)} ms): ${profile.process.areas.slice(0, 6).map((a) => `${a.area} ${fmt(a.share * 100, 1)} %`).join(', ')}`);
			} else out.push(`No profile: ${profile.error ?? 'unknown reason'}`);
		}
		// targets
		for (const r of sync.filter((s) => s.contender !== 'http-request')) {
			const at = `n8n ${major}.x ${CONTENDER_NAME[r.contender]} N=${fmt(r.n)}, window ${r.windowMs / 1000} s, ${serverLabel(r.server)} server`;
			targets.push({ target: 'zero 429s', at, met: r.rejected429 === 0, value: r.rejected429 });
			targets.push({ target: 'every ticket once, with its values', at, met: r.ok && r.tasks === r.n && r.duplicates === 0 && r.missing === 0 && r.wrongValues === 0, value: `${r.tasks} tasks, ${r.duplicates} dup, ${r.missing} missing, ${r.wrongValues} wrong` });
			if (r.server === 'capped50') {
				targets.push({ target: `requests ≤ ceil(N / ${CAPPED_BATCH_LIMIT}) + 3`, at, met: r.requests <= r.requestsNeeded + 3, value: `${fmt(r.requests)} ≤ ${fmt(r.requestsNeeded + 3)} (${fmt(r.writeRequests)} writes)` });
				targets.push({ target: 'wall ≤ 1.1 × floor + 2 s', at, met: r.nodeMs <= 1.1 * r.floorMs + 2000, value: `${seconds(r.nodeMs)} s ≤ ${seconds(1.1 * r.floorMs + 2000)} s` });
			} else {
				targets.push({ target: `requests ≤ ceil(N / ${BATCH_SIZE}) + 2`, at, met: r.requests <= r.requestsNeeded + 2, value: `${fmt(r.requests)} ≤ ${fmt(r.requestsNeeded + 2)} (${fmt(r.writeRequests)} writes)` });
				targets.push({ target: 'wall ≤ 1.1 × floor', at, met: r.nodeMs <= 1.1 * r.floorMs, value: `${seconds(r.nodeMs)} s / ${seconds(r.floorMs)} s = ${fmt(r.nodeMs / r.floorMs, 2)}` });
			}
			if (r.n >= 50000) targets.push({ target: 'completes; peak RSS of n8n execute', at, met: r.ok, value: r.peakRssMb === undefined ? 'n/a' : `${fmt(r.peakRssMb)} MB` });
			const http = sync.find((p) => p.n === r.n && p.contender === 'http-request' && p.windowMs === r.windowMs && p.server === r.server);
			if (r.n >= 10000 && http) {
				targets.push({ target: '≥ 50× fewer requests than HTTP Request', at, met: http.requests / r.requests >= 50, value: `${fmt(http.requests / r.requests, 1)}×${http.extrapolatedFrom ? ' (HTTP extrapolated)' : ''}` });
			}
		}
	}
	out.push('\n### Targets\n');
	out.push(table(['Target', 'Where', 'Met', 'Value'], targets.map((t) => [t.target, t.at, t.met ? 'yes' : 'NO', String(t.value)])));
	return { text: out.join('\n'), targets };
}

function chart(bench: Results, options: Options, major: N8nMajor): string {
	const series = (r: SyncResult): Series => ({
		label: CONTENDER_NAME[r.contender],
		color: CONTENDER_COLOR[r.contender],
		times: r.requestTimes,
		rejected: r.rejectedTimes,
		note: r.extrapolatedFrom ? `extrapolated from N=${r.extrapolatedFrom.toLocaleString('en-US')}` : undefined,
	});
	const panel = (title: string, results: SyncResult[], windowMs: number): Panel => ({ title, limit: LIMIT, windowSeconds: windowMs / 1000, series: results.map(series) });
	const mine = bench.sync.filter((r) => r.major === major);
	const panels: Panel[] = [];
	for (const n of options.sizes) {
		const results = mine.filter((r) => r.n === n && r.windowMs === options.windowMs && r.server === 'open');
		if (results.length > 0) panels.push(panel(`Sync ${n.toLocaleString('en-US')} tickets, n8n ${major}.x`, results, options.windowMs));
	}
	for (const n of options.cappedSizes) {
		const results = mine.filter((r) => r.n === n && r.windowMs === options.windowMs && r.server === 'capped50');
		if (results.length > 0) panels.push(panel(`Sync ${n.toLocaleString('en-US')} tickets, n8n ${major}.x, batch limit 50 undocumented`, results, options.windowMs));
	}
	const minute = mine.filter((r) => r.windowMs === 60_000);
	if (minute.length > 0) panels.push(panel(`Sync 10,000 tickets, n8n ${major}.x, the real 60 s window`, minute, 60_000));
	return requestsOverTimeSvg(`Requests over time against a ${LIMIT}-requests-per-window rate limit`, panels);
}

// ---------------------------------------------------------------------------------------------------------------------

/** --report: the saved results of earlier runs, merged (their sizes and majors decide the tables and the chart). */
function reportAgain(options: Options) {
	const saved = options.reportFrom.map((file) => JSON.parse(fs.readFileSync(file, 'utf8')) as Results & { environment: Json });
	const results: Results = { sync: [], returnAll: [], overhead: [], profiles: [] };
	const merged: Options = { ...options, majors: [], sizes: [], cappedSizes: [] };
	for (const file of saved) {
		results.sync.push(...file.sync);
		results.returnAll.push(...file.returnAll);
		results.overhead.push(...file.overhead);
		results.profiles.push(...(file.profiles ?? []));
		const used = (file.environment.options ?? {}) as Partial<Options>;
		for (const major of used.majors ?? []) if (!merged.majors.includes(major)) merged.majors.push(major);
		for (const n of used.sizes ?? []) if (!merged.sizes.includes(n)) merged.sizes.push(n);
		for (const n of used.cappedSizes ?? []) if (!merged.cappedSizes.includes(n)) merged.cappedSizes.push(n);
		if (used.windowMs) merged.windowMs = used.windowMs;
	}
	const { text } = report(results, merged);
	process.stdout.write(`Results of ${options.reportFrom.join(', ')}\n${text}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	merged.majors.forEach((major, index) => {
		const name = index === 0 ? 'requests-over-time.svg' : `requests-over-time-n8n-${major}.svg`;
		fs.writeFileSync(path.join(options.out, name), chart(results, merged, major));
	});
}

async function main() {
	// --queue: the scale-out run in n8n's queue mode (issue 14), a bench of its own (tools/bench/queue.ts)
	if (process.argv.includes('--queue')) return await queueBench(process.argv.slice(2));
	const options = parseArgs(process.argv.slice(2));
	if (options.reportFrom.length > 0) return reportAgain(options);
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
		totalMemoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
		loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
		benchNode: process.version,
		windowMs: options.windowMs,
		limit: LIMIT,
		batchSize: BATCH_SIZE,
		cappedServer: { profile: 'strict', maxBatchSize: CAPPED_BATCH_LIMIT, batchTooLarge: '413 text/plain, limit not stated' },
		options,
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
		`Task Backlog node: Create or Update by External ID, batching on, Batch Size ${BATCH_SIZE}; Input Data Map Automatically (keys id and title read as they are, uid ignored) or Define Below (External ID {{ $json.id }}, Title {{ $json.title }}).`,
		`Servers: open = the lenient simulator (batches of 100 accepted); limit 50, undocumented = the strict profile with a batch limit of 50, a longer batch answered 413 without the limit.`,
		`HTTP Request node: PUT {base}/tasks/{uid} per item (uid given in the input), bearer token from a Header Auth credential; paced with its Batching option (${LIMIT} items per batch, Batch Interval ${options.windowMs} ms = one window) and the node setting Retry On Fail (3 tries, 1000 ms apart; n8n's defaults). Retry On Fail re-runs the whole node when any item failed.`,
		"Wall = the node's own run time as n8n measures it. Prep = node start to its first request (reading and checking every item). Requests phase = first request to the node's end. Needed = the least requests the job takes on that server (ceil(N / accepted batch size); N for the HTTP Request node). Floor = ceil(Needed / 60) windows.",
	].join('\n');
	process.stdout.write(`${intro}\n${text}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	fs.writeFileSync(
		path.join(options.out, 'bench.json'),
		JSON.stringify({ at: new Date().toISOString(), environment: bench.environment, sync: bench.sync, returnAll: bench.returnAll, overhead: bench.overhead, profiles: bench.profiles, targets }, null, 2) + '\n',
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
