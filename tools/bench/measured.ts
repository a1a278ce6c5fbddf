/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-explicit-any -- tool code, never ships */
// A benchmark's n8n user folder: the harness's N8nUserFolder (tools/n8n/n8n.ts) plus, per `n8n execute`, the
// process's own CPU time and peak RSS (written at exit by rusage-hook, loaded with NODE_OPTIONS=--require) and the
// wall time of the command.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as os from 'os';
import * as path from 'path';

import type { Log, N8nInstall } from '../n8n/n8n';
import { freePort, N8nUserFolder } from '../n8n/n8n';

export interface ProcessUsage {
	userCpuMs: number;
	systemCpuMs: number;
	/** peak resident set size (VmHWM) of the `n8n execute` process, in MB */
	peakRssMb: number;
	pid: number;
	/** when the process started: epoch ms, and the same instant on the monotonic clock (µs) of CPU profiles */
	startedAt: number;
	startedAtMonotonicUs: number;
}

export interface MeasuredRun {
	code: number;
	/** the run JSON printed by `n8n execute --rawOutput` (undefined when there is none) */
	run: any;
	stdout: string;
	stderr: string;
	/** wall time of the whole `n8n execute` command (start-up included) */
	wallMs: number;
	/** the `n8n execute` process itself (not its task runner), when the hook reported */
	usage?: ProcessUsage;
}

const HOOK = path.join(__dirname, 'rusage-hook.js');

/**
 * The run JSON that `n8n execute --rawOutput` prints (pretty, 2 spaces) among its log lines: from the first line that
 * starts with '{' to a line that is exactly '}' (only the outermost object closes without indentation). Linear in
 * the output size; the harness's parseRunOutput drops one trailing line per JSON.parse attempt, which is quadratic
 * and takes minutes when a failed run of 10,000 items is followed by log lines.
 */
export function parseRun(stdout: string): any {
	const lines = stdout.split('\n');
	const first = lines.findIndex((line) => line.startsWith('{'));
	if (first < 0) return undefined;
	for (let end = first; end < lines.length; end++) {
		if (lines[end].trimEnd() !== '}') continue;
		try {
			return JSON.parse(lines.slice(first, end + 1).join('\n'));
		} catch {
			// not the outermost object yet
		}
	}
	return undefined;
}

export class MeasuredFolder {
	private constructor(
		readonly folder: N8nUserFolder,
		private readonly usageDir: string | undefined,
	) {}

	/** With `measure`, every n8n process of the folder reports its resource usage (needs the compiled hook). */
	static async create(
		install: N8nInstall,
		opts: { tgz: string; log: Log; measure?: boolean; env?: Record<string, string> },
	): Promise<MeasuredFolder> {
		let usageDir: string | undefined;
		const env: Record<string, string> = { ...opts.env };
		if (opts.measure) {
			if (!fs.existsSync(HOOK)) throw new Error(`${HOOK} is missing: run npm run build:tools`);
			usageDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'task-backlog-rusage-'));
			env.NODE_OPTIONS = [`--require ${HOOK}`, opts.env?.NODE_OPTIONS].filter(Boolean).join(' ');
			env.TASK_BACKLOG_RUSAGE_DIR = usageDir;
		}
		const folder = await N8nUserFolder.create(install, { tgz: opts.tgz, log: opts.log, env });
		return new MeasuredFolder(folder, usageDir);
	}

	/** `n8n execute --id=…`; `nodeOptions` are added to NODE_OPTIONS for this run only (e.g. `--cpu-prof`). */
	async execute(
		workflowId: string,
		timeoutMs: number,
		opts: { nodeOptions?: string } = {},
	): Promise<MeasuredRun> {
		if (this.usageDir) {
			for (const file of await fsp.readdir(this.usageDir))
				await fsp.rm(path.join(this.usageDir, file), { force: true });
		}
		const started = Date.now();
		const result = await this.runToFiles(
			['execute', `--id=${workflowId}`, '--rawOutput'],
			timeoutMs,
			opts.nodeOptions,
		);
		const wallMs = Date.now() - started;
		return {
			...result,
			run: parseRun(result.stdout),
			wallMs,
			usage: await this.usageOf(workflowId),
		};
	}

	/**
	 * `n8n <args>` with stdout and stderr going to files, not pipes: n8n prints the run through its logger and calls
	 * process.exit() soon after, and through a pipe a large run (10,000 items: ~26 MB) was cut off at ~1.5 MB. Own
	 * process group, killed whole at the time limit and when this process exits.
	 */
	async runToFiles(
		args: string[],
		timeoutMs: number,
		nodeOptions?: string,
	): Promise<{ code: number; stdout: string; stderr: string }> {
		const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'task-backlog-run-'));
		const outFile = path.join(dir, 'stdout');
		const errFile = path.join(dir, 'stderr');
		const out = fs.openSync(outFile, 'w');
		const err = fs.openSync(errFile, 'w');
		const { install } = this.folder;
		const env = this.folder.env();
		if (nodeOptions) env.NODE_OPTIONS = [env.NODE_OPTIONS, nodeOptions].filter(Boolean).join(' ');
		const child = spawn(install.nodeBin, [install.n8nBin, ...args], {
			cwd: this.folder.dir,
			env: { ...env, N8N_RUNNERS_BROKER_PORT: String(await freePort()) },
			detached: true,
			stdio: ['ignore', out, err],
		});
		fs.closeSync(out);
		fs.closeSync(err);
		const killGroup = () => {
			try {
				process.kill(-child.pid!, 'SIGKILL');
			} catch {
				// already gone
			}
		};
		process.on('exit', killGroup);
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			killGroup();
		}, timeoutMs);
		try {
			const code = await new Promise<number>((resolve, reject) => {
				child.once('error', reject);
				child.once('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
			});
			killGroup(); // whatever it left behind in its group (the task runner)
			const [stdout, stderr] = await Promise.all([
				fsp.readFile(outFile, 'utf8'),
				fsp.readFile(errFile, 'utf8'),
			]);
			if (timedOut) {
				throw new Error(
					`n8n ${args.join(' ')}: killed after ${timeoutMs / 1000} s\n${(stdout + stderr).slice(-3000)}`,
				);
			}
			return { code, stdout, stderr };
		} finally {
			clearTimeout(timer);
			process.off('exit', killGroup);
			await fsp.rm(dir, { recursive: true, force: true });
		}
	}

	private async usageOf(workflowId: string): Promise<ProcessUsage | undefined> {
		if (!this.usageDir) return undefined;
		for (const file of await fsp.readdir(this.usageDir)) {
			const record = JSON.parse(await fsp.readFile(path.join(this.usageDir, file), 'utf8')) as {
				argv: string[];
				userCpuMs: number;
				systemCpuMs: number;
				maxRssKb: number;
				pid: number;
				startedAt: number;
				startedAtMonotonicUs: number;
			};
			if (record.argv.includes('execute') && record.argv.includes(`--id=${workflowId}`)) {
				return {
					userCpuMs: record.userCpuMs,
					systemCpuMs: record.systemCpuMs,
					peakRssMb: record.maxRssKb / 1024,
					pid: record.pid,
					startedAt: record.startedAt,
					startedAtMonotonicUs: record.startedAtMonotonicUs,
				};
			}
		}
		return undefined;
	}

	async dispose(): Promise<void> {
		await this.folder.dispose();
		if (this.usageDir) await fsp.rm(this.usageDir, { recursive: true, force: true });
	}
}
