// `npm run demo`: a real n8n with this package installed, against the embedded simulator of the Task Backlog Service.
//
//   1. starts the simulator (seeded on first use; state kept in <cache>/demo/simulator-state.json)
//   2. ensures a real n8n (installed into <cache> on first use: several minutes)
//   3. packs this package (npm pack) and installs the .tgz into a fresh n8n user folder, as a user would
//   4. imports a credential pointing at the simulator and every examples/*.json workflow
//   5. runs the headline example (examples/ticket-sync.json, Sync Backlog) with `n8n execute` and prints what it did
//   6. starts `n8n start` and leaves n8n and the simulator running until Ctrl-C (--once: exits after step 5)
//
// <cache> is ~/.cache/n8n-nodes-task-backlog (or $TASK_BACKLOG_CACHE). Every child process is bounded and stopped on
// exit, SIGINT and SIGTERM.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {
	cacheRoot,
	describeVersions,
	ensureN8n,
	N8nMajor,
	N8nUserFolder,
	packPackage,
} from '../n8n/n8n';
import { readArgs, type FlagKind } from '../cli/args';
import { startSimulator, type Simulator, type Task } from '../simulator/simulator';
import { DEMO_OWNER, screenshotNode } from '../screenshot/screenshot';
import { DemoN8n, pickPort, startDemoN8n } from './n8n-server';
import { seedDemoTasks } from './seed';

const USAGE = `Usage: npm run demo -- [options]
  --once             run the ticket sync, print the summary and exit (the default when stdin is not a
                     terminal, as in CI: nobody could press Ctrl-C)
  --keep-running     leave n8n and the simulator running even when stdin is not a terminal
  --port N           n8n editor port on 127.0.0.1 (default 5678; a free port if taken; 0 = any free port)
  --sim-port N       simulator port on 127.0.0.1 (default 5680; a free port if taken; 0 = any free port)
  --n8n-major 1|2    n8n 2.x (default) or 1.x
  --reset            start the simulator from the seeded backlog again (forget earlier runs)
  --state FILE       simulator state file (default <cache>/demo/simulator-state.json)
  --screenshot [FILE]  also capture the Task Backlog node in the editor (headless Chromium) to FILE
                     (default examples/screenshot-node.png); sets up the owner ${DEMO_OWNER.email} / ${DEMO_OWNER.password}
  --hours N          stop n8n and the simulator after N hours at the latest (default 8)
`;

const DEMO_TOKEN = 'demo-token';
const HEADLINE = 'ticket-sync.json';
const SYNC_NODE_TYPE = 'n8n-nodes-task-backlog.taskBacklog';
const ACTIONS = ['created', 'updated', 'reopened', 'unchanged', 'closed'] as const;
type Action = (typeof ACTIONS)[number];
// Sync Backlog's output item: { action: 'create' | 'update' | 'reopen' | 'unchanged' | 'close', uid, external_id, task }
const ACTION_NAMES: Record<string, Action> = {
	create: 'created',
	update: 'updated',
	reopen: 'reopened',
	unchanged: 'unchanged',
	close: 'closed',
};

interface Options {
	once: boolean;
	port: number;
	simPort: number;
	major: N8nMajor;
	reset: boolean;
	stateFile?: string;
	screenshot?: string;
	hours: number;
}

const FLAGS: Record<string, FlagKind> = {
	'--once': 'switch',
	'--keep-running': 'switch',
	'--port': 'value',
	'--sim-port': 'value',
	'--n8n-major': 'value',
	'--reset': 'switch',
	'--state': 'value',
	'--screenshot': 'optional',
	'--hours': 'value',
};

