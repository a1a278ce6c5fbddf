/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// `npm run demo`: a real n8n with this package installed, against the embedded simulator of the Task Backlog Service.
//
//   1. starts the simulator (seeded on first use; state kept in <cache>/demo/simulator-state.json)
//   2. ensures a real n8n (installed into <cache> on first use: several minutes)
//   3. packs this package (npm pack) and installs the .tgz into a fresh n8n user folder, as a user would
//   4. imports a credential pointing at the simulator and every examples/*.json workflow
//   5. runs the headline example (examples/ticket-sync.json, Sync Backlog) with `n8n execute` and prints what it did
//   6. starts `n8n start` and leaves n8n and the simulator running until Ctrl-C (--once: exits after step 5)
//
// <cache> is ~/.cache/n8n-nodes-task-backlog (or $TASK_BACKLOG_CACHE). Every child process is bounded and stopped on
// exit, SIGINT and SIGTERM.
import * as fs from 'fs';
import * as path from 'path';

import { cacheRoot } from '../n8n/n8n';
import { runHeadline } from './headline';
import { parseArgs } from './options';
import { DemoProcesses } from './processes';
import { findProjectDir } from './project';
import { printIntro } from './report';
import { prepareDemo } from './run';
import { serveDemo } from './serve';

const processes = new DemoProcesses();

async function main(): Promise<number> {
	const projectDir = findProjectDir();
	const opts = parseArgs(process.argv.slice(2), projectDir);
	const cache = cacheRoot();
	processes.stateFile = opts.stateFile ?? path.join(cache, 'demo', 'simulator-state.json');
	fs.mkdirSync(path.dirname(processes.stateFile), { recursive: true });
	processes.listenForSignals();
	printIntro(opts.major, projectDir, cache);
	const demo = await prepareDemo(opts, projectDir, processes);
	const syncNode = await runHeadline(demo);
	if (opts.once && !opts.screenshot) return await processes.finish();
	return await serveDemo(opts, demo, syncNode, processes);
}

main().then(
	(code) => process.exit(code),
	async (error: Error) => {
		process.stderr.write(`\ndemo failed: ${error.message}\n`);
		const timer = setTimeout(() => process.exit(1), 30_000);
		timer.unref();
		await processes.stopAll();
		process.exit(1);
	},
);
