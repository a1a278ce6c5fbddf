/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Process bookkeeping: everything the harness spawns has a time limit, runs in a process group of its own, is
// tracked, and is killed (the whole group) when this process goes away; with it the locks and temp folders to remove.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';

export const liveChildren = new Set<ChildProcess>();
export const heldLocks = new Set<string>();
export const tempDirs = new Set<string>();
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

export function installExitHooks(): void {
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
const timeoutBin =
	process.platform === 'linux'
		? ['/usr/bin/timeout', '/bin/timeout'].find((f) => fs.existsSync(f))
		: undefined;

/**
 * A detached child starts a session, and with it (Linux's autogroup scheduling) a CPU share of its own that ignores
 * this process's nice value: its group gets that value too, so that a lowered priority (`npm test`'s lane "rest")
 * also holds for the n8n it starts.
 */
function keepPriority(child: ChildProcess): void {
	if (process.platform !== 'linux' || child.pid === undefined) return;
	const nice = os.getPriority();
	if (nice <= 0) return;
	try {
		fs.writeFileSync(`/proc/${child.pid}/autogroup`, String(nice));
	} catch {
		// no autogroup scheduling here: the nice value the child inherited is what counts
	}
}

export function spawnTracked(command: string, args: string[], opts: SpawnOptions): Tracked {
	installExitHooks();
	const backstop = timeoutBin
		? ['-s', 'KILL', `${Math.ceil(opts.timeoutMs / 1000) + 30}s`, command]
		: [];
	const child = spawn(timeoutBin ?? command, [...backstop, ...args], {
		cwd: opts.cwd,
		env: opts.env,
		detached: true, // own process group, so that a stop also ends grandchildren (n8n's task runner)
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	keepPriority(child);
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
	const exited = new Promise<{
		code: number | null;
		signal: NodeJS.Signals | null;
		timedOut: boolean;
	}>((resolve, reject) => {
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
	});
	return { child, exited };
}

/** A server the harness started (Redis, PostgreSQL): its pid, and a stop that also removes its folder. */
export interface StartedService {
	pid: number;
	stop(): Promise<void>;
}

/**
 * Starts a long-running server in `dir` (removed by stop), killed at its time limit at the latest; resolves once
 * `ready(output so far)` says so, rejects (after stopping it) when it exits first or is not ready within 60 s.
 */
export async function startService(
	command: string,
	args: string[],
	opts: {
		dir: string;
		label: string;
		maxLifetimeMs: number;
		ready: (output: string) => Promise<boolean>;
	},
): Promise<StartedService> {
	let output = '';
	const { child, exited } = spawnTracked(command, args, {
		cwd: opts.dir,
		env: { PATH: process.env.PATH ?? '' },
		timeoutMs: opts.maxLifetimeMs,
		label: opts.label,
		onStdout: (chunk) => (output += chunk),
		onStderr: (chunk) => (output += chunk),
	});
	let gone: string | undefined;
	void exited.then(
		({ code, signal }) => (gone = `exited with ${code ?? signal}`),
		(error: Error) => (gone = error.message),
	);
	const stop = async () => {
		if (gone === undefined) {
			killGroup(child, 'SIGTERM');
			const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
			await exited.catch(() => undefined);
			clearTimeout(timer);
		}
		fs.rmSync(opts.dir, { recursive: true, force: true });
	};
	const deadline = Date.now() + 60_000;
	while (!(await opts.ready(output))) {
		if (gone !== undefined || Date.now() > deadline) {
			await stop();
			throw new Error(
				`${opts.label} ${gone ?? 'was not ready within 60 s'}:\n${output.slice(-2000)}`,
			);
		}
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	return { pid: child.pid!, stop };
}

export interface RunResult {
	/** exit code; 128 + signal number when killed by a signal */
	code: number;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

export function tail(text: string, lines = 40): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Runs a command to its end; rejects on timeout (not on a non-zero exit unless check is set). */
export async function runCommand(
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
		throw new Error(
			`${opts.label}: timed out after ${Math.round(opts.timeoutMs / 1000)} s and was killed\n${output}`,
		);
	}
	const code =
		result.code ?? 128 + (result.signal ? (os.constants.signals[result.signal] ?? 0) : 0);
	if (opts.check && code !== 0) {
		throw new Error(`${opts.label}: exited with ${result.code ?? result.signal}\n${output}`);
	}
	return { code, signal: result.signal, stdout, stderr };
}
