/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// The README's install, as a user runs it (issue 33 item 1): the packed tarball installed into
// $N8N_USER_FOLDER/.n8n/nodes with exactly the npm command the README's Installation section writes (the same npm
// and flags, on the Node that runs n8n), then a workflow whose Task Backlog node hits a 404. The package must come
// alone (no second n8n-workflow beside it, which Node's resolution would hand the package instead of n8n's own) and
// its error must be the NodeApiError n8n shows for an API error. n8n keeps the same fields of that error whichever
// copy made it (measured on 2.41.1 with a copy beside the package: the same error in the run), so which file the
// package's require('n8n-workflow') loads is checked too, resolved as n8n's loader resolves it. The harness's own
// install (`--omit=peer`) is checked the same way.
import * as fs from 'fs';
import * as path from 'path';

import { N8nUserFolder, type N8nMajor } from '../../tools/n8n/n8n';
import {
	backlogNode,
	importAndRun,
	log,
	manualWorkflow,
	nodeError,
	packOnce,
	PKG,
	printTimings,
	projectDir,
	runError,
	setUpStage,
	timed,
	type Stage,
} from './lib/backlog';

/**
 * The npm arguments of the README's install commands (Installation section) for the current release: every
 * `npm install … n8n-nodes-task-backlog …` there (the npm and Docker paths), the package name replaced by `{pkg}`;
 * they must all be the same. Commands naming a version (`n8n-nodes-task-backlog@0.1.0`) are for that version only.
 */
function readmeInstallArgs(): string[] {
	const readme = fs.readFileSync(path.join(projectDir, 'README.md'), 'utf8');
	const section = /^## Installation\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
	if (!section) throw new Error('README.md has no "## Installation" section');
	const text = section.replace(/\s+/g, ' ');
	const commands = new Set<string>();
	for (const match of text.matchAll(
		/\bnpm (install|i)((?: [^\s`'"]+)*?) n8n-nodes-task-backlog(?![@\w-])((?: -[^\s`'"]+)*)/g,
	)) {
		commands.add(`npm ${match[1]}${match[2]} {pkg}${match[3]}`);
	}
	if (commands.size !== 1)
		throw new Error(
			`expected one install command in the README's Installation section, found: ${[...commands].join(' | ') || 'none'}`,
		);
	return [...commands][0].split(' ').slice(1);
}

/** The entries of <nodes>/node_modules, dot-files (npm's .package-lock.json) left out. */
function installedPackages(folder: N8nUserFolder): string[] {
	return fs
		.readdirSync(path.join(folder.nodesDir, 'node_modules'))
		.filter((name) => !name.startsWith('.'))
		.sort();
}

const MISSING_UID = '00000000-0000-4000-8000-000000000404';

const started = Date.now();
afterAll(() => {
	printTimings('install');
	log(`install.test.ts took ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

describe.each([2, 1] as N8nMajor[])('installed as the README says, n8n %i.x', (major) => {
	let stage: Stage | undefined;
	let npmArgs: string[] = [];
	let npmOutput = '';
	let majorStarted = 0;

	beforeAll(async () => {
		majorStarted = Date.now();
		npmArgs = readmeInstallArgs();
		stage = await setUpStage(
			major,
			{},
			{
				installWith: async (folder, tgz) => {
					// the README's command word for word, the tarball in the package name's place, in .n8n/nodes
					const args = npmArgs.map((arg) => (arg === '{pkg}' ? tgz : arg));
					log(`n8n ${major}.x: in ${folder.nodesDir}: npm ${args.join(' ')}`);
					const result = await timed(
						`n8n ${major}.x README install (npm ${npmArgs.join(' ')})`,
						() => folder.npmInNodesDir(args, { check: true }),
					);
					npmOutput = `${result.stdout}\n${result.stderr}`.trim();
					log(
						`n8n ${major}.x npm: ${npmOutput
							.split('\n')
							.filter((line) => /^(added|removed|changed|up to date)/.test(line))
							.join('; ')}`,
					);
				},
			},
		);
	}, 30 * 60_000);

	afterAll(async () => {
		await stage?.dispose();
		log(
			`n8n ${major}.x README install tests: ${((Date.now() - majorStarted) / 1000).toFixed(1)} s`,
		);
	}, 120_000);

	test("the README command installs the package alone; it loads n8n's own n8n-workflow", async () => {
		expect(npmArgs).toContain('{pkg}');
		const folder = stage!.folder;
		expect(installedPackages(folder)).toEqual([PKG]);
		expect(fs.existsSync(path.join(folder.nodesDir, 'node_modules', PKG, 'node_modules'))).toBe(
			false,
		);
		expect(npmOutput).toMatch(/added 1 package\b/);
		const resolved = await folder.n8nWorkflowResolution(PKG);
		log(
			`n8n ${major}.x: n8n-workflow for n8n ${resolved.n8n}; for the package ${resolved.package}`,
		);
		expect(resolved.n8n.startsWith(stage!.install.dir + path.sep)).toBe(true);
		expect(resolved.package).toBe(resolved.n8n);
	}, 120_000);

	test(
		"a 404 fails the node with n8n's NodeApiError: httpCode 404, the service's message and our hint",
		async () => {
			const workflow = manualWorkflow(
				`installGet404Wf${major}`,
				`e2e: README install, Get of a missing task (${major}.x)`,
				[
					backlogNode('Get', {
						resource: 'task',
						operation: 'get',
						task: { __rl: true, mode: 'id', value: MISSING_UID },
					}),
				],
			);
			const result = await importAndRun(stage!, workflow, 1);
			expect(result.code).toBe(1);
			const error = nodeError(result.run, 'Get') as
				| {
						name?: string;
						httpCode?: string;
						message?: string;
						description?: string;
						node?: { name: string };
				  }
				| undefined;
			log(`n8n ${major}.x error: ${error?.name} ${error?.httpCode}: ${error?.message}`);
			// what n8n keeps of a NodeApiError (the editor shows an API error from these fields)
			expect(error?.name).toBe('NodeApiError');
			expect(error?.httpCode).toBe('404');
			expect(error?.message).toBe(
				`GET /tasks/${MISSING_UID} failed with 404 Not Found: Task ${MISSING_UID} not found`,
			);
			expect(error?.description).toMatch(/^Nothing found at \/tasks\/.*Base URL ends in \/api\/v1/);
			expect(error?.node?.name).toBe('Get');
			expect(runError(result.run)).toMatchObject({ name: 'NodeApiError', httpCode: '404' });
			expect(
				stage!.sim.requests.some((r) => r.method === 'GET' && r.path === `/tasks/${MISSING_UID}`),
			).toBe(true);
		},
		5 * 60_000,
	);

	test("the harness's install (npm i <tgz> --omit=peer) installs it alone too", async () => {
		const tgz = await packOnce();
		const folder = await timed(`n8n ${major}.x --omit=peer install`, () =>
			N8nUserFolder.create(stage!.install, { tgz, log }),
		);
		try {
			expect(installedPackages(folder)).toEqual([PKG]);
			const resolved = await folder.n8nWorkflowResolution(PKG);
			expect(resolved.package).toBe(resolved.n8n);
		} finally {
			await folder.dispose();
		}
	}, 120_000);
});
