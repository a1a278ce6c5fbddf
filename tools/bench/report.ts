/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// What the bench prints and writes: the set-up said in words, the tables, bench.json and the requests-over-time
// charts (one per n8n major); or, with --report, the same again from saved bench.json files without running anything.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { describeVersions } from '../n8n/n8n';
import type { Json } from '../n8n/workflows';
import type { Options } from './options';
import { chart } from './panels';
import type { Results } from './results';
import type { BenchRun } from './run';
import { BATCH_SIZE, LIMIT, log } from './setup';
import { reportTables } from './tables';

export function writeReport(bench: BenchRun, options: Options, started: number) {
	const { text, targets } = reportTables(bench, options);
	const intro = [
		`Benchmark: ${describeVersions()}; ${os.cpus().length} CPUs; load average at start ${bench.environment.loadAverageAtStart.join(' ')}.`,
		`Simulator rate limit: ${LIMIT} requests per ${options.windowMs / 1000} s window (a time-scaled minute); our credential: Requests per Minute ${LIMIT}, Rate Limit Window ${options.windowMs / 1000} s.`,
		`Task Backlog node: Create or Update by External ID, batching on, Batch Size ${BATCH_SIZE}; Input Data Map Automatically (keys id and title read as they are, uid ignored) or Define Below (External ID {{ $json.id }}, Title {{ $json.title }}).`,
		`Servers: open = the lenient simulator (batches of 100 accepted); limit 50, undocumented = the strict profile with a batch limit of 50, a longer batch answered 413 without the limit.`,
		`HTTP Request node: PUT {base}/tasks/{uid} per item (uid given in the input), bearer token from a Header Auth credential; paced with its Batching option (${LIMIT} items per batch, Batch Interval ${options.windowMs} ms = one window) and the node setting Retry On Fail (3 tries, 1000 ms apart; n8n's defaults). Retry On Fail re-runs the whole node when any item failed.`,
		"Wall = the node's own run time as n8n measures it. Prep = node start to its first request (reading and checking every item). Requests phase = first request to the node's end. Needed = the least requests the job takes on that server (ceil(N / accepted batch size); N for the HTTP Request node). Floor = ceil(Needed / 60) windows.",
	].join('\n');
	process.stdout.write(`${intro}\n${text}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	fs.writeFileSync(
		path.join(options.out, 'bench.json'),
		JSON.stringify(
			{
				at: new Date().toISOString(),
				environment: bench.environment,
				sync: bench.sync,
				returnAll: bench.returnAll,
				overhead: bench.overhead,
				profiles: bench.profiles,
				scheduled: bench.scheduled,
				targets,
			},
			null,
			2,
		) + '\n',
	);
	fs.writeFileSync(
		path.join(options.out, 'requests-over-time.svg'),
		chart(bench, options, options.majors[0]),
	);
	for (const major of options.majors.slice(1))
		fs.writeFileSync(
			path.join(options.out, `requests-over-time-n8n-${major}.svg`),
			chart(bench, options, major),
		);
	log(
		`wrote ${path.join(options.out, 'bench.json')} and requests-over-time.svg in ${Math.round((Date.now() - started) / 1000)} s`,
	);
}

/** --report: the saved results of earlier runs, merged (their sizes and majors decide the tables and the chart). */
export function reportAgain(options: Options) {
	const saved = options.reportFrom.map(
		(file) => JSON.parse(fs.readFileSync(file, 'utf8')) as Results & { environment: Json },
	);
	const results: Results = { sync: [], returnAll: [], overhead: [], profiles: [], scheduled: [] };
	const merged: Options = { ...options, majors: [], sizes: [], cappedSizes: [] };
	for (const file of saved) {
		results.sync.push(...file.sync);
		results.returnAll.push(...file.returnAll);
		results.overhead.push(...file.overhead);
		results.profiles.push(...(file.profiles ?? []));
		results.scheduled?.push(...(file.scheduled ?? []));
		const used = (file.environment.options ?? {}) as Partial<Options>;
		for (const major of used.majors ?? [])
			if (!merged.majors.includes(major)) merged.majors.push(major);
		for (const n of used.sizes ?? []) if (!merged.sizes.includes(n)) merged.sizes.push(n);
		for (const n of used.cappedSizes ?? [])
			if (!merged.cappedSizes.includes(n)) merged.cappedSizes.push(n);
		if (used.windowMs) merged.windowMs = used.windowMs;
	}
	const { text } = reportTables(results, merged);
	process.stdout.write(`Results of ${options.reportFrom.join(', ')}\n${text}\n`);
	fs.mkdirSync(options.out, { recursive: true });
	merged.majors.forEach((major, index) => {
		const name = index === 0 ? 'requests-over-time.svg' : `requests-over-time-n8n-${major}.svg`;
		fs.writeFileSync(path.join(options.out, name), chart(results, merged, major));
	});
}
