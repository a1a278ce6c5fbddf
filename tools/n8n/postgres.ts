/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// A real PostgreSQL for n8n's queue mode in the bench and the tests: n8n's documentation recommends it over sqlite
// there, and with sqlite several workers writing executions at once meet SQLITE_BUSY (measured: 3 of 1,000 one-ticket
// executions failed in n8n itself). Debian's postgresql, installed when missing (apt-get, as root); a throwaway cluster (initdb)
// in a temp folder, owned by the `postgres` user (the server refuses to run as root), on a free loopback port with
// trust authentication, stopped and removed after. When it cannot be had, callers get the reason.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

import type { Log } from './n8n';
import { freePort } from './n8n';
import { aptInstall } from './apt';
import { runCommand, startService } from './processes';

const POSTGRES_MAX_LIFETIME_MS = 3 * 60 * 60_000;
const OS_USER = 'postgres';
const DB_USER = 'n8n';

export interface PostgresInstall {
	binDir: string;
	version: string;
}

export type PostgresAvailability = PostgresInstall | { skipped: string };

export interface PostgresServer {
	/** n8n's settings for this database (DB_TYPE=postgresdb and the connection) */
	n8nEnv: Record<string, string>;
	/**
	 * A fresh database on this server (CREATE DATABASE): one server holds the databases of several n8n installations
	 * (one a major), as one machine would.
	 */
	createDatabase(name: string): Promise<PostgresDatabase>;
	/** One SQL statement on the server's default database (the one `n8nEnv` names): its output, a row a line. */
	query(sql: string): Promise<string>;
	stop(): Promise<void>;
}

export interface PostgresDatabase {
	/** n8n's settings for this database (DB_TYPE=postgresdb and the connection) */
	n8nEnv: Record<string, string>;
	/** One SQL statement through psql: its output, unaligned, without headers. */
	query(sql: string): Promise<string>;
}

/** The newest /usr/lib/postgresql/<major>/bin holding a server binary (Debian's layout). */
function findBinDir(): string | undefined {
	const root = '/usr/lib/postgresql';
	if (!fs.existsSync(root)) return undefined;
	return fs
		.readdirSync(root)
		.filter((major) => fs.existsSync(path.join(root, major, 'bin', 'postgres')))
		.sort((a, b) => Number(b) - Number(a))
		.map((major) => path.join(root, major, 'bin'))[0];
}

function versionOf(binDir: string): string {
	const result = spawnSync(path.join(binDir, 'postgres'), ['--version'], {
		encoding: 'utf8',
		timeout: 10_000,
	});
	return /(\d+(\.\d+)*)/.exec(result.stdout ?? '')?.[1] ?? (result.stdout ?? '').trim();
}

function osUserIds(): { uid: number; gid: number } | undefined {
	const result = spawnSync('id', ['-u', OS_USER], { encoding: 'utf8' });
	const group = spawnSync('id', ['-g', OS_USER], { encoding: 'utf8' });
	if (result.status !== 0 || group.status !== 0) return undefined;
	return { uid: Number(result.stdout.trim()), gid: Number(group.stdout.trim()) };
}

/** Debian's postgresql server; when missing, Debian's package (aptInstall). */
export function ensurePostgres(log: Log): PostgresAvailability {
	let binDir = findBinDir();
	if (!binDir || !osUserIds()) {
		const failed = aptInstall('postgresql', log);
		binDir = findBinDir();
		if (failed || !binDir || !osUserIds())
			return {
				skipped:
					failed ?? `apt-get installed postgresql, but without a server or a "${OS_USER}" user`,
			};
	}
	return { binDir, version: versionOf(binDir) };
}

function accepts(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = net.connect({ host: '127.0.0.1', port });
		const done = (ok: boolean) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(2000, () => done(false));
		socket.once('error', () => done(false));
		socket.once('connect', () => done(true));
	});
}

