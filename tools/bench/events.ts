/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// `npm run bench -- --events` (issue 19): N one-ticket executions (examples/create-and-forget.json, one Webhook call
// per ticket event) in a real n8n in regular mode, at once, spread over minutes and alone, against the simulator at
// 60 requests per window (the real 60 s by default) with its undocumented batch limit of 50; beside the HTTP Request
// node and beside the package built from an earlier git ref. Flags: EVENTS_USAGE in events-options.ts.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {
	describeVersions,
	disposeAll,
	ensureN8n,
	N8nUserFolder,
	packPackage,
	type N8nMajor,
	type N8nServer,
} from '../n8n/n8n';
import { ensurePostgres, startPostgres, type PostgresServer } from '../n8n/postgres';
import { startQueueCluster } from '../n8n/queue';
import { ensureRedis, startRedis } from '../n8n/redis';
import { startSimulator, type Simulator } from '../simulator/simulator';
import { packAtRef } from './baseline';
import {
	eventsFor,
	parseEventsArgs,
	type EventsContender,
	type EventsOptions,
	type EventsScenario,
} from './events-options';
import {
	describeRefused,
	eventsFigures,
	eventsTable,
	eventsTargets,
	scenarioLabel,
	targetsText,
	type EventsFigures,
} from './events-report';
import {
	EVENTS_LIMIT,
	importRuns,
	outcomesFromExecutions,
	planRun,
	REFUSED_EVENTS,
	sendEvents,
	storedTimes,
	type EventsRunPlan,
} from './events-run';

const log = (line: string) => process.stderr.write(`[bench:events] ${line}\n`);
/** Lone events first, while nothing else has run in that n8n. */
const SCENARIOS: Array<Exclude<EventsScenario, 'queue' | 'refused' | 'crash' | 'queueRefused'>> = [
	'lone',
	'atOnce',
	'spread',
];

function plansFor(
	options: EventsOptions,
	major: N8nMajor,
	contenders: EventsContender[],
	baseUrl: string,
): EventsRunPlan[] {
	const sizes: Record<(typeof SCENARIOS)[number], { n: number; overMs: number }> = {
		lone: { n: options.lone, overMs: options.loneGapMs ?? options.windowMs + 1000 },
		atOnce: { n: options.atOnce, overMs: 0 },
		spread: { n: options.spread, overMs: options.spreadSeconds * 1000 },
	};
	const plans: EventsRunPlan[] = [];
	for (const scenario of SCENARIOS)
		for (const contender of contenders) {
			const n = eventsFor(options, contender, sizes[scenario].n);
			if (n > 0)
				plans.push(
					planRun(major, contender, scenario, n, sizes[scenario].overMs, baseUrl, {
						database: options.postgres ? 'postgresql' : 'sqlite',
					}),
				);
		}
	// the refused bursts last, ours only: their refusals are the service's, the same for any contender
	if (options.refused > 0 && contenders.includes('ours'))
		for (const scenario of ['refused', 'crash'] as const)
			plans.push(
				planRun(major, 'ours', scenario, options.refused, 0, baseUrl, {
					database: options.postgres ? 'postgresql' : 'sqlite',
				}),
			);
	return plans;
}

/** `n8n start`, or in queue mode a main and workers on a Redis of their own; what serves the webhooks, and its stop. */
async function startN8n(
	folder: N8nUserFolder,
	queueWorkers: number,
	options: EventsOptions,
): Promise<{ server: N8nServer; stop: () => Promise<void> }> {
	const maxLifetimeMs = 3 * 60 * 60_000;
	if (queueWorkers === 0) {
		const server = await folder.start({ timeoutMs: 180_000, maxLifetimeMs });
		return { server, stop: () => server.stop() };
	}
	const redisAvailability = ensureRedis(log);
	if ('skipped' in redisAvailability)
		throw new Error(`--events-queue-workers needs redis-server: ${redisAvailability.skipped}`);
	const redis = await startRedis(redisAvailability.bin, log);
	const cluster = await startQueueCluster(folder, redis, {
		workers: queueWorkers,
		concurrency: options.queueConcurrency,
		log,
		maxLifetimeMs,
	}).catch(async (error: Error) => {
		await redis.stop();
		throw error;
	});
	return {
		server: cluster.main,
		stop: async () => {
			await cluster.stop();
			await redis.stop();
		},
	};
}

