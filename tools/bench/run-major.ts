// Every scenario the options ask for, against one n8n major: its credentials and workflows imported into one measured
// user folder, then the runs one after the other.
import type { N8nInstall } from '../n8n/n8n';
import type { Simulator } from '../simulator/simulator';
import * as W from '../n8n/workflows';
import type { MajorRun } from './execute';
import { MeasuredFolder } from './measured';
import type { ContenderKey, Options } from './options';
import { CONTENDER, type Results, type SyncResult } from './results';
import { runOverhead } from './run-overhead';
import { runProfile } from './run-profile';
import { runReturnAll } from './run-return-all';
import { runScheduledSync, scheduledWorkflows } from './run-scheduled';
import { extrapolate, runSync } from './run-sync';
import { LIMIT, OVERHEAD_N, PROFILE_N, TOKEN, log } from './setup';
import { BenchWorkflows } from './workflows';

export async function runMajor(
	options: Options,
	sim: Simulator,
	tgz: string,
	install: N8nInstall,
	results: Results,
) {
	const { major } = install;
	const { windowMs } = options;
	const has = (key: ContenderKey) => options.only.includes(key);
	const folder = await MeasuredFolder.create(install, { tgz, log, measure: true });
	try {
		const limited = { id: 'benchCredLimited', name: 'Task Backlog (time-scaled minute)' };
		const realMinute = { id: 'benchCredMinute', name: 'Task Backlog (real minute)' };
		const unlimited = { id: 'benchCredNoLimit', name: 'Task Backlog (no limit)' };
		const header = { id: 'benchCredHeader', name: 'Bearer token (Header Auth)' };
		// the scheduled workflows' own: its window is switched between the scaled and the real minute (run-scheduled.ts)
		const scheduled = { id: 'benchCredSchedule', name: 'Task Backlog (scheduled sync)' };
		const base = { baseUrl: sim.url, token: TOKEN };
		await folder.folder.importCredentials([
			W.backlogCredential(limited, {
				...base,
				requestsPerMinute: LIMIT,
				rateLimitWindowSeconds: windowMs / 1000,
			}),
			W.backlogCredential(realMinute, {
				...base,
				requestsPerMinute: LIMIT,
				rateLimitWindowSeconds: 60,
			}),
			W.backlogCredential(unlimited, {
				...base,
				requestsPerMinute: 1_000_000,
				rateLimitWindowSeconds: 60,
			}),
			W.headerAuthCredential(header, TOKEN),
			W.backlogCredential(scheduled, {
				...base,
				requestsPerMinute: LIMIT,
				rateLimitWindowSeconds: windowMs / 1000,
			}),
		]);

		const run: MajorRun = { options, sim, folder, major };
		const workflows = new BenchWorkflows(sim.url, header, windowMs);
		const ours = (['auto', 'define'] as ContenderKey[]).filter(has).map((key) => CONTENDER[key]);
		const plan: Array<() => Promise<void>> = [];

		// Sync N tickets against the open server, HTTP Request run once per distinct N (and extrapolated above --http-max)
		if (options.parts.includes('sync')) {
			const httpRuns = new Map<number, SyncResult>();
			for (const n of options.sizes) {
				for (const contender of ours) {
					const id = workflows.sync(contender, n, limited);
					plan.push(
						async () =>
							void results.sync.push(await runSync(run, contender, 'open', id, n, windowMs)),
					);
				}
				if (has('http')) {
					const httpN = Math.min(n, options.httpMax);
					const id = workflows.sync('http-request', httpN, limited);
					plan.push(async () => {
						let http = httpRuns.get(httpN);
						if (!http) {
							http = await runSync(run, 'http-request', 'open', id, httpN, windowMs);
							httpRuns.set(httpN, http);
						}
						results.sync.push(httpN === n ? http : extrapolate(http, n));
					});
				}
			}
		}
		// The same against a server whose batch limit is 50 and not documented
		if (options.parts.includes('capped')) {
			for (const n of options.cappedSizes) {
				for (const contender of ours) {
					const id = workflows.sync(contender, n, limited);
					plan.push(
						async () =>
							void results.sync.push(await runSync(run, contender, 'capped50', id, n, windowMs)),
					);
				}
			}
		}
		if (options.realMinute) {
			for (const contender of ours) {
				const id = workflows.sync(contender, 10000, realMinute);
				plan.push(
					async () =>
						void results.sync.push(await runSync(run, contender, 'open', id, 10000, 60_000)),
				);
			}
		}
		function returnAllWorkflows() {
			const returnAll = workflows.add(
				W.workflow('benchReturnAll01', 'bench: Return All', [
					W.manualTrigger(),
					W.backlogNode('Task Backlog', limited, {
						resource: 'task',
						operation: 'getAll',
						returnAll: true,
					}),
				]),
			);
			const limitOne = workflows.add(
				W.workflow('benchReturnOne01', 'bench: Limit 1', [
					W.manualTrigger(),
					W.backlogNode('Task Backlog', limited, {
						resource: 'task',
						operation: 'getAll',
						returnAll: false,
						limit: 1,
					}),
				]),
			);
			return { returnAll, limitOne };
		}
		if (options.parts.includes('returnAll')) {
			const ids = returnAllWorkflows();
			plan.push(
				async () =>
					void results.returnAll.push(await runReturnAll(run, ids.returnAll, ids.limitOne)),
			);
		}
		// Sync Backlog run again and again as a schedule runs it (run-scheduled.ts), and Return All of 10,000 on the issue
		// 32 server
		if (options.parts.includes('scheduled')) {
			for (const n of options.scheduledSizes) {
				const made = scheduledWorkflows(n, scheduled);
				for (const workflow of made.workflows) workflows.add(workflow);
				plan.push(
					async () =>
						void results.scheduled?.push(await runScheduledSync(run, made.ids, scheduled)),
				);
			}
			const ids = returnAllWorkflows();
			plan.push(
				async () =>
					void results.returnAll.push(
						await runReturnAll(run, ids.returnAll, ids.limitOne, 'issue'),
					),
			);
		}
		if (options.parts.includes('overhead')) {
			const disabledId = workflows.sync('define-below', OVERHEAD_N, unlimited, { disabled: true });
			const setId = workflows.add(
				W.workflow('benchSetNode0001', 'bench: Set node, same expressions', [
					W.manualTrigger(),
					W.ticketsNode('Tickets', OVERHEAD_N),
					W.setNode('Task Backlog', { ticket_id: '={{ $json.id }}', title: '={{ $json.title }}' }),
				]),
			);
			const contenders = ours.map((contender) => ({
				contender,
				id: workflows.sync(contender, OVERHEAD_N, unlimited),
			}));
			plan.push(
				async () =>
					void results.overhead.push(await runOverhead(run, contenders, disabledId, setId)),
			);
		}
		if (options.cpuProf) {
			const id = workflows.sync('auto-map', PROFILE_N, unlimited);
			plan.push(async () => void results.profiles.push(await runProfile(run, id)));
		}

		await folder.folder.importWorkflow(workflows.all());
		for (const step of plan) await step();
	} finally {
		await folder.dispose();
	}
}
