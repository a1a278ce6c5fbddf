/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, @typescript-eslint/no-explicit-any -- test code, never ships */
// Shared set-up of the end-to-end suite on top of the real-n8n harness (./n8n.ts): one n8n user folder with our
// packed package installed, a simulator of the service in the jest process, a credential pointing at it, and small
// builders and readers for workflows and the runs `n8n execute` prints.
import { request, type Dispatcher } from 'undici';
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';

import type { Simulator, SimulatorOptions } from '../../../tools/simulator/simulator';
import { startSimulator } from '../../../tools/simulator/simulator';
import type { ExecuteResult, N8nInstall, N8nMajor } from '../../../tools/n8n/n8n';
import { describeVersions, ensureN8n, N8nUserFolder, packPackage } from '../../../tools/n8n/n8n';

export const projectDir = path.resolve(__dirname, '..', '..', '..');
export const CREDENTIAL_ID = 'taskBacklogCredential';
export const CREDENTIAL_NAME = 'Task Backlog (simulator)';
export const TOKEN = 'e2e-token';
export const PKG = 'n8n-nodes-task-backlog';

export const log = (line: string) => process.stderr.write(`[e2e] ${line}\n`);

const timings: string[] = [];
export async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
	const started = Date.now();
	try {
		return await fn();
	} finally {
		const line = `${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`;
		timings.push(line);
		log(line);
	}
}
export function printTimings(title: string): void {
	log(`${title} timings:\n  ${timings.join('\n  ')}`);
}

/** `npm test` builds before jest; a lone run of an e2e file builds when dist/ is missing. */
export function ensureBuilt(): void {
	if (fs.existsSync(path.join(projectDir, 'dist', 'nodes', 'TaskBacklog', 'TaskBacklog.node.js')))
		return;
	log('dist/ is missing: npm run build');
	const result = spawnSync('npm', ['run', 'build'], {
		cwd: projectDir,
		encoding: 'utf8',
		timeout: 5 * 60_000,
	});
	if (result.status !== 0)
		throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
}

let packed: Promise<string> | undefined;
/** One `npm pack` per jest file (a module instance per file), shared by both majors. */
export function packOnce(): Promise<string> {
	packed ??= (async () => {
		ensureBuilt();
		return await packPackage(projectDir);
	})();
	return packed;
}

export interface Stage {
	major: N8nMajor;
	install: N8nInstall;
	folder: N8nUserFolder;
	sim: Simulator;
	dispose(): Promise<void>;
}

export function credentialData(sim: Simulator, token = TOKEN, extra: Record<string, unknown> = {}) {
	return { baseUrl: sim.url, token, requestsPerMinute: 6000, rateLimitWindowSeconds: 60, ...extra };
}

/**
 * ensureN8n, the package installed from its tgz into a fresh user folder as a user would, a simulator on
 * 127.0.0.1 and the credential `taskBacklogCredential` pointing at it. The harness installs with
 * `npm i <tgz> --omit=peer`; `installWith` installs the tgz its own way instead (e.g. the README's command).
 */
