/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// Steps 1 to 4 of the demo: the simulator (seeded on first use), a real n8n, this package packed and installed into a
// fresh user folder as a user would, and the credential and example workflows imported.
import * as fs from 'fs';
import * as path from 'path';

import {
	describeVersions,
	ensureN8n,
	N8nUserFolder,
	packPackage,
	type N8nInstall,
} from '../n8n/n8n';
import { startSimulator, type Simulator } from '../simulator/simulator';
import { pickPort } from './n8n-server';
import type { Options } from './options';
import type { DemoProcesses } from './processes';
import { say, secondsSince, step, tilde } from './progress';
import { exampleCredential, readExamples, type Example } from './project';
import { seedDemoTasks } from './seed';

export const DEMO_TOKEN = 'demo-token';

/** What steps 1 to 4 set up, for the headline run and for n8n start. */
export interface Demo {
	install: N8nInstall;
	sim: Simulator;
	folder: N8nUserFolder;
	workflows: Example[];
	headline: Example;
	credential: { id: string; name: string };
}

export async function prepareDemo(
	opts: Options,
	projectDir: string,
	processes: DemoProcesses,
): Promise<Demo> {
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes'))) {
		throw new Error('dist/ is not built: run `npm run demo` (it builds first) or `npm run build`');
	}
	const { workflows, headline } = readExamples(projectDir);
	const credential = exampleCredential(workflows.map((w) => w.workflow));
	const { stateFile } = processes;

	// ---- 1. simulator
	if (opts.reset) fs.rmSync(stateFile, { force: true });
	const fresh = !fs.existsSync(stateFile);
	const simPort = await pickPort(opts.simPort, 'the simulator', say);
	let sim: Simulator;
	try {
		sim = processes.sim = await startSimulator({
			port: simPort,
			tokens: [DEMO_TOKEN],
			persistFile: stateFile,
			requestsPerWindow: 60, // the real service's limit
			windowMs: 60_000,
		});
	} catch (error) {
		throw new Error(
			`cannot start the simulator with ${stateFile}: ${(error as Error).message} (--reset starts afresh)`,
		);
	}
	if (fresh) seedDemoTasks(sim);
	say(
		`simulator of the Task Backlog Service at ${sim.url} (token ${DEMO_TOKEN}): ${sim.tasks.size} tasks ` +
			(fresh
				? '(seeded)'
				: `(state of earlier runs, ${tilde(stateFile)}; --reset to start afresh)`),
	);

	// ---- 2. n8n
	const t0 = Date.now();
	const install = await ensureN8n(opts.major, say);
	say(`${describeVersions(install)} ready (${secondsSince(t0)})`);

	// ---- 3. the package, installed the way a user would
	const tgz = await step('npm pack', () => packPackage(projectDir));
	say(`packed ${path.basename(tgz)}`);
	const folder = (processes.folder = await step(
		'installed the .tgz into a fresh n8n user folder',
		() => N8nUserFolder.create(install, { tgz, log: () => undefined }),
	));
	say(`user folder ${folder.dir} (removed on exit)`);

	// ---- 4. credential and workflows
	await step(`imported the credential "${credential.name}" (base URL ${sim.url})`, () =>
		folder.importCredentials([
			{
				id: credential.id,
				name: credential.name,
				type: 'taskBacklogApi',
				data: { baseUrl: sim.url, token: DEMO_TOKEN },
			},
		]),
	);
	await step(
		`imported ${workflows.length} example workflows (${workflows.map((w) => w.file).join(', ')})`,
		() => folder.importWorkflow(workflows.map((w) => w.workflow)),
	);
	return { install, sim, folder, workflows, headline, credential };
}
