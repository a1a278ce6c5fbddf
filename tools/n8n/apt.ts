/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Debian packages the harness needs and a fresh machine may lack (redis-server, postgresql): `apt-get install` as
// root, with `apt-get update` and a second try when the first fails. When a package cannot be had, callers get the
// reason and report their test skipped, never passed.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import type { Log } from './n8n';

const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The executable `name` on PATH or in the system folders, if any. */
export function onPath(name: string): string | undefined {
	for (const dir of (process.env.PATH ?? '')
		.split(path.delimiter)
		.concat(['/usr/bin', '/usr/sbin', '/usr/local/bin'])) {
		const file = path.join(dir, name);
		try {
			fs.accessSync(file, fs.constants.X_OK);
			return file;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** `apt-get install -y <pkg>`; resolves to undefined once installed, or to the reason it could not be. */
export function aptInstall(pkg: string, log: Log): string | undefined {
	const aptGet = onPath('apt-get');
	if (process.platform !== 'linux' || !aptGet)
		return `${pkg} is not installed and there is no apt-get to install it`;
	if (process.getuid?.() !== 0)
		return `${pkg} is not installed, and installing it with apt-get needs root`;
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	const install = () =>
		spawnSync(
			aptGet,
			['install', '-y', '--no-install-recommends', '-o', 'DPkg::Lock::Timeout=300', pkg],
			{ encoding: 'utf8', env, timeout: INSTALL_TIMEOUT_MS },
		);
	const started = Date.now();
	log(`${pkg} is missing: apt-get install -y ${pkg} (Debian package)`);
	let result = install();
	if (result.status !== 0) {
		log(
			`apt-get install failed (${result.status ?? result.signal}); apt-get update, then once more`,
		);
		spawnSync(aptGet, ['update'], { encoding: 'utf8', env, timeout: INSTALL_TIMEOUT_MS });
		result = install();
	}
	if (result.status !== 0) {
		const output = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.trim();
		return `apt-get install ${pkg} failed: ${output.split('\n').slice(-5).join(' / ')}`;
	}
	log(`${pkg} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	return undefined;
}