/** A fresh cluster (initdb, trust auth, superuser `n8n`) served on 127.0.0.1 and a free port; resolves once it is ready. */
export async function startPostgres(
	{ binDir, version }: PostgresInstall,
	log: Log,
): Promise<PostgresServer> {
	const ids = osUserIds();
	if (!ids) throw new Error(`there is no "${OS_USER}" user to run PostgreSQL as`);
	const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'task-backlog-postgres-'));
	await fsp.chown(dir, ids.uid, ids.gid);
	const data = path.join(dir, 'data');
	const init = spawnSync(
		path.join(binDir, 'initdb'),
		['-D', data, '-U', DB_USER, '--auth=trust', '--encoding=UTF8', '--no-sync'],
		{ encoding: 'utf8', cwd: dir, uid: ids.uid, gid: ids.gid, timeout: 120_000 },
	);
	if (init.status !== 0) {
		await fsp.rm(dir, { recursive: true, force: true });
		throw new Error(`initdb failed: ${`${init.stdout}\n${init.stderr}`.trim().slice(-2000)}`);
	}
	const port = await freePort();
	// runuser: the server refuses to run as root, and the harness spawns commands as this process's user
	const args = ['-u', OS_USER, '--', path.join(binDir, 'postgres'), '-D', data, '-p', String(port)];
	args.push('-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off');
	args.push('-c', 'max_connections=200');
	const { pid, stop } = await startService('/usr/sbin/runuser', args, {
		dir,
		label: 'postgres',
		maxLifetimeMs: POSTGRES_MAX_LIFETIME_MS,
		ready: async (output) => /ready to accept connections/.test(output) && (await accepts(port)),
	});
	log(`postgres ${version} on 127.0.0.1:${port} (pid ${pid})`);
	const query = async (sql: string, database = 'postgres') =>
		(
			await runCommand(
				path.join(binDir, 'psql'),
				[
					'-h',
					'127.0.0.1',
					'-p',
					String(port),
					'-U',
					DB_USER,
					'-d',
					database,
					'-X',
					'-A',
					'-t',
					'-q',
				].concat(['-v', 'ON_ERROR_STOP=1', '-c', sql]),
				{
					cwd: os.tmpdir(),
					env: { PATH: process.env.PATH ?? '' },
					timeoutMs: 60_000,
					label: 'psql',
					check: true,
				},
			)
		).stdout;
	const n8nEnv = (database: string) => ({
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(port),
		DB_POSTGRESDB_DATABASE: database,
		DB_POSTGRESDB_USER: DB_USER,
		DB_POSTGRESDB_PASSWORD: 'unused-trust-auth',
		// n8n's defaults (2 connections a process, 20 s to get one) time out ("timeout exceeded when trying to
		// connect") when a worker runs 100 executions at once
		DB_POSTGRESDB_POOL_SIZE: '20',
		DB_POSTGRESDB_CONNECTION_TIMEOUT: '60000',
	});
	return {
		n8nEnv: n8nEnv('postgres'),
		createDatabase: async (name: string) => {
			if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
			await query(`CREATE DATABASE ${name}`);
			return { n8nEnv: n8nEnv(name), query: (sql: string) => query(sql, name) };
		},
		query: (sql: string) => query(sql),
		stop,
	};
}

/** One execution as n8n's database stores it: its id, its status and its data (n8n's serialized run data). */
export interface StoredExecution {
	id: number;
	status: string;
	data: string;
}

/** One SQL statement on n8n's database: its output (PostgresDatabase.query, PostgresServer.query). */
type Query = (sql: string) => Promise<string>;

/** The statuses of an execution that has ended (one running or waiting has none of them). */
const ENDED = `('success', 'error', 'crashed', 'canceled')`;

/** The newest execution's id in n8n's database (0 when there is none): executions started later have higher ones. */
export async function lastExecutionId(query: Query): Promise<number> {
	return Number(await query('SELECT coalesce(max(id), 0) FROM execution_entity'));
}

/** How many executions of one workflow after execution `afterId` have ended. */
export async function endedExecutionCount(
	query: Query,
	workflowId: string,
	afterId = 0,
): Promise<number> {
	return Number(
		await query(
			`SELECT count(*) FROM execution_entity WHERE "workflowId" = '${workflowId}' AND id > ${afterId} AND status IN ${ENDED}`,
		),
	);
}

/**
 * The executions of one workflow after execution `afterId` (0: all of them), oldest first, each with its data;
 * `endedOnly` leaves out those still running.
 */
export async function storedExecutions(
	query: Query,
	workflowId: string,
	{ afterId = 0, endedOnly = false }: { afterId?: number; endedOnly?: boolean } = {},
): Promise<StoredExecution[]> {
	const ended = endedOnly ? ` AND e.status IN ${ENDED}` : '';
	return JSON.parse(
		await query(
			`SELECT coalesce(json_agg(json_build_object('id', e.id, 'status', e.status, 'data', d.data) ORDER BY e.id), '[]') FROM execution_entity e JOIN execution_data d ON d."executionId" = e.id WHERE e."workflowId" = '${workflowId}' AND e.id > ${afterId}${ended}`,
		),
	) as StoredExecution[];
}
