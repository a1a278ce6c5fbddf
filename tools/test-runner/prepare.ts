/* eslint-disable no-console -- tool code, never ships */
// Installs what the end-to-end suite needs before it starts (both pinned n8n majors and their migrated databases,
// Redis and PostgreSQL for queue mode, Debian's Chromium for the editor tests), in its own process so that the unit tests run
// meanwhile. Each install is idempotent and locked (tools/n8n/install.ts), so an end-to-end file that needs one before this finishes waits for it instead of
// installing twice. Exit 0 even when something could not be installed: the file that needs it then says why (and
// reports its tests skipped or failed).
import { ensureN8n, type N8nMajor } from '../n8n/n8n';
import { ensurePostgres } from '../n8n/postgres';
import { ensureRedis } from '../n8n/redis';
import { N8nUserFolder } from '../n8n/userFolder';
import { ensureChromium } from '../screenshot/chromium';

const log = (line: string) => console.log(line);

async function main(): Promise<void> {
	const started = Date.now();
	// 2.x first: `npm run demo` has usually installed it already, so this costs nothing and 1.x starts at once.
	for (const major of [2, 1] as N8nMajor[]) {
		const step = Date.now();
		try {
			const install = await ensureN8n(major, log);
			// the database its migrations make, kept for every user folder of the suite (tools/n8n/database.ts)
			await (await N8nUserFolder.create(install, { log })).dispose();
			log(`n8n ${install.version} ready (${((Date.now() - step) / 1000).toFixed(1)} s)`);
		} catch (error) {
			log(`n8n ${major}.x could not be installed: ${(error as Error).message}`);
		}
	}
	const redis = ensureRedis(log);
	log('skipped' in redis ? `no Redis: ${redis.skipped}` : `redis-server ${redis.version} ready`);
	const postgres = ensurePostgres(log);
	log(
		'skipped' in postgres
			? `no PostgreSQL: ${postgres.skipped}`
			: `PostgreSQL ${postgres.version} ready`,
	);
	// Debian's chromium for the editor tests (test/e2e/editor.test.ts); never a browser download.
	const chromium = ensureChromium(log);
	log('skipped' in chromium ? `no Chromium: ${chromium.skipped}` : `${chromium.version} ready`);
	log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

void main();
