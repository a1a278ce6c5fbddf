// One measured run of a workflow, as every scenario makes it: the simulator set up for the run, `n8n execute` under
// the measuring hook, and what the run tells (its error, its CPU).
import type { N8nMajor } from '../n8n/n8n';
import type { Simulator } from '../simulator/simulator';
import * as W from '../n8n/workflows';
import { seconds } from './format';
import type { MeasuredFolder, MeasuredRun } from './measured';
import type { Options } from './options';
import type { Server } from './results';
import { CAPPED_BATCH_LIMIT, PAGE_SIZE, RUN_TIMEOUT_MS, log } from './setup';

/** What the runs against one n8n major share. */
export interface MajorRun {
	options: Options;
	sim: Simulator;
	folder: MeasuredFolder;
	major: N8nMajor;
}

/** A fresh simulator (no tasks, no requests) with this rate limit, as the open or the capped server. */
export function resetSimulator(
	sim: Simulator,
	requestsPerWindow: number,
	windowMs: number,
	server: Server = 'open',
) {
	sim.reset();
	sim.configure({
		requestsPerWindow,
		windowMs,
		faults: undefined,
		maxPageSize: PAGE_SIZE,
		profile: server === 'capped50' ? 'strict' : 'lenient',
		readings:
			server === 'capped50'
				? { maxBatchSize: CAPPED_BATCH_LIMIT, batchTooLarge: '413' }
				: undefined,
	});
}

export async function execute(
	folder: MeasuredFolder,
	id: string,
	what: string,
	nodeOptions?: string,
): Promise<MeasuredRun> {
	log(`${what} ...`);
	const run = await folder.execute(id, RUN_TIMEOUT_MS, { nodeOptions });
	const error = errorText(run);
	const rss = run.usage ? `, peak RSS ${Math.round(run.usage.peakRssMb)} MB` : '';
	log(`${what}: ${seconds(run.wallMs)} s${rss}${error ? `, failed: ${error.slice(0, 300)}` : ''}`);
	return run;
}

export function errorText(run: MeasuredRun): string | undefined {
	const error = W.runError(run.run);
	if (error) return `${error.message ?? ''}${error.description ? ` (${error.description})` : ''}`;
	if (run.code !== 0 || !run.run)
		return `n8n execute exited with ${run.code}; ${(run.stdout + run.stderr).slice(-600)}`;
	return undefined;
}

export function cpuOf(run: MeasuredRun) {
	return run.usage ? run.usage.userCpuMs + run.usage.systemCpuMs : undefined;
}
