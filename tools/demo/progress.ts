/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// How the demo speaks while it works: progress lines stamped with the time since it started, plain lines, and paths
// written the way the user would type them.
import * as os from 'os';
import * as path from 'path';

const started = Date.now();
export const elapsed = () => {
	const s = Math.round((Date.now() - started) / 1000);
	return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
/** A progress line, with the time since the demo started. */
export const say = (line: string) => process.stdout.write(`[demo ${elapsed()}] ${line}\n`);
export const print = (line = '') => process.stdout.write(`${line}\n`);
/** A path as the user would type it: the home folder as ~. */
export const tilde = (file: string) => {
	const home = os.homedir();
	return file === home || file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
};
export const secondsSince = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

/** Runs one step and says it is done, with how long it took. */
export async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
	const t = Date.now();
	const result = await fn();
	say(`${what} (${secondsSince(t)})`);
	return result;
}