export async function setUpStage(
	major: N8nMajor,
	simOptions: SimulatorOptions = {},
	opts: {
		installWith?: (folder: N8nUserFolder, tgz: string) => Promise<void>;
		/** More credentials, imported with the default one (each n8n run boots n8n: seconds) */
		credentials?: (
			sim: Simulator,
		) => Array<{ id: string; name: string; type: string; data: Record<string, unknown> }>;
	} = {},
): Promise<Stage> {
	const install = await timed(`n8n ${major}.x ensureN8n`, () => ensureN8n(major, log));
	log(`running ${describeVersions(install)}`);
	const tgz = await timed('npm pack', () => packOnce());
	const { installWith } = opts;
	const what = installWith ? 'user folder' : `user folder + npm i ${path.basename(tgz)}`;
	const folder = await timed(`n8n ${major}.x ${what}`, () =>
		N8nUserFolder.create(install, { tgz: installWith ? undefined : tgz, log }),
	);
	let sim: Simulator | undefined;
	try {
		if (installWith) await installWith(folder, tgz);
		sim = await startSimulator({ tokens: [TOKEN], seed: 7, ...simOptions });
		await timed(`n8n ${major}.x import:credentials`, () =>
			folder.importCredentials([
				{
					id: CREDENTIAL_ID,
					name: CREDENTIAL_NAME,
					type: 'taskBacklogApi',
					data: credentialData(sim!),
				},
				...(opts.credentials?.(sim!) ?? []),
			]),
		);
	} catch (error) {
		await sim?.stop();
		await folder.dispose();
		throw error;
	}
	const stage: Stage = {
		major,
		install,
		folder,
		sim,
		dispose: async () => {
			await folder.dispose().catch((error: Error) => log(`dispose: ${error.message}`));
			await sim!.stop().catch(() => undefined);
		},
	};
	return stage;
}

// ---------------------------------------------------------------------------------------------------------------------
// Workflows

export interface NodeSpec {
	name: string;
	type: string;
	typeVersion?: number;
	parameters?: Record<string, unknown>;
	/** extra node settings: onError, webhookId, credentials... */
	[setting: string]: unknown;
}

export const credentialRef = { taskBacklogApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } };

/** A Task Backlog node (credential attached). */
export function backlogNode(
	name: string,
	parameters: Record<string, unknown>,
	settings: Record<string, unknown> = {},
): NodeSpec {
	return {
		name,
		type: `${PKG}.taskBacklog`,
		typeVersion: 1,
		parameters,
		credentials: credentialRef,
		...settings,
	};
}

/** A Code node returning `items` (JSON-serialisable) or running `code`. */
export function codeNode(name: string, itemsOrCode: unknown[] | string): NodeSpec {
	const jsCode =
		typeof itemsOrCode === 'string'
			? itemsOrCode
			: `return ${JSON.stringify(itemsOrCode)}.map((json) => ({ json }));`;
	return { name, type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode } };
}

/**
 * A workflow started by a Manual Trigger; each branch is a chain of nodes fed by the trigger (branches run one
 * after the other, top first, so independent checks can share one execution).
 */
export function manualWorkflow(id: string, name: string, ...branches: NodeSpec[][]) {
	const nodes: object[] = [];
	const connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: 'main'; index: number }>> }
	> = {};
	const add = (spec: NodeSpec, x: number, y: number) => {
		const { name: nodeName, type, typeVersion, parameters, ...settings } = spec;
		nodes.push({
			id: randomUUID(),
			name: nodeName,
			type,
			typeVersion: typeVersion ?? 1,
			position: [x * 240, y * 180],
			parameters: parameters ?? {},
			...settings,
		});
	};
	const connect = (from: string, to: string) => {
		connections[from] ??= { main: [[]] };
		connections[from].main[0].push({ node: to, type: 'main', index: 0 });
	};
	add({ name: 'Manual', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 }, 0, 0);
	branches.forEach((branch, y) =>
		branch.forEach((spec, x) => {
			add(spec, x + 1, y);
			connect(x === 0 ? 'Manual' : branch[x - 1].name, spec.name);
		}),
	);
	return workflowOf(id, name, nodes, connections);
}

/** An inactive workflow (execution order v1) of these nodes and connections, as `n8n import:workflow` takes it. */
export function workflowOf<N, C>(id: string, name: string, nodes: N[], connections: C) {
	return {
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		nodes,
		connections,
	};
}

