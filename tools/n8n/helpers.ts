/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// Small helpers of the harness: ports, a clean environment, hashes, a lock folder between processes, heartbeats.
import { createHash } from 'crypto';
import * as fsp from 'fs/promises';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

import { heldLocks, installExitHooks } from './processes';
import type { Log } from './types';

const LOCK_WAIT_MS = 60 * 60_000;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
export function cleanEnv(): Record<string, string> {
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

export function withPathFirst(env: Record<string, string>, dir: string): Record<string, string> {
	return { ...env, PATH: [dir, env.PATH ?? ''].filter(Boolean).join(path.delimiter) };
}

export function sha256(...parts: string[]): string {
	const hash = createHash('sha256');
	for (const part of parts) hash.update(part).update('\0');
	return hash.digest('hex');
}

export async function readJson<T>(file: string): Promise<T | undefined> {
	try {
		return JSON.parse(await fsp.readFile(file, 'utf8')) as T;
	} catch {
		return undefined;
	}
}

export function processAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/** Runs fn while holding a lock folder (mkdir is atomic); waits for another holder, removes a dead holder's lock. */
export async function withLock<T>(
	lockDir: string,
	what: string,
	log: Log,
	fn: () => Promise<T>,
): Promise<T> {
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
		const owner = await readJson<{ pid: number; host: string; since: number }>(
			path.join(lockDir, 'owner.json'),
		);
		let stale: string | undefined;
		if (!owner) {
			const age =
				Date.now() - (await fsp.stat(lockDir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
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
export async function withHeartbeat<T>(log: Log, what: string, fn: () => Promise<T>): Promise<T> {
	const started = Date.now();
	const timer = setInterval(
		() => log(`... still ${what} (${Math.round((Date.now() - started) / 1000)} s)`),
		30_000,
	);
	timer.unref();
	try {
		return await fn();
	} finally {
		clearInterval(timer);
	}
}

export const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
