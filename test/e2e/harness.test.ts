/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-explicit-any -- test code, never ships */
// Proves the real-n8n harness on both majors with built-in nodes only: install (cached), execute a workflow from the
// command line, and serve an activated webhook. Our own package is installed too when dist/ is built.
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { request } from 'undici';
import {
	describeVersions,
	ensureN8n,
	N8nInstall,
	N8nMajor,
	N8nUserFolder,
	packPackage,
} from '../../tools/n8n/n8n';
import { log, printTimings, timed } from './lib/backlog';

const projectDir = path.resolve(__dirname, '..', '..');

let tgz: string | undefined;

beforeAll(async () => {
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes'))) {
		log('dist/nodes is not built: user folders get built-in nodes only');
		return;
	}
	try {
		tgz = await packPackage(projectDir);
		log(`packed ${tgz}`);
	} catch (error) {
		log(
			`npm pack failed, going on without our package: ${(error as Error).message.split('\n')[0]}`,
		);
	}
}, 120_000);

afterAll(() => {
	printTimings('harness');
});

/** Whether any process of this process group is still there. */
function groupAlive(pgid: number): boolean {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

// Node type versions that exist in both n8n 1.123 and 2.41.
const setWorkflow = (id: string) => ({
	id,
	name: 'e2e harness: manual trigger + edit fields',
	active: false,
	settings: { executionOrder: 'v1' },
	pinData: {},
	nodes: [
		{
			id: randomUUID(),
			name: 'Manual',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: randomUUID(),
			name: 'Edit Fields',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [220, 0],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{ id: randomUUID(), name: 'hello', value: 'world', type: 'string' },
						{ id: randomUUID(), name: 'sum', value: '={{ 40 + 2 }}', type: 'number' },
					],
				},
				options: {},
			},
		},
	],
	connections: { Manual: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
});

const webhookWorkflow = (id: string, webhookPath: string) => ({
	id,
	name: 'e2e harness: webhook',
	active: false,
	settings: { executionOrder: 'v1' },
	pinData: {},
	nodes: [
		{
			id: randomUUID(),
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			position: [0, 0],
			webhookId: randomUUID(),
			parameters: {
				httpMethod: 'POST',
				path: webhookPath,
				responseMode: 'onReceived',
				options: {},
			},
		},
	],
	connections: {},
});

/** Items a node put out in a run printed by `n8n execute --rawOutput`. */
function nodeOutput(run: any, nodeName: string): Array<Record<string, unknown>> {
	const runData = run?.data?.resultData?.runData ?? run?.resultData?.runData;
	const items = runData?.[nodeName]?.[0]?.data?.main?.[0] as
		Array<{ json: Record<string, unknown> }> | undefined;
	return (items ?? []).map((item) => item.json);
}

describe.each([2, 1] as N8nMajor[])('real n8n %i.x', (major) => {
	let install: N8nInstall;
	let folder: N8nUserFolder;

	beforeAll(async () => {
		install = await timed(`n8n ${major}.x ensureN8n`, () => ensureN8n(major, log));
		log(describeVersions(install));
		folder = await timed(`n8n ${major}.x user folder${tgz ? ' + package install' : ''}`, () =>
			N8nUserFolder.create(install, { tgz, log }),
		);
	}, 30 * 60_000);

	afterAll(async () => {
		await folder?.dispose();
	}, 60_000);

	test('installs our package when dist/ is built', () => {
		const installed = path.join(
			folder.dir,
			'.n8n',
			'nodes',
			'node_modules',
			'n8n-nodes-task-backlog',
			'package.json',
		);
		expect(fs.existsSync(installed)).toBe(tgz !== undefined);
	});

	test(
		'executes a workflow of built-in nodes',
		async () => {
			const id = `e2eHarnessSet00${major}`;
			await timed(`n8n ${major}.x import:workflow`, () => folder.importWorkflow(setWorkflow(id)));
			const result = await timed(`n8n ${major}.x execute`, () =>
				folder.execute(id, { timeoutMs: 120_000 }),
			);
			if (result.code !== 0 || !result.run)
				log(`execute output:\n${result.stdout}\n${result.stderr}`);
			expect(result.code).toBe(0);
			expect(nodeOutput(result.run, 'Edit Fields')).toEqual([{ hello: 'world', sum: 42 }]);
		},
		5 * 60_000,
	);

	test(
		'serves an activated webhook',
		async () => {
			const id = `e2eHarnessHook0${major}`;
			const webhookPath = `e2e-harness-${major}`;
			await folder.importWorkflow(webhookWorkflow(id, webhookPath));
			await timed(`n8n ${major}.x activate`, () => folder.activate(id));
			const server = await timed(`n8n ${major}.x start (ready)`, () =>
				folder.start({ timeoutMs: 120_000 }),
			);
			try {
				await timed(`n8n ${major}.x webhook registered`, () =>
					folder.waitForWebhook(server.baseUrl, webhookPath),
				);
				const res = await request(`${server.baseUrl}/webhook/${webhookPath}`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ ping: 1 }),
					headersTimeout: 30_000,
					bodyTimeout: 30_000,
				});
				const body = await res.body.text();
				if (res.statusCode !== 200)
					log(`webhook answered ${res.statusCode}: ${body}\n${server.logs()}`);
				expect(res.statusCode).toBe(200);
			} finally {
				await timed(`n8n ${major}.x stop`, () => server.stop());
			}
			// n8n, its task runner and the time-limit wrapper are all gone
			expect(groupAlive(server.pid)).toBe(false);
		},
		5 * 60_000,
	);
});