export function loadExample(file: string): any {
	return JSON.parse(fs.readFileSync(path.join(projectDir, 'examples', file), 'utf8'));
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading runs

function runData(run: any): Record<string, any[]> | undefined {
	return run?.data?.resultData?.runData ?? run?.resultData?.runData;
}

/** JSON of the items a node put out on its first output (first run of the node unless runIndex). */
export function nodeOutput(run: any, nodeName: string, runIndex = 0): Array<Record<string, any>> {
	const items = runData(run)?.[nodeName]?.[runIndex]?.data?.main?.[0] as
		Array<{ json: Record<string, any> }> | undefined;
	return (items ?? []).map((item) => item.json);
}

/** Items with pairing, for checks of pairedItem. */
export function nodeItems(
	run: any,
	nodeName: string,
): Array<{ json: Record<string, any>; pairedItem?: any }> {
	return runData(run)?.[nodeName]?.[0]?.data?.main?.[0] ?? [];
}

/** The error a node ended with (message and description), or undefined. */
export function nodeError(
	run: any,
	nodeName: string,
): { message: string; description?: string; httpCode?: string } | undefined {
	return runData(run)?.[nodeName]?.[0]?.error;
}

export function runError(
	run: any,
): { message: string; description?: string; node?: { name: string } } | undefined {
	return run?.data?.resultData?.error ?? run?.resultData?.error;
}

/** Imports and executes a workflow; logs the output when it did not end as expected. */
export async function importAndRun(
	stage: Stage,
	workflow: { id: string; name: string },
	expectCode = 0,
): Promise<ExecuteResult> {
	await stage.folder.importWorkflow(workflow);
	const result = await timed(`n8n ${stage.major}.x execute ${workflow.name}`, () =>
		stage.folder.execute(workflow.id, { timeoutMs: 180_000 }),
	);
	if (result.code !== expectCode || !result.run) {
		log(
			`execute ${workflow.name} exited ${result.code} (expected ${expectCode}):\n${tailOf(result.stdout)}\n${tailOf(result.stderr)}`,
		);
	}
	return result;
}

function tailOf(text: string, lines = 60): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls until check() returns a truthy value or the time is up. */
type Falsy = false | 0 | '' | null | undefined;
export async function waitFor<T>(
	what: string,
	check: () => T | Falsy | Promise<T | Falsy>,
	timeoutMs: number,
	everyMs = 250,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value as T;
		if (Date.now() > deadline)
			throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, everyMs));
	}
}

/** One HTTP request to n8n or the simulator (JSON bodies), with the answer's status, text, parsed JSON and headers. */
export async function http(
	method: string,
	url: string,
	opts: {
		body?: string | object;
		headers?: Record<string, string>;
		timeoutMs?: number;
		/** Connections to send it on; undici's global pool (kept alive) when absent. */
		dispatcher?: Dispatcher;
	} = {},
): Promise<{
	status: number;
	text: string;
	json: any;
	headers: Record<string, string | string[] | undefined>;
}> {
	const body =
		typeof opts.body === 'string' || opts.body === undefined
			? opts.body
			: JSON.stringify(opts.body);
	const res = await request(url, {
		method: method as 'GET',
		headers: {
			...(body !== undefined ? { 'content-type': 'application/json' } : {}),
			...(opts.headers ?? {}),
		},
		body,
		headersTimeout: opts.timeoutMs ?? 60_000,
		bodyTimeout: opts.timeoutMs ?? 60_000,
		dispatcher: opts.dispatcher,
	});
	const text = await res.body.text();
	let json: any;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: res.statusCode, text, json, headers: res.headers };
}

/** Sets up n8n's owner (once per n8n database: its REST API answers nobody before) and answers the session cookie. */
export async function setUpOwner(baseUrl: string): Promise<string> {
	const owner = await http('POST', `${baseUrl}/rest/owner/setup`, {
		body: {
			email: 'owner@example.com',
			firstName: 'E2E',
			lastName: 'Owner',
			password: 'E2e-owner-passw0rd',
		},
	});
	const cookie = String(([] as string[]).concat(owner.headers['set-cookie'] ?? [])[0] ?? '').split(
		';',
	)[0];
	if (owner.status !== 200 || !cookie.startsWith('n8n-auth='))
		throw new Error(`n8n owner setup: ${owner.status} ${owner.text}`);
	return cookie;
}
