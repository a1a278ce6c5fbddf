/* eslint-disable @n8n/community-nodes/no-restricted-globals -- tool code, never ships */
// `npm run bench`: the Task Backlog node against the way users do the same job today (the HTTP Request node, one PUT
// per item), in a real n8n, against the simulator of the service with its rate limit on and a time-scaled minute.
// Not part of `npm test`. Flags: see USAGE in options.ts (`npm run bench -- --help` prints it).
import { eventsBench } from './events';
import { parseArgs } from './options';
import { queueBench } from './queue';
import { reportAgain, writeReport } from './report';
import { runBench } from './run';

async function main() {
	// --queue: the scale-out run in n8n's queue mode (issue 14), a bench of its own (tools/bench/queue.ts)
	if (process.argv.includes('--queue')) return await queueBench(process.argv.slice(2));
	// --events: one-ticket executions at once, spread and alone (issue 19), a bench of its own (tools/bench/events.ts)
	if (process.argv.includes('--events')) return await eventsBench(process.argv.slice(2));
	const options = parseArgs(process.argv.slice(2));
	if (options.reportFrom.length > 0) return reportAgain(options);
	const started = Date.now();
	const bench = await runBench(options, started);
	writeReport(bench, options, started);
	// The scheduled part fails the bench when a run did other than its tickets ask (its tables are written first).
	const failed = (bench.scheduled ?? []).filter((r) => r.failure);
	for (const r of failed)
		process.stderr.write(
			`[bench] scheduled part failed, n8n ${r.major}.x N=${r.n}: ${r.failure}\n`,
		);
	if (failed.length > 0) process.exitCode = 1;
}

main().then(
	() => process.exit(process.exitCode ?? 0),
	(error) => {
		process.stderr.write(`[bench] failed: ${(error as Error).stack ?? error}\n`);
		process.exit(1);
	},
);
