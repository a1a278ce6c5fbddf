/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// `n8n start` for the demo: on a chosen port (the harness's start() always takes a free one and stops after 30 min),
// logging to a file, bounded by a maximum lifetime, in a process group of its own that is killed when this process
// exits. Stopped gracefully (SIGTERM to the group, n8n stops its task runner) with a SIGKILL after a grace period.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import { request } from 'undici';

import { freePort, killGroup, N8nUserFolder } from '../n8n/n8n';

export interface DemoN8n {
	baseUrl: string;
	port: number;
	pid: number;
	logFile: string;
	/** resolves when the process has ended (for whatever reason) */
	exited: Promise<string>;
	stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHook = false;

/** Whether 127.0.0.1:port can be listened on right now. */
export async function portIsFree(port: number): Promise<boolean> {
	const server = net.createServer();
	return await new Promise<boolean>((resolve) => {
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/** The wanted port when it is free, else a free one (and says so through note). */
export async function pickPort(
	wanted: number,
	what: string,
	note: (line: string) => void,
): Promise<number> {
	if (wanted === 0) return await freePort();
	if (await portIsFree(wanted)) return wanted;
	const port = await freePort();
	note(`port ${wanted} is taken: ${what} uses ${port} instead`);
	return port;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startDemoN8n(
	folder: N8nUserFolder,
	opts: {
		port: number;
		logFile: string;
		maxLifetimeMs: number;
		readyTimeoutMs?: number;
		env?: Record<string, string>;
	},
): Promise<DemoN8n> {
	if (!exitHook) {
		exitHook = true;
		process.on('exit', () => {
			for (const child of live) killGroup(child, 'SIGKILL');
		});
	}
	const { install } = folder;
	const baseUrl = `http://127.0.0.1:${opts.port}`;
	const log = fs.openSync(opts.logFile, 'a');
	const child = spawn(install.nodeBin, [install.n8nBin, 'start'], {
		cwd: folder.dir,
		env: {
			...folder.env(),
			N8N_RUNNERS_BROKER_PORT: String(await freePort()),
			N8N_PORT: String(opts.port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_EDITOR_BASE_URL: `${baseUrl}/`,
			WEBHOOK_URL: `${baseUrl}/`,
			// A local demo on the loopback interface over plain HTTP: a Secure auth cookie would not be kept by every
			// browser there (Safari; some treat 127.0.0.1 as insecure), and n8n would show its "secure cookie" page.
			N8N_SECURE_COOKIE: 'false',
			...(opts.env ?? {}),
		},
		detached: true,
		stdio: ['ignore', log, log],
	});
	fs.closeSync(log);
	live.add(child);
	let ended: string | undefined;
	const exited = new Promise<string>((resolve) => {
		child.once('error', (error) => {
			ended = `could not start: ${error.message}`;
			live.delete(child);
			resolve(ended);
		});
		child.once('exit', (code, signal) => {
			ended = code !== null ? `exited with code ${code}` : `killed by ${signal}`;
			live.delete(child);
			// the leader is gone; end whatever it left in its group (the task runner)
			try {
				if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
			} catch {
				// group empty
			}
			resolve(ended);
		});
	});
	const lifetime = setTimeout(() => killGroup(child, 'SIGKILL'), opts.maxLifetimeMs);
	lifetime.unref();
	void exited.then(() => clearTimeout(lifetime));

	let stopping: Promise<void> | undefined;
	const stop = () =>
		(stopping ??= (async () => {
			if (ended === undefined) {
				killGroup(child, 'SIGTERM');
				let timer: NodeJS.Timeout | undefined;
				const graceful = await Promise.race([
					exited.then(() => true),
					new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 20_000))),
				]);
				clearTimeout(timer);
				if (!graceful) killGroup(child, 'SIGKILL');
			}
			await exited;
		})());

	const started = Date.now();
	const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
	for (;;) {
		if (ended !== undefined)
			throw new Error(`n8n start ${ended} before it was ready (log: ${opts.logFile})`);
		if (Date.now() - started > readyTimeoutMs) {
			await stop();
			throw new Error(
				`n8n start not ready after ${readyTimeoutMs / 1000} s (log: ${opts.logFile})`,
			);
		}
		try {
			// readiness answers before the REST API is mounted (1.x: /rest/login was still 404): wait for both
			const ready = await request(`${baseUrl}/healthz/readiness`, {
				headersTimeout: 5000,
				bodyTimeout: 5000,
			});
			await ready.body.dump();
			if (ready.statusCode === 200) {
				const settings = await request(`${baseUrl}/rest/settings`, {
					headersTimeout: 5000,
					bodyTimeout: 5000,
				});
				const text = await settings.body.text();
				if (settings.statusCode === 200 && text.startsWith('{')) break;
			}
		} catch {
			// not listening yet
		}
		await sleep(250);
	}
	return { baseUrl, port: opts.port, pid: child.pid!, logFile: opts.logFile, exited, stop };
}