function parseArgs(argv: string[], projectDir: string): Options {
	const opts: Options = { once: !process.stdin.isTTY, port: 5678, simPort: 5680, major: 2, reset: false, hours: 8 };
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--once':
				opts.once = true;
				break;
			case '--keep-running':
				opts.once = false;
				break;
			case '--port':
				opts.port = arg.int(0, 65535);
				break;
			case '--sim-port':
				opts.simPort = arg.int(0, 65535);
				break;
			case '--n8n-major':
				opts.major = Number(arg.oneOf(['1', '2'])) as N8nMajor;
				break;
			case '--reset':
				opts.reset = true;
				break;
			case '--state':
				opts.stateFile = path.resolve(arg.nonEmpty('a file'));
				break;
			case '--screenshot':
				opts.screenshot = path.resolve(arg.raw ?? path.join(projectDir, 'examples', 'screenshot-node.png'));
				break;
			case '--hours':
				opts.hours = arg.int(1, 24 * 7);
				break;
		}
	});
	return opts;
}

// ---------------------------------------------------------------------------------------------------------------------
// Output

const started = Date.now();
const elapsed = () => {
	const s = Math.round((Date.now() - started) / 1000);
	return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
/** A progress line, with the time since the demo started. */
const say = (line: string) => process.stdout.write(`[demo ${elapsed()}] ${line}\n`);
const print = (line = '') => process.stdout.write(`${line}\n`);
/** A path as the user would type it: the home folder as ~. */
const tilde = (file: string) => {
	const home = os.homedir();
	return file === home || file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
};
const secondsSince = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
	const t = Date.now();
	const result = await fn();
	say(`${what} (${secondsSince(t)})`);
	return result;
}

function findProjectDir(): string {
	for (let dir = __dirname; ; dir = path.dirname(dir)) {
		const manifest = path.join(dir, 'package.json');
		if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, 'utf8')).name === 'n8n-nodes-task-backlog') return dir;
		if (path.dirname(dir) === dir) throw new Error(`package n8n-nodes-task-backlog not found above ${__dirname}`);
	}
}

// ---------------------------------------------------------------------------------------------------------------------
// Workflows

interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
}
interface Workflow {
	id: string;
	name: string;
	nodes: WorkflowNode[];
}

interface Example {
	file: string;
	workflow: Workflow;
}

function readExamples(projectDir: string): { workflows: Example[]; headline: Example } {
	const dir = path.join(projectDir, 'examples');
	const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
	const workflows = files.map((file) => {
		const workflow = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Workflow;
		if (!workflow.id || !Array.isArray(workflow.nodes)) throw new Error(`examples/${file} is not a workflow with an id`);
		return { file, workflow };
	});
	const hasSync = (w: Workflow) => w.nodes.some((n) => n.type === SYNC_NODE_TYPE && n.parameters.operation === 'syncBacklog');
	const headline =
		workflows.find((w) => w.file === HEADLINE && hasSync(w.workflow)) ?? workflows.find((w) => hasSync(w.workflow));
	if (!headline) throw new Error(`no workflow with a Sync Backlog node in ${dir} (expected examples/${HEADLINE})`);
	return { workflows, headline };
}

/** The credential the examples reference (they all use one), so that the imported one matches them. */
function exampleCredential(workflows: Workflow[]): { id: string; name: string } {
	for (const workflow of workflows) {
		for (const node of workflow.nodes) {
			const ref = node.credentials?.taskBacklogApi;
			if (ref?.id) return { id: ref.id, name: ref.name ?? 'Task Backlog (simulator)' };
		}
	}
	return { id: 'taskBacklogCredential', name: 'Task Backlog (simulator)' };
}

function nodeOutput(run: any, nodeName: string): Array<Record<string, any>> {
	const runData = run?.data?.resultData?.runData ?? run?.resultData?.runData;
	const items = runData?.[nodeName]?.[0]?.data?.main?.[0] as Array<{ json: Record<string, any> }> | undefined;
	return (items ?? []).map((item) => item.json);
}

function runError(run: any): string | undefined {
	const error = run?.data?.resultData?.error ?? run?.resultData?.error;
	if (!error) return undefined;
	return [error.message, error.description].filter(Boolean).join(': ');
}

