/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// A user folder's SQLite database without booting n8n for it: every n8n command boots n8n (4 to 10 s, its first one
// also runs every migration). A fresh folder starts from a copy of a database n8n migrated once per version (kept in
// the cache), and credentials are written into it as `n8n import:credentials` writes them: encrypted by n8n's Cipher
// (n8n-core), shared with the owner's personal project.
import { createCipheriv, createHash, randomBytes } from 'crypto';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as os from 'os';
import * as path from 'path';

import { cleanEnv } from './helpers';
import { cacheRoot } from './install';
import { runCommand } from './processes';
import type { Log, N8nInstall } from './types';

/** A credential as `n8n import:credentials` takes it: plain data, encrypted on the way in. */
export interface PlainCredential {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

/**
 * n8n-core's Cipher.encrypt, byte for byte: "Salted__", an 8-byte salt, then AES-256-CBC with the key and IV that
 * OpenSSL's EVP_BytesToKey (MD5, one round) derives from the encryption key and the salt; base64.
 */
export function encryptAsN8n(data: object, encryptionKey: string): string {
	const salt = randomBytes(8);
	const password = Buffer.concat([Buffer.from(encryptionKey, 'binary'), salt]);
	const hash1 = createHash('md5').update(password).digest();
	const hash2 = createHash('md5')
		.update(Buffer.concat([hash1, password]))
		.digest();
	const iv = createHash('md5')
		.update(Buffer.concat([hash2, password]))
		.digest();
	const cipher = createCipheriv('aes-256-cbc', Buffer.concat([hash1, hash2]), iv);
	const encrypted = Buffer.concat([cipher.update(JSON.stringify(data)), cipher.final()]);
	return Buffer.concat([Buffer.from('Salted__'), salt, encrypted]).toString('base64');
}

/** Whether a folder with this environment keeps n8n's default database: SQLite, no table prefix. */
export function usesDefaultSqlite(env: Record<string, string>): boolean {
	return (env.DB_TYPE ?? 'sqlite') === 'sqlite' && !env.DB_TABLE_PREFIX && !env.DB_SQLITE_DATABASE;
}

const databaseFile = (userFolder: string) => path.join(userFolder, '.n8n', 'database.sqlite');

/**
 * Copies into `userFolder` the database this n8n version's migrations make, made once (by `n8n import:credentials`
 * of nothing in a scratch folder) and kept in the cache. Returns false when it could not be made: the folder's first
 * command then migrates as before.
 */
export async function seedDatabase(
	install: N8nInstall,
	userFolder: string,
	env: Record<string, string>,
	log: Log,
): Promise<boolean> {
	const template = path.join(
		cacheRoot(),
		'databases',
		`n8n-${install.version}-node-${install.nodeVersion}.sqlite`,
	);
	try {
		if (!fs.existsSync(template)) await makeTemplate(install, template, env, log);
		await fsp.mkdir(path.join(userFolder, '.n8n'), { recursive: true });
		await fsp.copyFile(template, databaseFile(userFolder));
		return true;
	} catch (error) {
		log(`n8n ${install.major}.x migrated database: not used (${(error as Error).message})`);
		return false;
	}
}

async function makeTemplate(
	install: N8nInstall,
	template: string,
	env: Record<string, string>,
	log: Log,
): Promise<void> {
	const started = Date.now();
	const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), `n8n-${install.major}-template-`));
	try {
		const input = path.join(scratch, 'none.json');
		await fsp.writeFile(input, '[]');
		await runCommand(install.nodeBin, [install.n8nBin, 'import:credentials', `--input=${input}`], {
			cwd: scratch,
			env: { ...env, N8N_USER_FOLDER: scratch },
			timeoutMs: 3 * 60_000,
			label: 'n8n import:credentials (a migrated database)',
			check: true,
		});
		// n8n has exited: its write-ahead log is checkpointed into the file
		await checkpoint(install, databaseFile(scratch));
		await fsp.mkdir(path.dirname(template), { recursive: true });
		// another process may make it at the same time: each writes its own file, the rename is atomic
		const mine = `${template}.${process.pid}.${randomBytes(4).toString('hex')}`;
		await fsp.copyFile(databaseFile(scratch), mine);
		await fsp.rename(mine, template);
		log(
			`n8n ${install.major}.x migrated database made in ${((Date.now() - started) / 1000).toFixed(1)} s`,
		);
	} finally {
		await fsp.rm(scratch, { recursive: true, force: true });
	}
}

