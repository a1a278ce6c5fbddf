/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// A real Redis for n8n's queue mode: Debian's redis-server, installed by the test set-up when it is missing (apt.ts),
// started on a free loopback port with no persistence, stopped by its pid. When it cannot be had, callers get the
// reason and report the test skipped, never passed.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

import type { Log } from './n8n';
import { freePort } from './n8n';
import { aptInstall, onPath } from './apt';
import { startService } from './processes';

export type RedisAvailability =
	{ bin: string; version: string; installedNow: boolean } | { skipped: string };

const REDIS_MAX_LIFETIME_MS = 60 * 60_000;

function versionOf(bin: string): string {
	const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
	return /v=(\S+)/.exec(result.stdout ?? '')?.[1] ?? (result.stdout ?? '').trim();
}

/** redis-server from PATH ($REDIS_SERVER_BIN first); when missing, Debian's package (aptInstall). */
export function ensureRedis(log: Log): RedisAvailability {
	const given = process.env.REDIS_SERVER_BIN;
	const found = given && fs.existsSync(given) ? given : onPath('redis-server');
	if (found) return { bin: found, version: versionOf(found), installedNow: false };
	const failed = aptInstall('redis-server', log);
	const bin = onPath('redis-server');
	if (failed || !bin)
		return { skipped: failed ?? 'apt-get installed redis-server, but it is not on PATH' };
	return { bin, version: versionOf(bin), installedNow: true };
}

export interface RedisServer {
	host: string;
	port: number;
	pid: number;
	stop(): Promise<void>;
}

/** One PING over a fresh connection: resolves true on +PONG. */
function ping(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = net.connect({ host: '127.0.0.1', port });
		let answer = '';
		const done = (ok: boolean) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(2000, () => done(false));
		socket.once('error', () => done(false));
		socket.once('connect', () => socket.write('PING\r\n'));
		socket.on('data', (chunk) => {
			answer += chunk.toString('utf8');
			if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
		});
	});
}

/**
 * redis-server on 127.0.0.1 and a free port, in a temp folder, without persistence (nothing is written to disk),
 * killed at its time limit at the latest; resolves once it answers PING.
 */
export async function startRedis(bin: string, log: Log): Promise<RedisServer> {
	const port = await freePort();
	const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'task-backlog-redis-'));
	const args = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', ''];
	args.push('--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'yes');
	const { pid, stop } = await startService(bin, args, {
		dir,
		label: 'redis-server',
		maxLifetimeMs: REDIS_MAX_LIFETIME_MS,
		ready: () => ping(port),
	});
	log(`redis-server on 127.0.0.1:${port} (pid ${pid})`);
	return { host: '127.0.0.1', port, pid, stop };
}