/** One n8n with one package installed: its runs one after the other, each with the server to itself. */
async function runPackage(
	major: N8nMajor,
	tgz: string,
	plans: EventsRunPlan[],
	sim: Simulator,
	options: EventsOptions,
	queueWorkers = 0,
): Promise<EventsFigures[]> {
	const install = await ensureN8n(major, log);
	// queue mode on PostgreSQL, as n8n recommends: with sqlite, workers writing executions at once meet SQLITE_BUSY;
	// regular mode too with --events-postgres
	let postgres: PostgresServer | undefined;
	if (plans.some((plan) => plan.database === 'postgresql')) {
		const availability = ensurePostgres(log);
		if ('skipped' in availability)
			throw new Error(`PostgreSQL for n8n's database cannot be had: ${availability.skipped}`);
		postgres = await startPostgres(availability, log);
	}
	const folder = await N8nUserFolder.create(install, {
		tgz,
		log,
		env: postgres?.n8nEnv,
		// activation through its SQL instead of an n8n start per workflow
		database: postgres,
	}).catch(async (error: Error) => {
		await postgres?.stop();
		throw error;
	});
	const rows: EventsFigures[] = [];
	try {
		await importRuns(folder, plans, sim.url, options.windowMs);
		const { server, stop } = await startN8n(folder, queueWorkers, options);
		try {
			for (const plan of plans)
				await folder.waitForWebhook(server.baseUrl, plan.webhookPath, 120_000);
			for (const plan of plans) {
				log(`n8n ${major}.x ${plan.contender}: ${scenarioLabel(plan)} …`);
				const records = await sendEvents(server, sim, plan);
				if (plan.answersOnReceipt) {
					if (!postgres) throw new Error('answers on receipt need n8n on PostgreSQL');
					await outcomesFromExecutions(postgres.query, plan, records, log);
					// the tasks stored since the answers (on receipt, before the executions ran)
					const storedAt = storedTimes(sim.requests, plan.token);
					for (const record of records) record.storedAt = storedAt.get(record.uid);
				}
				const figures = eventsFigures(plan, records, sim, options.windowMs);
				log(eventsTable([figures]).split('\n')[2]);
				if (figures.refused) log(`  refused: ${describeRefused(figures.refused)}`);
				const failures = new Map<string, number>();
				for (const record of records.filter((each) => each.status !== 200)) {
					const why = `HTTP ${record.status}: ${(record.error ?? '').slice(0, 120)}`;
					failures.set(why, (failures.get(why) ?? 0) + 1);
				}
				for (const [why, count] of failures) log(`  ${count} failed answer(s): ${why}`);
				rows.push(figures);
			}
		} finally {
			// n8n's own log beside events.json: what it said about failed webhook answers
			fs.mkdirSync(options.out, { recursive: true });
			const name = `n8n-${major}.x-${plans[0].contender}${queueWorkers ? '-queue' : ''}.log`;
			fs.writeFileSync(path.join(options.out, name), server.logs());
			await stop();
		}
	} finally {
		await folder.dispose();
		await postgres?.stop();
	}
	return rows;
}

