/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Step 6 of the demo: `n8n start` with the examples, optionally a screenshot of the node in the editor, then n8n and
// the simulator left running until Ctrl-C (or n8n's end, or the --hours limit).
import * as fs from 'fs';
import * as path from 'path';

import { screenshotNode } from '../screenshot/screenshot';
import { pickPort, startDemoN8n } from './n8n-server';
import type { Options } from './options';
import type { DemoProcesses } from './processes';
import { say, step, tilde } from './progress';
import type { WorkflowNode } from './project';
import { printServing } from './report';
import type { Demo } from './run';

/** Serves n8n until the user stops it; the exit code (1 when n8n ended on its own). */
export async function serveDemo(
	opts: Options,
	demo: Demo,
	syncNode: WorkflowNode,
	processes: DemoProcesses,
): Promise<number> {
	const n8nLog = path.join(path.dirname(processes.stateFile), 'n8n.log');
	const port = await pickPort(opts.port, 'n8n', say);
	fs.writeFileSync(n8nLog, '');
	const server = (processes.server = await step(`n8n started (log: ${tilde(n8nLog)})`, () =>
		startDemoN8n(demo.folder, { port, logFile: n8nLog, maxLifetimeMs: opts.hours * 3_600_000 }),
	));
	processes.dropOtherSignalHandlers();
	let ownerSetUp = false;
	if (opts.screenshot) {
		const shot = await step('screenshot taken', () =>
			screenshotNode({
				baseUrl: server.baseUrl,
				workflowId: demo.headline.workflow.id,
				nodeName: syncNode.name,
				out: opts.screenshot!,
				log: say,
			}),
		);
		ownerSetUp = true;
		const where = path.relative(process.cwd(), shot.file) || shot.file;
		say(`${where}: node "${shot.nodeName}" (${Math.round(shot.bytes / 1024)} KB)`);
		if (opts.once) return await processes.finish();
	}

	printServing({
		url: server.baseUrl,
		n8nVersion: demo.install.version,
		ownerSetUp,
		workflows: demo.workflows,
		credential: demo.credential,
		sim: demo.sim,
		stateFile: processes.stateFile,
		hours: opts.hours,
	});

	const reason = await new Promise<string>((resolve) => {
		processes.wakeUp = resolve;
		void server.exited.then((how) => resolve(`n8n ${how}`));
	});
	if (reason.startsWith('n8n ')) {
		say(`${reason} (log: ${tilde(n8nLog)}); stopping the simulator`);
		await processes.stopAll();
		return 1;
	}
	await new Promise<never>(() => undefined); // the signal handler exits when everything is stopped
	return 0;
}
