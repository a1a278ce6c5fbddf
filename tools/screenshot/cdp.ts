/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, @typescript-eslint/no-explicit-any -- tool code, never ships */
// Headless Chromium (Debian's `chromium` package) driven over the DevTools protocol, without playwright: a WebSocket
// to the browser endpoint (undici's WebSocket: Node 20 has no global one) and flat sessions for pages.
// Chromium runs in a process group of its own with a fresh profile, is killed after a time limit and when this
// process exits, and its profile is removed on close.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { WebSocket } from 'undici';

import { killGroup } from '../n8n/n8n';

type Params = Record<string, unknown>;

export interface Browser {
	pid: number;
	/** runs a command on the browser (no session) or on an attached page (sessionId) */
	send<T = any>(
		method: string,
		params?: Params,
		sessionId?: string,
		timeoutMs?: number,
	): Promise<T>;
	/** a new page target, attached (flat session); returns its sessionId */
	newPage(width: number, height: number): Promise<string>;
	close(): Promise<void>;
}

const FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-background-networking',
	'--disable-component-update',
	'--no-first-run',
	'--disable-quic',
	'--disable-sync',
	'--disable-dev-shm-usage',
	'--hide-scrollbars',
	'--remote-debugging-address=127.0.0.1',
	'--remote-debugging-port=0',
];

export function findChromium(): string {
	for (const candidate of [
		process.env.CHROMIUM_PATH,
		'/usr/bin/chromium',
		'/usr/bin/chromium-browser',
	]) {
		if (candidate && fs.existsSync(candidate)) return candidate;
	}
	throw new Error(
		'Chromium not found: install it with `apt-get update && apt-get install -y chromium` (as root), ' +
			'or set CHROMIUM_PATH',
	);
}

export async function launchChromium(opts: {
	maxLifetimeMs: number;
	width: number;
	height: number;
}): Promise<Browser> {
	const executable = findChromium();
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'task-backlog-chromium-'));
	const child = spawn(
		executable,
		[
			...FLAGS,
			`--user-data-dir=${profile}`,
			`--window-size=${opts.width},${opts.height}`,
			'about:blank',
		],
		{ detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
	);
	const onExit = () => killGroup(child, 'SIGKILL');
	process.on('exit', onExit);
	const lifetime = setTimeout(() => killGroup(child, 'SIGKILL'), opts.maxLifetimeMs);
	lifetime.unref();
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	let stderr = '';
	const cleanup = async () => {
		clearTimeout(lifetime);
		killGroup(child, 'SIGTERM');
		const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
		await exited;
		clearTimeout(timer);
		process.removeListener('exit', onExit);
		fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
	};

	let wsUrl: string;
	try {
		wsUrl = await new Promise<string>((resolve, reject) => {
			const timer = setTimeout(
				() => reject(new Error(`Chromium gave no DevTools address in 30 s\n${stderr}`)),
				30_000,
			);
			child.stderr!.setEncoding('utf8');
			child.stderr!.on('data', (chunk: string) => {
				stderr = (stderr + chunk).slice(-20_000);
				const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
				if (match) {
					clearTimeout(timer);
					resolve(match[1]);
				}
			});
			child.once('error', (error) => reject(error));
			child.once('exit', (code, signal) =>
				reject(new Error(`Chromium exited (${code ?? signal})\n${stderr}`)),
			);
		});
	} catch (error) {
		await cleanup();
		throw error;
	}

	const ws = new WebSocket(wsUrl);
	let nextId = 0;
	const pending = new Map<
		number,
		{ resolve: (v: any) => void; reject: (e: Error) => void; method: string }
	>();
	const failAll = (error: Error) => {
		for (const p of pending.values()) p.reject(error);
		pending.clear();
	};
	ws.addEventListener('message', (event) => {
		const message = JSON.parse(String(event.data)) as {
			id?: number;
			result?: unknown;
			error?: { message: string };
		};
		if (message.id === undefined) return; // events are not needed: pages are polled
		const p = pending.get(message.id);
		if (!p) return;
		pending.delete(message.id);
		if (message.error) p.reject(new Error(`${p.method}: ${message.error.message}`));
		else p.resolve(message.result);
	});
	ws.addEventListener('close', () => failAll(new Error('DevTools connection closed')));
	try {
		await new Promise<void>((resolve, reject) => {
			ws.addEventListener('open', () => resolve(), { once: true });
			ws.addEventListener('error', () => reject(new Error(`cannot connect to ${wsUrl}`)), {
				once: true,
			});
		});
	} catch (error) {
		await cleanup();
		throw error;
	}

	const send = <T = any>(
		method: string,
		params: Params = {},
		sessionId?: string,
		timeoutMs = 30_000,
	): Promise<T> =>
		new Promise<T>((resolve, reject) => {
			const id = ++nextId;
			const timer = setTimeout(() => {
				pending.delete(id);
				reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`));
			}, timeoutMs);
			pending.set(id, {
				method,
				resolve: (v) => {
					clearTimeout(timer);
					resolve(v as T);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
			ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
		});

	return {
		pid: child.pid!,
		send,
		async newPage(width: number, height: number): Promise<string> {
			const { targetId } = await send<{ targetId: string }>('Target.createTarget', {
				url: 'about:blank',
			});
			const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', {
				targetId,
				flatten: true,
			});
			await send(
				'Emulation.setDeviceMetricsOverride',
				{ width, height, deviceScaleFactor: 1, mobile: false },
				sessionId,
			);
			return sessionId;
		},
		async close(): Promise<void> {
			try {
				await send('Browser.close', {}, undefined, 5000);
			} catch {
				// killed below anyway
			}
			ws.close();
			await cleanup();
		},
	};
}
