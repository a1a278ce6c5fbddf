/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The package as it was at an earlier git ref, for a bench to run beside today's: checked out in a temporary
// `git worktree` (node_modules linked from this clone, so nothing is installed), built with `npm run build`, packed.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { packPackage, type Log } from '../n8n/n8n';
import { cleanEnv } from '../n8n/helpers';
import { runCommand } from '../n8n/processes';

const BUILD_TIMEOUT_MS = 5 * 60_000;

/** Builds and packs the package at `ref`; resolves with the .tgz and the commit it was built from. */
export async function packAtRef(
	projectDir: string,
	ref: string,
	log: Log,
): Promise<{ tgz: string; commit: string }> {
	const git = (args: string[], cwd = projectDir) =>
		runCommand('git', args, {
			cwd,
			env: cleanEnv(),
			timeoutMs: BUILD_TIMEOUT_MS,
			label: `git ${args.join(' ')}`,
			check: true,
		});
	const commit = (await git(['rev-parse', '--verify', `${ref}^{commit}`])).stdout.trim();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'task-backlog-baseline-'));
	await git(['worktree', 'add', '--detach', dir, commit]);
	try {
		fs.symlinkSync(
			fs.realpathSync(path.join(projectDir, 'node_modules')),
			path.join(dir, 'node_modules'),
		);
		log(`building ${ref} (${commit.slice(0, 7)}) in ${dir}`);
		await runCommand('npm', ['run', 'build'], {
			cwd: dir,
			env: cleanEnv(),
			timeoutMs: BUILD_TIMEOUT_MS,
			label: `npm run build (${ref})`,
			check: true,
		});
		// packPackage writes the tarball to a temp folder of its own, so the worktree can go right after.
		return { tgz: await packPackage(dir), commit };
	} finally {
		await git(['worktree', 'remove', '--force', dir]).catch((error: Error) =>
			log(`could not remove the worktree ${dir}: ${error.message}`),
		);
	}
}