/** Runs a script on a SQLite file with the n8n install's Node (node:sqlite), the file as argv[1]. */
async function sqlite(install: N8nInstall, file: string, script: string[], args: string[] = []) {
	return await runCommand(install.nodeBin, ['-e', script.join('\n'), file, ...args], {
		cwd: path.dirname(file),
		env: cleanEnv(),
		timeoutMs: 60_000,
		label: `SQLite script on ${path.basename(file)}`,
		check: true,
	});
}

async function checkpoint(install: N8nInstall, file: string) {
	await sqlite(install, file, [
		"const { DatabaseSync } = require('node:sqlite');",
		'const db = new DatabaseSync(process.argv[1]);',
		"db.exec('PRAGMA wal_checkpoint(TRUNCATE)');",
		"const tables = db.prepare(\"SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('credentials_entity', 'shared_credentials', 'project', 'project_relation')\").get().n;",
		'db.close();',
		"if (tables !== 4) { console.error('not migrated: ' + tables + ' of 4 tables'); process.exit(1); }",
	]);
}

/**
 * Writes credentials into a folder's database as `n8n import:credentials` does: each row (created, or replaced when
 * its id exists) with its data encrypted, owned by the owner's personal project. False when the database is not
 * there yet: the caller imports with n8n then.
 */
export async function writeCredentials(
	install: N8nInstall,
	userFolder: string,
	encryptionKey: string,
	credentials: PlainCredential[],
): Promise<boolean> {
	const file = databaseFile(userFolder);
	if (!fs.existsSync(file)) return false;
	const rows = credentials.map(({ id, name, type, data }) => ({
		id,
		name,
		type,
		data: encryptAsN8n(data, encryptionKey),
	}));
	// the rows go by a file of the folder's (their data is encrypted, but stays off command lines)
	const input = path.join(userFolder, `credentials-${randomBytes(6).toString('hex')}.json`);
	await fsp.writeFile(input, JSON.stringify(rows), { mode: 0o600 });
	try {
		await sqlite(
			install,
			file,
			[
				"const { DatabaseSync } = require('node:sqlite');",
				"const fs = require('fs');",
				'const rows = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));',
				'const db = new DatabaseSync(process.argv[1]);',
				"db.exec('PRAGMA busy_timeout = 20000');",
				"const owners = db.prepare(\"SELECT p.id FROM project p JOIN project_relation r ON r.projectId = p.id WHERE p.type = 'personal' AND r.role = 'project:personalOwner'\").all();",
				"if (owners.length !== 1) { console.error('the owner\\'s personal project: ' + owners.length + ' found'); process.exit(1); }",
				"const credential = db.prepare(\"INSERT INTO credentials_entity (id, name, data, type) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, data = excluded.data, type = excluded.type, updatedAt = STRFTIME('%Y-%m-%d %H:%M:%f', 'NOW')\");",
				'const shared = db.prepare("INSERT OR IGNORE INTO shared_credentials (credentialsId, projectId, role) VALUES (?, ?, \'credential:owner\')");',
				"db.exec('BEGIN IMMEDIATE');",
				'for (const row of rows) { credential.run(row.id, row.name, row.data, row.type); shared.run(row.id, owners[0].id); }',
				"db.exec('COMMIT');",
				'db.close();',
			],
			[input],
		);
	} finally {
		await fsp.rm(input, { force: true });
	}
	return true;
}
