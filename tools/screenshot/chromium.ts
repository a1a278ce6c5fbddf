/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Debian's `chromium` for the editor tests (test/e2e/editor.test.ts) and the screenshot tool: found on PATH (or
// $CHROMIUM_PATH), else installed with `apt-get install -y chromium` as Redis is (../n8n/apt.ts). Never a browser
// download: playwright-core drives this system browser. When it cannot be had, callers get the reason and report their
// tests skipped, never passed.
import { spawnSync } from 'child_process';
import * as fs from 'fs';

import { aptInstall, onPath } from '../n8n/apt';
import type { Log } from '../n8n/n8n';

export type ChromiumAvailability =
	{ bin: string; version: string; installedNow: boolean } | { skipped: string };

/** The flags Chromium needs on these machines (headless as root, no connections of its own). */
export const CHROMIUM_ARGS = [
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-dev-shm-usage',
];

function versionOf(bin: string): string {
	const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
	return (result.stdout ?? '').trim() || `(${bin} --version printed nothing)`;
}

function found(): string | undefined {
	const given = process.env.CHROMIUM_PATH;
	if (given && fs.existsSync(given)) return given;
	return onPath('chromium') ?? onPath('chromium-browser');
}

/** Chromium from PATH ($CHROMIUM_PATH first); when missing, Debian's package `chromium` (aptInstall). */
export function ensureChromium(log: Log): ChromiumAvailability {
	const bin = found();
	if (bin) return { bin, version: versionOf(bin), installedNow: false };
	const failed = aptInstall('chromium', log);
	const installed = found();
	if (failed || !installed)
		return { skipped: failed ?? 'apt-get installed chromium, but it is not on PATH' };
	return { bin: installed, version: versionOf(installed), installedNow: true };
}