// ---------------------------------------------------------------------------------------------------------------------
// Summary of the sync

export interface SyncSummary {
	counts: Record<Action, number>;
	lines: string[];
}

function summarise(items: Array<Record<string, any>>, sim: Simulator, sourceValue: string): SyncSummary {
	const counts = Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Record<Action, number>;
	const rows: Array<{ action: Action; id: string; title: string; link: string }> = [];
	for (const item of items) {
		const action = ACTION_NAMES[String(item.action)] ?? (String(item.action) as Action);
		counts[action] = (counts[action] ?? 0) + 1;
		const uid = String(item.uid);
		const task = (item.task ?? sim.tasks.get(uid)) as Task | undefined;
		rows.push({
			action,
			id: String(item.external_id ?? ''),
			title: String(task?.fields?.title ?? '') + (item.error ? `  (error: ${item.error})` : ''),
			link: `${sim.url}/tasks/${uid}`,
		});
	}
	rows.sort((a, b) => ACTIONS.indexOf(a.action) - ACTIONS.indexOf(b.action) || a.id.localeCompare(b.id));
	const width = Math.min(48, Math.max(...rows.map((r) => r.title.length), 5));
	const clip = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s.padEnd(width));
	const lines = rows.map((r) => `  ${r.action.padEnd(9)}  ${r.id.padEnd(8)}  ${clip(r.title)}  ${r.link}`);
	const open = [...sim.tasks.values()].filter((t) => !t.archived && t.status !== 'DONE');
	const ofSource = open.filter((t) => t.fields?.source === sourceValue).length;
	lines.push(
		'',
		`  ${ACTIONS.map((a) => `${counts[a]} ${a}`).join(', ')}`,
		`  backlog now: ${sim.tasks.size} tasks, ${open.length} open (${ofSource} of source "${sourceValue}"; ` +
			'tasks of other sources are left alone)',
	);
	return { counts, lines };
}

// ---------------------------------------------------------------------------------------------------------------------
// Everything to stop, in this order: n8n, the user folder, the simulator.

let server: DemoN8n | undefined;
let folder: N8nUserFolder | undefined;
let sim: Simulator | undefined;
let stateFile = '';
let stopping: Promise<void> | undefined;
const stopAll = () =>
	(stopping ??= (async () => {
		if (server) {
			say('stopping n8n ...');
			await server.stop().catch(() => undefined);
		}
		await folder?.dispose().catch(() => undefined);
		if (sim) {
			await sim.stop().catch(() => undefined); // writes the state file
			say(`simulator stopped; its state is kept in ${tilde(stateFile)}`);
		}
	})());

