/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, @typescript-eslint/no-explicit-any -- tool code, never ships */
// A user folder: one n8n "installation" (database, settings, community packages) in a temp folder, with the package
// installed into it; importing credentials and workflows, executing a workflow, starting and stopping `n8n start`.
import { ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import * as fsp from 'fs/promises';
import * as os from 'os';
import * as path from 'path';
import { Agent, request } from 'undici';

import {
	seedDatabase,
	usesDefaultSqlite,
	writeCredentials,
	type PlainCredential,
} from './database';
import { cleanEnv, freePort, seconds, sleep, withPathFirst } from './helpers';
import { killGroup, runCommand, spawnTracked, tail, tempDirs, type RunResult } from './processes';
import { noop, type Log, type N8nInstall } from './types';

/** A database n8n uses other than its default SQLite, as the harness reaches it (tools/n8n/postgres.ts). */
export interface SqlDatabase {
	/** One SQL statement: its output, a row a line. */
	query(sql: string): Promise<string>;
}

const COMMAND_TIMEOUT_MS = 3 * 60_000;
const SERVER_MAX_LIFETIME_MS = 30 * 60_000;

export interface N8nServer {
	baseUrl: string;
	port: number;
	pid: number;
	logs(): string;
	stop(): Promise<void>;
}

export interface ExecuteResult {
	/** 0 when the workflow succeeded, 1 when it failed (n8n's own exit codes), 128+n when killed by signal n */
	code: number;
	/** parsed JSON from the first output line starting with '{' (undefined when there is none) */
	run: any;
	stdout: string;
	stderr: string;
	/** signal the process died of, if any (see crashedAtExit) */
	signal: NodeJS.Signals | null;
	/**
	 * n8n died of a signal (SIGSEGV) after printing the complete run: code is then derived from the run as n8n
	 * would have (1 if data.resultData.error, else 0). Seen with n8n 2.41.1 on Node 24.21.0 in about 1 of 4
	 * executions on a loaded machine: a V8 crash in another isolate's thread (isolated-vm, its default expression
	 * engine) while the process exits; none in 16 runs with N8N_EXPRESSION_ENGINE=legacy.
	 */
	crashedAtExit: boolean;
}

/** Parses the JSON that `n8n execute --rawOutput` prints after its log lines. */
export function parseRunOutput(stdout: string): unknown {
	const lines = stdout.split('\n');
	const first = lines.findIndex((line) => line.startsWith('{'));
	if (first < 0) return undefined;
	// the JSON may be followed by more log lines: drop trailing lines until it parses
	for (let end = lines.length; end > first; end--) {
		try {
			return JSON.parse(lines.slice(first, end).join('\n'));
		} catch {
			// keep trimming
		}
	}
	return undefined;
}

/** How `N8nUserFolder.start` runs n8n. */
interface StartOptions {
	timeoutMs?: number;
	maxLifetimeMs?: number;
	env?: Record<string, string>;
	command?: 'start' | 'worker';
	args?: string[];
}

export class N8nUserFolder {
	private readonly children = new Set<ChildProcess>();
	private readonly servers = new Set<N8nServer>();
	private readonly agent = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
	private disposed = false;

	private constructor(
		readonly install: N8nInstall,
		readonly dir: string,
		private readonly baseEnv: Record<string, string>,
		private readonly log: Log,
		private readonly database?: SqlDatabase,
	) {}

	/**
	 * A fresh user folder under os.tmpdir(). With a tgz, installs it into <dir>/.n8n/nodes as a user's community
	 * package install would (`npm i <tgz> --omit=peer --ignore-scripts`, so n8n-workflow resolves to n8n's own).
	 */
	static async create(
		install: N8nInstall,
		opts: {
			tgz?: string;
			encryptionKey?: string;
			env?: Record<string, string>;
			log?: Log;
			/** the database `env` names when it is not the default SQLite (PostgreSQL): activateAll writes there */
			database?: SqlDatabase;
		} = {},
	): Promise<N8nUserFolder> {
		const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `n8n-${install.major}-user-`));
		tempDirs.add(dir);
		const env: Record<string, string> = {
			...withPathFirst(cleanEnv(), path.dirname(install.nodeBin)),
			N8N_USER_FOLDER: dir,
			N8N_ENCRYPTION_KEY: opts.encryptionKey ?? 'task-backlog-e2e-fixed-encryption-key',
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_HIRING_BANNER_ENABLED: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
			N8N_LOG_LEVEL: 'info', // 'error' also hides the JSON that `execute` prints
			N8N_RUNNERS_BROKER_PORT: String(await freePort()), // replaced by a fresh port for every command
			npm_config_update_notifier: 'false',
		};
		// 2.x only: stops a start-up fetch (1.x refuses to start with it)
		if (install.major === 2) env.N8N_DISABLED_MODULES = 'mcp-registry';
		// 1.x on Node < 24 has no isolated-vm build: only its legacy expression engine works there
		if (install.major === 1 && Number(install.nodeVersion.replace(/^v/, '').split('.')[0]) < 24) {
			env.N8N_EXPRESSION_ENGINE = 'legacy';
		}
		Object.assign(env, opts.env ?? {});
		const folder = new N8nUserFolder(install, dir, env, opts.log ?? noop, opts.database);
		try {
			// n8n's default database, migrated already: the folder's first command does not run every migration
			if (usesDefaultSqlite(env)) await seedDatabase(install, dir, env, folder.log);
			if (opts.tgz) await folder.installPackage(opts.tgz);
		} catch (error) {
			await folder.dispose();
			throw error;
		}
		return folder;
	}

	/** The environment used for every n8n command (each command gets its own free N8N_RUNNERS_BROKER_PORT). */
	env(): Record<string, string> {
		return { ...this.baseEnv };
	}

	/** Folder community packages are installed into (<dir>/.n8n/nodes). */
	get nodesDir(): string {
		return path.join(this.dir, '.n8n', 'nodes');
	}

	private async installPackage(tgz: string): Promise<void> {
		const started = Date.now();
		await fsp.mkdir(this.nodesDir, { recursive: true });
		await fsp.writeFile(
			path.join(this.nodesDir, 'package.json'),
			JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2) + '\n',
		);
		await this.npmInNodesDir(
			[
				'install',
				path.resolve(tgz),
				'--omit=peer',
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
				// the package has no dependencies, yet npm asks the registry about its peer each time (13.5 s a
				// folder here, 3 s from its cache, which the project's own npm install has filled)
				'--prefer-offline',
			],
			{ check: true },
		);
		this.log(`installed ${path.basename(tgz)} into ${this.nodesDir} in ${seconds(started)}`);
	}

	/**
	 * Runs the pinned npm (under the Node that runs n8n) with `args` in <dir>/.n8n/nodes, created if missing, as a
	 * user runs npm in ~/.n8n/nodes; the folder's environment, nothing else (no package.json is written here).
	 */
	async npmInNodesDir(
		args: string[],
		opts: { timeoutMs?: number; check?: boolean } = {},
	): Promise<RunResult> {
		this.assertUsable();
		await fsp.mkdir(this.nodesDir, { recursive: true });
		return await runCommand(this.install.nodeBin, [this.install.npmCli, ...args], {
			cwd: this.nodesDir,
			env: {
				...this.baseEnv,
				npm_config_nodedir: path.dirname(path.dirname(this.install.nodeBin)),
			},
			timeoutMs: opts.timeoutMs ?? COMMAND_TIMEOUT_MS,
			label: `npm ${args.join(' ')}`,
			owner: this.children,
			check: opts.check,
		});
	}

	/**
	 * Which `n8n-workflow` file n8n's own code and an installed community package each load, resolved the way n8n
	 * loads community packages: n8n puts its own module paths on NODE_PATH (load-nodes-and-credentials.js, init()),
	 * and a package's require() walks up its own node_modules folders first, so a copy installed beside the package
	 * wins over n8n's. Same file, same module in n8n's process: the package's errors are n8n's classes.
	 * `package` is undefined when the package cannot resolve n8n-workflow at all.
	 */
	async n8nWorkflowResolution(packageName: string): Promise<{ n8n: string; package?: string }> {
		this.assertUsable();
		const n8nDist = path.join(this.install.dir, 'node_modules', 'n8n', 'dist');
		const packageDir = path.join(this.nodesDir, 'node_modules', packageName, 'dist');
		const script = [
			"const Module = require('module');",
			"const path = require('path');",
			'const [n8nDist, packageDir] = process.argv.slice(1);',
			'process.env.NODE_PATH = Module._nodeModulePaths(n8nDist).join(path.delimiter);',
			'Module._initPaths();',
			"const n8n = require.resolve('n8n-workflow', { paths: [n8nDist] });",
			'let seen;',
			"try { seen = require.resolve('n8n-workflow', { paths: [packageDir] }); } catch {}",
			'console.log(JSON.stringify({ n8n, package: seen }));',
		].join('\n');
		const { stdout } = await runCommand(this.install.nodeBin, ['-e', script, n8nDist, packageDir], {
			cwd: this.dir,
			env: cleanEnv(),
			timeoutMs: 60_000,
			label: `resolving n8n-workflow for ${packageName}`,
			owner: this.children,
			check: true,
		});
		return JSON.parse(stdout.trim()) as { n8n: string; package?: string };
	}

	private assertUsable(): void {
		if (this.disposed) throw new Error(`user folder ${this.dir} was disposed`);
	}

	/** Runs `n8n <args>` in this user folder (fresh broker port); resolves with its output, rejects on timeout. */
	async n8n(
		args: string[],
		opts: { timeoutMs?: number; check?: boolean } = {},
	): Promise<RunResult> {
		this.assertUsable();
		return await runCommand(this.install.nodeBin, [this.install.n8nBin, ...args], {
			cwd: this.dir,
			env: { ...this.baseEnv, N8N_RUNNERS_BROKER_PORT: String(await freePort()) },
			timeoutMs: opts.timeoutMs ?? COMMAND_TIMEOUT_MS,
			label: `n8n ${args.join(' ')}`,
			owner: this.children,
			check: opts.check,
		});
	}

	private async importFile(command: string, data: unknown): Promise<void> {
		const file = path.join(
			this.dir,
			`${command.replace(':', '-')}-${randomBytes(6).toString('hex')}.json`,
		);
		await fsp.writeFile(file, JSON.stringify(data, null, 2), { mode: 0o600 });
		try {
			await this.n8n([command, `--input=${file}`], { check: true });
		} finally {
			await fsp.rm(file, { force: true });
		}
	}

	/**
	 * Credentials as `n8n import:credentials` stores them (plain data, encrypted on the way in; workflows reference
	 * them by id): written into n8n's default database directly (seconds less, no n8n boot), else by that command.
	 */
	async importCredentials(creds: PlainCredential[]): Promise<void> {
		this.assertUsable();
		if (
			usesDefaultSqlite(this.baseEnv) &&
			(await writeCredentials(this.install, this.dir, this.baseEnv.N8N_ENCRYPTION_KEY, creds))
		)
			return;
		await this.importFile('import:credentials', creds);
	}

	/** `n8n import:workflow` of one workflow object, or of an array of them in one run (give each a fixed `id`). */
	async importWorkflow(workflow: object): Promise<void> {
		await this.importFile('import:workflow', workflow);
	}

	/** `n8n execute --id=<id> --rawOutput`: code 1 when the workflow failed; run = the printed run JSON. */
	async execute(workflowId: string, opts: { timeoutMs?: number } = {}): Promise<ExecuteResult> {
		const result = await this.n8n(['execute', `--id=${workflowId}`, '--rawOutput'], {
			timeoutMs: opts.timeoutMs,
		});
		const run = parseRunOutput(result.stdout) as
			{ data?: { resultData?: { error?: unknown } } } | undefined;
		const complete = !!run && typeof run === 'object' && !!run.data?.resultData;
		if (result.signal && complete) {
			const code = run.data?.resultData?.error ? 1 : 0;
			this.log(
				`n8n execute --id=${workflowId} died of ${result.signal} after printing its run; taken as exit ${code}`,
			);
			return { ...result, run, code, crashedAtExit: true };
		}
		return { ...result, run, crashedAtExit: false };
	}

	/**
	 * Makes workflows active for the next `start`, as n8n's own commands do: 2.x `publish:workflow` (one id a run),
	 * 1.x `update:workflow --active=true`. Each run of those boots n8n (about 4 s; 26 s for seven workflows), so on
	 * the default SQLite database the row change they make is made for every id at once instead: 2.x's
	 * WorkflowRepository.publishVersion (`active` set, `activeVersionId` = the current `versionId`, which must be in
	 * workflow_history), 1.x's WorkflowRepository.updateActiveState (the same, unchecked). n8n activates them when it
	 * starts. On a PostgreSQL database given to `create`, the same change in one statement there.
	 */
	async activateAll(ids: string[]): Promise<void> {
		if (!usesDefaultSqlite(this.baseEnv)) {
			if (this.database) return await this.activateInPostgres(ids);
			for (const id of ids) await this.activateWithN8n(id);
			return;
		}
		const publish =
			this.install.major === 2
				? [
						'const publish = db.prepare(',
						"  'UPDATE workflow_entity SET active = 1, activeVersionId = versionId WHERE id = ? AND isArchived = 0 ' +",
						"  'AND EXISTS (SELECT 1 FROM workflow_history h WHERE h.workflowId = workflow_entity.id AND h.versionId = workflow_entity.versionId)',",
						');',
					]
				: [
						"const publish = db.prepare('UPDATE workflow_entity SET active = 1, activeVersionId = versionId WHERE id = ? AND isArchived = 0');",
					];
		const script = [
			"const { DatabaseSync } = require('node:sqlite');",
			'const [file, ...ids] = process.argv.slice(1);',
			'const db = new DatabaseSync(file);',
			"db.exec('PRAGMA busy_timeout = 20000');",
			...publish,
			'const missed = ids.filter((id) => publish.run(id).changes !== 1);',
			'db.close();',
			"if (missed.length) { console.error('not activated (no such workflow, archived, or its version not in workflow_history): ' + missed.join(', ')); process.exit(1); }",
		].join('\n');
		await runCommand(
			this.install.nodeBin,
			['-e', script, path.join(this.dir, '.n8n', 'database.sqlite'), ...ids],
			{
				cwd: this.dir,
				env: cleanEnv(),
				timeoutMs: 60_000,
				label: `activating ${ids.length} workflows in n8n's SQLite database`,
				owner: this.children,
				check: true,
			},
		);
	}

	private async activateInPostgres(ids: string[]): Promise<void> {
		const bad = ids.find((id) => !/^[A-Za-z0-9]+$/.test(id));
		if (bad !== undefined) throw new Error(`not a workflow id: ${bad}`);
		const inHistory =
			this.install.major === 2
				? ' AND EXISTS (SELECT 1 FROM workflow_history h WHERE h."workflowId" = workflow_entity.id AND h."versionId" = workflow_entity."versionId")'
				: '';
		const activated = (
			await this.database!.query(
				`UPDATE workflow_entity SET active = true, "activeVersionId" = "versionId" WHERE id IN (${ids.map((id) => `'${id}'`).join(', ')}) AND "isArchived" = false${inHistory} RETURNING id`,
			)
		)
			.split('\n')
			.filter(Boolean);
		const missed = ids.filter((id) => !activated.includes(id));
		if (missed.length)
			throw new Error(
				`not activated (no such workflow, archived, or its version not in workflow_history): ${missed.join(', ')}`,
			);
	}

	/** Makes a workflow active for the next `start` (see activateAll). */
	async activate(workflowId: string): Promise<void> {
		await this.activateAll([workflowId]);
	}

	/** 2.x `publish:workflow`, 1.x `update:workflow --active=true`. */
	private async activateWithN8n(workflowId: string): Promise<void> {
		const args =
			this.install.major === 2
				? ['publish:workflow', `--id=${workflowId}`]
				: ['update:workflow', `--id=${workflowId}`, '--active=true'];
		await this.n8n(args, { check: true });
	}

	/**
	 * `n8n start` on 127.0.0.1 with a free port; resolves when /healthz/readiness answers 200 (webhooks may not be
	 * registered yet: see waitForWebhook). The server is killed after maxLifetimeMs (default 30 min) at the latest.
	 * With `command: 'worker'`, `n8n worker` (queue mode) instead, its health server on that port (baseUrl/port are
	 * the health server's), ready when its /healthz/readiness answers 200; `args` are added to the command line.
	 */
	async start(opts: StartOptions = {}): Promise<N8nServer> {
		// The port is free when chosen and taken by n8n seconds later, once it has booted; meanwhile another process
		// (a lane beside this one, any outgoing connection's ephemeral port) may take it: n8n then exits saying so, and
		// starts again on another port.
		for (let attempt = 1; ; attempt++) {
			try {
				return await this.startOnce(opts);
			} catch (error) {
				if (attempt === 3 || !/port \d+ is already in use/i.test((error as Error).message))
					throw error;
				this.log(
					`n8n ${opts.command ?? 'start'}: its port was taken before it listened; again on another`,
				);
			}
		}
	}

	private async startOnce(opts: StartOptions): Promise<N8nServer> {
		this.assertUsable();
		const started = Date.now();
		const timeoutMs = opts.timeoutMs ?? 120_000;
		const port = await freePort();
		const baseUrl = `http://127.0.0.1:${port}`;
		let logs = '';
		const append = (chunk: string) => {
			logs += chunk;
			if (logs.length > 4_000_000) logs = logs.slice(-2_000_000);
		};
		const command = opts.command ?? 'start';
		const listen: Record<string, string> =
			command === 'worker'
				? {
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(port),
						N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
					}
				: { N8N_PORT: String(port), N8N_LISTEN_ADDRESS: '127.0.0.1' };
		const { child, exited } = spawnTracked(
			this.install.nodeBin,
			[this.install.n8nBin, command, ...(opts.args ?? [])],
			{
				cwd: this.dir,
				env: {
					...this.baseEnv,
					N8N_RUNNERS_BROKER_PORT: String(await freePort()),
					...listen,
					...(opts.env ?? {}),
				},
				timeoutMs: opts.maxLifetimeMs ?? SERVER_MAX_LIFETIME_MS,
				label: `n8n ${command}`,
				owner: this.children,
				onStdout: append,
				onStderr: append,
			},
		);
		let exitedEarly: string | undefined;
		void exited.then(
			({ code, signal, timedOut }) => {
				exitedEarly = timedOut ? 'killed at its time limit' : `exited with ${code ?? signal}`;
			},
			(error: Error) => {
				exitedEarly = error.message;
			},
		);
		const stop = async () => {
			this.servers.delete(server);
			if (exitedEarly === undefined) {
				// SIGTERM to the leader only (the timeout wrapper passes it on to n8n once), the group later if need be
				try {
					child.kill('SIGTERM');
				} catch {
					// gone
				}
				// graceful shutdown first (n8n stops its task runner), the whole group killed after 20 s at the latest
				let timer: NodeJS.Timeout | undefined;
				const graceful = await Promise.race([
					exited.then(
						() => true,
						() => true,
					),
					new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 20_000))),
				]);
				clearTimeout(timer);
				if (!graceful) killGroup(child, 'SIGKILL');
			}
			await exited.catch(() => undefined);
		};
		const server: N8nServer = { baseUrl, port, pid: child.pid!, logs: () => logs, stop };
		this.servers.add(server);
		for (;;) {
			if (exitedEarly !== undefined) {
				await stop();
				throw new Error(`n8n ${command} ${exitedEarly} before it was ready\n${tail(logs)}`);
			}
			if (Date.now() - started > timeoutMs) {
				await stop();
				throw new Error(`n8n ${command} not ready after ${timeoutMs / 1000} s\n${tail(logs)}`);
			}
			try {
				const res = await request(`${baseUrl}/healthz/readiness`, {
					dispatcher: this.agent,
					headersTimeout: 5000,
					bodyTimeout: 5000,
				});
				await res.body.dump();
				if (res.statusCode === 200) return server;
			} catch {
				// not listening yet
			}
			await sleep(250);
		}
	}

	/**
	 * Polls a CORS preflight `OPTIONS <baseUrl>/webhook/<path>` (Origin + Access-Control-Request-Method) until it
	 * answers 204, i.e. the active workflow's webhook is registered for that method; readiness comes earlier. Without
	 * Access-Control-Request-Method, n8n answers 204 as soon as its routes are mounted, registered or not (seen on 2.41:
	 * 204, then the POST got 404 'not registered' for a few seconds); with it, 500 until registered.
	 * path may also start with /webhook/ or /webhook-test/.
	 */
	async waitForWebhook(
		baseUrl: string,
		webhookPath: string,
		timeoutMs = 60_000,
		method = 'POST',
	): Promise<void> {
		const url = /^\/webhook(-test|-waiting)?\//.test(webhookPath)
			? `${baseUrl}${webhookPath}`
			: `${baseUrl}/webhook/${webhookPath.replace(/^\/+/, '')}`;
		const deadline = Date.now() + timeoutMs;
		let last = 'no answer';
		for (;;) {
			try {
				const res = await request(url, {
					method: 'OPTIONS',
					headers: { origin: 'http://127.0.0.1', 'access-control-request-method': method },
					dispatcher: this.agent,
					headersTimeout: 5000,
					bodyTimeout: 5000,
				});
				await res.body.dump();
				if (res.statusCode === 204) return;
				last = `HTTP ${res.statusCode}`;
			} catch (error) {
				last = (error as Error).message;
			}
			if (Date.now() > deadline)
				throw new Error(`webhook ${url} not registered after ${timeoutMs / 1000} s (${last})`);
			await sleep(250);
		}
	}

	/** Stops servers, kills every command still running, removes the folder. */
	async dispose(): Promise<void> {
		if (this.disposed) return;
		this.disposed = true;
		await Promise.all([...this.servers].map((server) => server.stop().catch(() => undefined)));
		for (const child of this.children) killGroup(child, 'SIGKILL');
		await this.agent.close().catch(() => undefined);
		await fsp.rm(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
		tempDirs.delete(this.dir);
	}
}
