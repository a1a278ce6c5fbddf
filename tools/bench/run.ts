/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// A bench run: the n8n majors installed, the package packed, the simulator started, every major's scenarios run, and
// the environment they ran in noted for bench.json.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { N8nInstall } from '../n8n/n8n';
import { describeVersions, ensureN8n, packPackage } from '../n8n/n8n';
import { startSimulator } from '../simulator/simulator';
import type { Json } from '../n8n/workflows';
import type { Options } from './options';
import type { Results } from './results';
import { runMajor } from './run-major';
import {
	BATCH_SIZE,
	CAPPED_BATCH_LIMIT,
	LIMIT,
	PAGE_SIZE,
	TOKEN,
	httpContender,
	log,
} from './setup';

export interface BenchRun extends Results {
	environment: Json;
}

export async function runBench(options: Options, started: number): Promise<BenchRun> {
	const projectDir = path.resolve(__dirname, '..', '..', '..');
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes')))
		throw new Error('dist/ is not built: run npm run build');
	const installs: N8nInstall[] = [];
	for (const major of options.majors) installs.push(await ensureN8n(major, log));
	const tgz = await packPackage(projectDir);
	const sim = await startSimulator({
		tokens: [TOKEN],
		requestsPerWindow: LIMIT,
		windowMs: options.windowMs,
		maxPageSize: PAGE_SIZE,
		seed: 1,
	});
	const bench: BenchRun = {
		sync: [],
		returnAll: [],
		overhead: [],
		profiles: [],
		scheduled: [],
		environment: {},
	};
	Object.assign(bench.environment, {
		n8n: describeVersions(),
		cpus: os.cpus().length,
		cpuModel: os.cpus()[0]?.model,
		totalMemoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
		loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
		benchNode: process.version,
		windowMs: options.windowMs,
		limit: LIMIT,
		batchSize: BATCH_SIZE,
		cappedServer: {
			profile: 'strict',
			maxBatchSize: CAPPED_BATCH_LIMIT,
			batchTooLarge: '413 text/plain, limit not stated',
		},
		options,
		httpContender: {
			...httpContender(options.windowMs),
			request:
				'PUT {base}/tasks/{uid}, bearer token from a Header Auth credential, one request per item',
		},
	});
	try {
		for (const install of installs) await runMajor(options, sim, tgz, install, bench);
	} finally {
		await sim.stop();
	}
	Object.assign(bench.environment, {
		loadAverageAtEnd: os.loadavg().map((l) => Number(l.toFixed(2))),
		totalSeconds: Math.round((Date.now() - started) / 1000),
	});
	return bench;
}