// ---------------------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
	const projectDir = findProjectDir();
	const opts = parseArgs(process.argv.slice(2), projectDir);
	const cache = cacheRoot();
	const demoDir = path.join(cache, 'demo');
	stateFile = opts.stateFile ?? path.join(demoDir, 'simulator-state.json');
	fs.mkdirSync(path.dirname(stateFile), { recursive: true });
	const n8nLog = path.join(path.dirname(stateFile), 'n8n.log');

	let firstSignal = 0;
	let wakeUp: (reason: string) => void = () => undefined;
	const onSignal = (signal: NodeJS.Signals) => {
		if (firstSignal) {
			// npm forwards the terminal's Ctrl-C to us as well: only a later, second signal means "stop now"
			if (Date.now() - firstSignal > 2000) {
				say(`${signal} again: killing everything now`);
				process.exit(130);
			}
			return;
		}
		firstSignal = Date.now();
		print();
		say(`${signal}: stopping (Ctrl-C again to kill at once) ...`);
		wakeUp(signal);
		void stopAll().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
	};
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);

	print(
		`Task Backlog demo: a real n8n ${opts.major}.x with n8n-nodes-task-backlog installed, against the embedded simulator ` +
			'of the Task Backlog Service.',
	);

	// ---- what will be installed, said up front
	const manifest = path.join(projectDir, 'tools', 'n8n', `n8n-${opts.major}`, 'package.json');
	const n8nVersion = JSON.parse(fs.readFileSync(manifest, 'utf8')).dependencies.n8n as string;
	// (the harness names its install folders n8n-<version>[-<hash of manifest and lockfile>]; it says so itself when
	// it installs after all)
	const isInstall = (name: string) =>
		(name === `n8n-${n8nVersion}` || name.startsWith(`n8n-${n8nVersion}-`)) &&
		fs.existsSync(path.join(cache, name, '.installed.json'));
	const cached = fs.existsSync(cache) && fs.readdirSync(cache).some(isInstall);
	if (!cached) {
		print(
			`First run: n8n ${n8nVersion} (and Node 24, which it needs) is installed from the npm registry into ${tilde(cache)}. ` +
				'This takes several minutes (~4 min here: npm install, then compiling sqlite3) and ~3 GB; progress lines ' +
				'follow. Later runs reuse it and take well under a minute.',
		);
	}
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes'))) {
		throw new Error('dist/ is not built: run `npm run demo` (it builds first) or `npm run build`');
	}
	const { workflows, headline } = readExamples(projectDir);
	const credential = exampleCredential(workflows.map((w) => w.workflow));

	// ---- 1. simulator
	if (opts.reset) fs.rmSync(stateFile, { force: true });
	const fresh = !fs.existsSync(stateFile);
	const simPort = await pickPort(opts.simPort, 'the simulator', say);
	try {
		sim = await startSimulator({
			port: simPort,
			tokens: [DEMO_TOKEN],
			persistFile: stateFile,
			requestsPerWindow: 60, // the real service's limit
			windowMs: 60_000,
		});
	} catch (error) {
		throw new Error(`cannot start the simulator with ${stateFile}: ${(error as Error).message} (--reset starts afresh)`);
	}
	if (fresh) seedDemoTasks(sim);
	say(
		`simulator of the Task Backlog Service at ${sim.url} (token ${DEMO_TOKEN}): ${sim.tasks.size} tasks ` +
			(fresh ? '(seeded)' : `(state of earlier runs, ${tilde(stateFile)}; --reset to start afresh)`),
	);

	// ---- 2. n8n
	const t0 = Date.now();
	const install = await ensureN8n(opts.major, say);
	say(`${describeVersions(install)} ready (${secondsSince(t0)})`);

	// ---- 3. the package, installed the way a user would
	const tgz = await step('npm pack', () => packPackage(projectDir));
	say(`packed ${path.basename(tgz)}`);
	folder = await step('installed the .tgz into a fresh n8n user folder', () =>
		N8nUserFolder.create(install, { tgz, log: () => undefined }),
	);
	say(`user folder ${folder.dir} (removed on exit)`);

	// ---- 4. credential and workflows
	await step(`imported the credential "${credential.name}" (base URL ${sim.url})`, () =>
		folder!.importCredentials([
			{ id: credential.id, name: credential.name, type: 'taskBacklogApi', data: { baseUrl: sim!.url, token: DEMO_TOKEN } },
		]),
	);
	await step(`imported ${workflows.length} example workflows (${workflows.map((w) => w.file).join(', ')})`, () =>
		folder!.importWorkflow(workflows.map((w) => w.workflow)),
	);

	// ---- 5. the headline example
	const syncNode = headline.workflow.nodes.find(
		(n) => n.type === SYNC_NODE_TYPE && n.parameters.operation === 'syncBacklog',
	)!;
	const sourceValue = String(syncNode.parameters.sourceValue ?? '');
	say(`running "${headline.workflow.name}" (examples/${headline.file}) with n8n execute ...`);
	const t = Date.now();
	const result = await folder.execute(headline.workflow.id, { timeoutMs: 180_000 });
	const items = nodeOutput(result.run, syncNode.name);
	if (result.code !== 0 || !result.run || items.length === 0) {
		print(result.stdout.trim().split('\n').slice(-30).join('\n'));
		print(result.stderr.trim().split('\n').slice(-30).join('\n'));
		throw new Error(
			`the workflow failed (n8n execute exited with ${result.code}): ` +
				(runError(result.run) ?? `no output from ${syncNode.name}`),
		);
	}
	const summary = summarise(items, sim, sourceValue);
	print();
	print(`Sync Backlog ("${syncNode.name}") in ${secondsSince(t)}, ${items.length} tasks:`);
	for (const line of summary.lines) print(line);
	print(`  (task links are the simulator's API: curl -H 'Authorization: Bearer ${DEMO_TOKEN}' <link>)`);
	print();
	if (Object.values(summary.counts).reduce((a, b) => a + b, 0) === summary.counts.unchanged) {
		say(
			'everything was already in sync (an earlier run did it): running the sync again changes nothing. ' +
				'--reset starts afresh.',
		);
	}

	if (opts.once && !opts.screenshot) {
		await stopAll();
		say(`done in ${elapsed()}`);
		return 0;
	}

	// ---- 6. n8n start
	const port = await pickPort(opts.port, 'n8n', say);
	fs.writeFileSync(n8nLog, '');
	server = await step(`n8n started (log: ${tilde(n8nLog)})`, () =>
		startDemoN8n(folder!, { port, logFile: n8nLog, maxLifetimeMs: opts.hours * 3_600_000 }),
	);
	// The harness's own signal handlers remove the user folder at once; n8n must stop first (stopAll does both).
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		for (const listener of process.listeners(signal)) if (listener !== onSignal) process.removeListener(signal, listener);
	}
	let ownerSetUp = false;
	if (opts.screenshot) {
		const shot = await step('screenshot taken', () =>
			screenshotNode({
				baseUrl: server!.baseUrl,
				workflowId: headline.workflow.id,
				nodeName: syncNode.name,
				out: opts.screenshot!,
				log: say,
			}),
		);
		ownerSetUp = true;
		const where = path.relative(process.cwd(), shot.file) || shot.file;
		say(`${where}: node "${shot.nodeName}" (${Math.round(shot.bytes / 1024)} KB)`);
		if (opts.once) {
			await stopAll();
			say(`done in ${elapsed()}`);
			return 0;
		}
	}

	const url = server.baseUrl;
	print();
	print(`n8n ${install.version} is running: ${url}`);
	print(
		ownerSetUp
			? `  sign in as ${DEMO_OWNER.email} / ${DEMO_OWNER.password}`
			: '  first visit: n8n asks you to set up its owner account: any name, e-mail and password (kept only in ' +
					"this run's temporary user folder)",
	);
	for (const { file, workflow } of workflows) {
		print(`  ${url}/workflow/${workflow.id}  ${workflow.name} (examples/${file})`);
	}
	print(`  the credential "${credential.name}" points at the simulator; open the ticket sync and press Execute workflow`);
	print(`Simulator of the Task Backlog Service: ${sim.url} (token ${DEMO_TOKEN})`);
	print(`  all tasks: http://127.0.0.1:${sim.port}/_sim/state  (state kept in ${tilde(stateFile)})`);
	print(`Ctrl-C stops n8n and the simulator (at the latest after ${opts.hours} h).`);

	const reason = await new Promise<string>((resolve) => {
		wakeUp = resolve;
		void server!.exited.then((how) => resolve(`n8n ${how}`));
	});
	if (reason.startsWith('n8n ')) {
		say(`${reason} (log: ${tilde(n8nLog)}); stopping the simulator`);
		await stopAll();
		return 1;
	}
	await new Promise<never>(() => undefined); // the signal handler exits when everything is stopped
	return 0;
}

main().then(
	(code) => process.exit(code),
	async (error: Error) => {
		process.stderr.write(`\ndemo failed: ${error.message}\n`);
		const timer = setTimeout(() => process.exit(1), 30_000);
		timer.unref();
		await stopAll();
		process.exit(1);
	},
);