/** The whole `--events` run; resolves when the table is printed and events.json written. */
export async function eventsBench(argv: string[]): Promise<void> {
	const options = parseEventsArgs(argv);
	const projectDir = path.resolve(__dirname, '..', '..', '..');
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes')))
		throw new Error('dist/ is not built: run npm run build');
	const started = Date.now();
	const ours = options.only.filter((c) => c !== 'baseline');
	const tgz = ours.length > 0 ? await packPackage(projectDir) : undefined;
	const baseline = options.only.includes('baseline')
		? await packAtRef(projectDir, options.baselineRef, log)
		: undefined;
	// Plans are made up front so that the simulator knows every run's token.
	const sim = await startSimulator({
		requestsPerWindow: EVENTS_LIMIT,
		windowMs: options.windowMs,
		seed: 19,
	});
	const queueWorkers = options.only.includes('ours') ? options.queueWorkers : 0;
	const packages = options.majors.flatMap((major) => [
		...(tgz && !options.queueOnly
			? [{ major, tgz, plans: plansFor(options, major, ours, sim.url), queueWorkers: 0 }]
			: []),
		...(baseline
			? [
					{
						major,
						tgz: baseline.tgz,
						plans: plansFor(options, major, ['baseline'], sim.url),
						queueWorkers: 0,
					},
				]
			: []),
		// queue mode: a cluster of its own, after the regular runs
		...(tgz && queueWorkers > 0
			? [
					{
						major,
						tgz,
						plans: (
							[
								['queue', options.queueEvents],
								['queueRefused', options.refused],
							] as const
						)
							.filter(([, events]) => events > 0)
							.map(([scenario, events]) =>
								planRun(major, 'ours', scenario, events, 0, sim.url, {
									queueWorkers,
									requestsPerMinute: options.queueRequestsPerMinute,
									database: 'postgresql',
								}),
							),
						queueWorkers,
					},
				]
			: []),
	]);
	sim.configure({
		tokens: packages.flatMap((p) => p.plans.map((plan) => plan.token)),
		requestsPerWindow: EVENTS_LIMIT,
		windowMs: options.windowMs,
		readings: { maxBatchSize: 50, batchTooLarge: '413' },
		// only the refused runs' events carry these texts
		refuseContent: options.refused > 0 ? [...REFUSED_EVENTS.values()] : [],
	});
	const rows: EventsFigures[] = [];
	try {
		for (const p of packages.filter((each) => each.plans.length > 0))
			rows.push(...(await runPackage(p.major, p.tgz, p.plans, sim, options, p.queueWorkers)));
	} finally {
		await sim.stop();
		disposeAll();
	}
	const intro =
		`Events: ${describeVersions()}, regular mode on sqlite unless the row says PostgreSQL or queue mode (Redis, PostgreSQL, main + workers); ${os.cpus().length} CPUs. ` +
		`Simulator: ${EVENTS_LIMIT} requests per ${options.windowMs / 1000} s window per token (fixed window, 429s counted), batch limit 50 undocumented (413). ` +
		`Ours and baseline${baseline ? ` (${options.baselineRef} = ${baseline.commit.slice(0, 7)})` : ''}: examples/create-and-forget.json (Webhook → Create or Update by External ID), Respond When Last Node Finishes (n8n 1.x in queue mode: on receipt, each outcome read from its stored execution); credential Requests per Minute ${EVENTS_LIMIT} (queue mode: as the row says), Rate Limit Window ${options.windowMs / 1000} s. ` +
		`HTTP Request: Webhook → Set → PUT /tasks/{uid}, Retry On Fail (3 tries, 1000 ms). Each run has its own token. ` +
		`Latency: webhook call to the first successful write of the task on the simulator; drain: first webhook call to the last task stored.`;
	const targets = eventsTargets(rows);
	process.stdout.write(
		`${intro}\n\n${eventsTable(rows)}\n\nTargets (ours):\n${targetsText(targets)}\n`,
	);
	fs.mkdirSync(options.out, { recursive: true });
	const file = path.join(options.out, 'events.json');
	fs.writeFileSync(
		file,
		JSON.stringify(
			{
				at: new Date().toISOString(),
				options: { ...options, httpMax: Number.isFinite(options.httpMax) ? options.httpMax : null },
				baseline: baseline && { ref: options.baselineRef, commit: baseline.commit },
				versions: describeVersions(),
				rows,
				targets,
				totalSeconds: Math.round((Date.now() - started) / 1000),
			},
			null,
			2,
		) + '\n',
	);
	log(`wrote ${file} in ${Math.round((Date.now() - started) / 1000)} s`);
}
