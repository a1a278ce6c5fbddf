/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The CPU profile scenario (--cpu-prof): one Map Automatically run of PROFILE_N upserts, rate limit off, with V8's CPU
// profiler on n8n's process; summarised over the node's run and over the whole process.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as W from '../n8n/workflows';
import { errorText, execute, resetSimulator, type MajorRun } from './execute';
import type { CpuProfile } from './profile';
import { summarizeProfile } from './profile';
import type { ProfileResult } from './results';
import { PROFILE_N } from './setup';

export async function runProfile(run: MajorRun, id: string): Promise<ProfileResult> {
	const { sim, folder, major } = run;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'task-backlog-cpuprof-'));
	try {
		resetSimulator(sim, 0, 60_000);
		const measured = await execute(
			folder,
			id,
			`n8n ${major}.x ${PROFILE_N} upserts, Map Automatically, no rate limit, --cpu-prof`,
			`--cpu-prof --cpu-prof-dir=${dir}`,
		);
		const node = W.nodeRun(measured.run, 'Task Backlog');
		const result: ProfileResult = {
			major,
			n: PROFILE_N,
			ok: !errorText(measured),
			error: errorText(measured),
			nodeMs: node?.executionTime ?? 0,
		};
		const file = measured.usage
			? fs.readdirSync(dir).find((name) => name.includes(`.${measured.usage!.pid}.`))
			: undefined;
		if (!file || !measured.usage || !node) {
			result.error =
				`${result.error ?? ''} no profile of the n8n execute process (files: ${fs.readdirSync(dir).join(', ') || 'none'})`.trim();
			return result;
		}
		const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
		// the node's start and end on the profile's clock, through the instant the rusage hook recorded at start-up
		const startUs =
			measured.usage.startedAtMonotonicUs + (node.startTime - measured.usage.startedAt) * 1000;
		result.window = { startUs, endUs: startUs + node.executionTime * 1000 };
		result.node = summarizeProfile(profile, result.window);
		result.process = summarizeProfile(profile);
		fs.mkdirSync(run.options.out, { recursive: true });
		result.file = path.join(
			run.options.out,
			`map-automatically-${PROFILE_N}-n8n-${major}.cpuprofile`,
		);
		fs.copyFileSync(path.join(dir, file), result.file);
		return result;
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}
