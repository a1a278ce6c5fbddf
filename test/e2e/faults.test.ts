/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// Fault injection in a real n8n: the packed package, run by `n8n execute` (and `n8n start` for concurrent runs),
// against the simulator of the service injecting server errors, 429s, connection resets (before and after the
// request's work) and latency. Every rule is a test name. Both majors by default; TASK_BACKLOG_E2E_MAJORS=2 runs one.
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { request } from 'undici';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { MeasuredRun } from '../../tools/bench/measured';
import { MeasuredFolder } from '../../tools/bench/measured';
import type { Json, Workflow, WorkflowNode } from '../../tools/n8n/workflows';
import * as W from '../../tools/n8n/workflows';
import type { LoggedRequest, Simulator } from '../../tools/simulator/simulator';
import { startSimulator } from '../../tools/simulator/simulator';
import type { N8nInstall, N8nMajor, N8nServer } from '../../tools/n8n/n8n';
import { describeVersions, ensureN8n, packPackage } from '../../tools/n8n/n8n';

const log = (line: string) => process.stderr.write(`[faults-e2e] ${line}\n`);
const projectDir = path.resolve(__dirname, '..', '..');
const MAJORS = (process.env.TASK_BACKLOG_E2E_MAJORS ?? '2,1')
	.split(',')
	.map((m) => Number(m.trim()) as N8nMajor);

/** Requests per window of the service, and our time-scaled window: the credential says the same. */
const LIMIT = 60;
const WINDOW_MS = 1000;

/** Retries fast enough for a test, many enough that a run survives the fault rates below. */
const RETRIES = { maxAttempts: 10, retryDelayMs: 20 };

const FAULTS = {
	error5xxRate: 0.2,
	rateLimitRate: 0.1,
	retryAfterRate: 0.5,
	retryAfterSeconds: 1,
	resetRate: 0.05,
	resetAfterEffectRate: 0.05,
	latencyMs: [0, 40] as [number, number],
};

const ticketUid = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);

let tgz: string;

beforeAll(async () => {
	if (!fs.existsSync(path.join(projectDir, 'dist', 'nodes')))
		throw new Error('dist/ is not built: run npm run build first');
	tgz = await packPackage(projectDir);
}, 120_000);

describe.each(MAJORS)('real n8n %i.x under faults', (major) => {
	const token = `tb-e2e-secret-${randomBytes(12).toString('hex')}`;
	const credential = { id: 'faultsCredMain01', name: 'Task Backlog (e2e)' };
	const noScheme = { id: 'faultsCredNoSchm', name: 'Task Backlog (base URL without scheme)' };
	/** Everything n8n printed or answered in this block, searched for the token at the end. */
	const seen: string[] = [];
	let install: N8nInstall;
	let folder: MeasuredFolder;
	let sim: Simulator;
	const started = Date.now();

	const workflows: Record<string, Workflow> = {};
	const wf = (key: string, chain: WorkflowNode[], branches: WorkflowNode[][] = []) => {
		const id = `flt${key}`.padEnd(16, '0');
		if (id.length > 16 || Object.values(workflows).some((known) => known.id === id))
			throw new Error(`workflow id ${id}`);
		workflows[key] = W.workflow(id, `e2e faults: ${key}`, chain, branches);
		return id;
	};

	const upsert = (name: string, requestOptions: Json, extra: Json = {}, settings: Json = {}) =>
		W.backlogNode(
			name,
			credential,
			W.upsertParameters({ ...RETRIES, ...requestOptions }, extra),
			settings,
		);
	const continueOnFail = { onError: 'continueRegularOutput' };

	// 1,000 batched upserts and 100 single creates in one run
	const FAULTY = wf(
		'Faulty',
		[W.manualTrigger(), W.ticketsNode('Tickets', 1000), upsert('Upsert 1000', { batchSize: 25 })],
		[
			[
				W.ticketsNode('Creates', 100, 'C', 'Create'),
				W.backlogNode('Create 100', credential, {
					resource: 'task',
					operation: 'create',
					title: '={{ $json.title }}',
					requestOptions: { ...RETRIES, batching: false },
				}),
			],
		],
	);
	// 300 tickets in batches of 10: the token is revoked after the 5th request
	const REVOKED = wf('Revoked', [
		W.manualTrigger(),
		W.ticketsNode('Tickets', 300, 'R'),
		upsert('Upsert', { batchSize: 10, maxAttempts: 3 }),
	]);
	// item 4 names itself as its parent: the service answers 422 for it
	const selfParent = (prefix: string) =>
		Array.from({ length: 10 }, (_, i) => {
			const id = `${prefix}-${i + 1}`;
			return { id, title: `Ticket ${id}`, parent: i === 3 ? ticketUid(id) : '' };
		});
	const withParent = { additionalFields: { parent_uid: '={{ $json.parent }}' } };
	const REJECTED = wf(
		'Rejected',
		[
			W.manualTrigger(),
			W.itemsNode('Batched items', selfParent('P')),
			upsert('Batched', {}, withParent, continueOnFail),
		],
		[
			[
				W.itemsNode('Single items', selfParent('Q')),
				upsert('Single', { batching: false }, withParent, continueOnFail),
			],
		],
	);
	// bad inputs, one branch each, Continue On Fail
	const bad: Record<string, { node: WorkflowNode; error: RegExp }> = {
		'Bad UID': {
			node: upsert(
				'Bad UID',
				{},
				{ identifyBy: 'uid', uid: 'not-a-uuid', title: 'x' },
				continueOnFail,
			),
			error: /Item 0: "UID" must be a UID \(a UUID/,
		},
		'Invalid JSON': {
			node: upsert(
				'Invalid JSON',
				{},
				{ externalId: 'J-1', title: 'x', customFieldsJson: '{"priority": ' },
				continueOnFail,
			),
			error: /Item 0: "Custom Fields \(JSON\)" is not valid JSON/,
		},
		'Empty title': {
			node: upsert('Empty title', {}, { externalId: 'E-1', title: '  ' }, continueOnFail),
			error: /Item 0: "Title" is empty/,
		},
		'5 MB field': {
			node: upsert(
				'5 MB field',
				{},
				{
					externalId: 'F-1',
					title: 'x',
					customFields: { field: [{ name: 'notes', value: "={{ 'x'.repeat(5 * 1024 * 1024) }}" }] },
				},
				continueOnFail,
			),
			error: /Item 0: "fields\.notes" is 5\.0 MB; values over 1 MB are not sent/,
		},
		'No scheme': {
			node: W.backlogNode(
				'No scheme',
				noScheme,
				W.upsertParameters(RETRIES, { externalId: 'S-1', title: 'x' }),
				continueOnFail,
			),
			error: /Base URL "127\.0\.0\.1:\d+\/api\/v1" is not an http\(s\) address/,
		},
	};
	const BAD = wf(
		'BadInputs',
		[W.manualTrigger()],
		Object.values(bad).map(({ node }) => [node]),
	);
	const BAD_STOPS = wf('BadStops', [
		W.manualTrigger(),
		upsert('Bad UID', {}, { identifyBy: 'uid', uid: 'not-a-uuid', title: 'x' }),
	]);
	// two webhook-triggered workflows, 60 single writes each, at the same time in one n8n process
	const hookPath = (name: string) => `faults-${major}-${name}`;
	const CONCURRENT = ['A', 'B'].map((name) =>
		wf(`Concurrent${name}`, [
			W.webhookNode('Webhook', hookPath(name)),
			W.ticketsNode('Tickets', LIMIT, name),
			upsert('Upsert', { batching: false }),
		]),
	);

	const execute = async (id: string): Promise<MeasuredRun> => {
		const run = await folder.execute(id, 4 * 60_000);
		seen.push(run.stdout, run.stderr);
		return run;
	};
	const output = (run: MeasuredRun, node: string) => W.nodeRun(run.run, node)?.items ?? [];
	const configure = (faults?: typeof FAULTS, seed?: number) => {
		sim.reset();
		sim.configure({ tokens: [token], requestsPerWindow: LIMIT, windowMs: WINDOW_MS, faults, seed });
	};

	beforeAll(async () => {
		install = await ensureN8n(major, log);
		log(describeVersions(install));
		sim = await startSimulator({ tokens: [token], requestsPerWindow: LIMIT, windowMs: WINDOW_MS });
		folder = await MeasuredFolder.create(install, { tgz, log });
		const data = { token, requestsPerMinute: LIMIT, rateLimitWindowSeconds: WINDOW_MS / 1000 };
		await folder.folder.importCredentials([
			W.backlogCredential(credential, { baseUrl: sim.url, ...data }),
			W.backlogCredential(noScheme, { baseUrl: sim.url.replace(/^http:\/\//, ''), ...data }),
		]);
		await folder.folder.importWorkflow(Object.values(workflows));
		log(`n8n ${major}.x set up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}, 30 * 60_000);

	afterAll(async () => {
		await folder?.dispose();
		await sim?.stop();
		log(`n8n ${major}.x fault suite: ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}, 120_000);

	test(
		'with 20% 5xx, 10% 429, 5% resets before and 5% after the effect: 1,000 batched upserts and 100 single creates each leave exactly one task with its values, and every item reports success',
		async () => {
			configure(FAULTS, 20260101 + major);
			const runStarted = Date.now();
			const run = await execute(FAULTY);
			log(
				`faulty run: ${((Date.now() - runStarted) / 1000).toFixed(1)} s, ${sim.requests.length} requests`,
			);
			expect(W.runError(run.run)).toBeUndefined();
			expect(run.code).toBe(0);

			// the faults really happened, of every kind
			const faults = new Map<string, number>();
			for (const entry of sim.requests)
				if (entry.fault)
					faults.set(
						entry.fault.replace(/-\d+$/, ''),
						(faults.get(entry.fault.replace(/-\d+$/, '')) ?? 0) + 1,
					);
			log(`injected: ${JSON.stringify(Object.fromEntries(faults))}`);
			for (const kind of ['error', 'rate-limit', 'reset', 'reset-after-effect'])
				expect(faults.get(kind) ?? 0).toBeGreaterThan(0);

			// upserts: each item is its task, in order
			const upserted = output(run, 'Upsert 1000');
			expect(upserted).toHaveLength(1000);
			expect(upserted.filter((item) => item.error !== undefined)).toEqual([]);
			upserted.forEach((task, i) => {
				expect(task.uid).toBe(ticketUid(`T-${i + 1}`));
				expect(task.fields).toMatchObject({ title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}` });
			});
			// creates: each item is a task of its own
			const created = output(run, 'Create 100');
			expect(created).toHaveLength(100);
			expect(created.filter((item) => item.error !== undefined)).toEqual([]);
			expect(created.map((task) => (task.fields as Json).title)).toEqual(
				Array.from({ length: 100 }, (_, i) => `Create ${i + 1}`),
			);
			expect(new Set(created.map((task) => task.uid)).size).toBe(100);

			// the service: every ticket exactly once with its values, nothing else
			const byTitle = new Map<string, number>();
			for (const task of sim.tasks.values())
				byTitle.set(String(task.fields.title), (byTitle.get(String(task.fields.title)) ?? 0) + 1);
			expect(sim.tasks.size).toBe(1100);
			for (let i = 1; i <= 1000; i++) {
				const task = sim.tasks.get(ticketUid(`T-${i}`));
				expect(task?.fields).toEqual({ title: `Ticket ${i}`, ticket_id: `T-${i}` });
			}
			for (let i = 1; i <= 100; i++) expect(byTitle.get(`Create ${i}`)).toBe(1);
			// the client stayed under the limit: the only 429s are the injected ones
			expect(
				sim.requests.filter((entry) => entry.status === 429 && entry.fault !== 'rate-limit'),
			).toEqual([]);
		},
		4 * 60_000,
	);

	test(
		'a 401 mid-run stops the run with a message naming the Task Backlog API credential, and nothing is sent after it',
		async () => {
			configure();
			// Revoke the token as the 5th request arrives: the scripted fault is only a hook that sees every request that
			// passed authentication; it never answers one itself.
			let authorised = 0;
			sim.failNext({
				status: 500,
				when: () => {
					authorised += 1;
					if (authorised === 5) sim.configure({ tokens: ['the-new-token'] });
					return false;
				},
			});
			const run = await execute(REVOKED);
			expect(run.code).not.toBe(0);
			const error = W.runError(run.run);
			expect(error?.message).toMatch(/failed with 401 Unauthorized/);
			expect(error?.description).toMatch(
				/Open the Task Backlog API credential and check the token/,
			);
			const requests = sim.requests;
			const first401 = requests.findIndex((entry) => entry.status === 401);
			expect(first401).toBe(5);
			// n8n's httpRequestWithAuthentication repeats a request once after a 401 (to refresh credentials): the same
			// request, once. Nothing else follows.
			const after = requests.slice(first401);
			expect(after.length).toBeLessThanOrEqual(2);
			for (const entry of after) {
				expect(entry).toMatchObject({
					status: 401,
					method: requests[first401].method,
					path: requests[first401].path,
				});
				expect(entry.body).toEqual(requests[first401].body);
			}
			// the batches before it were written (the requests before them are the bulk reads of the uids), nothing after
			const written = requests
				.slice(0, first401)
				.filter((entry) => entry.path === '/tasks/batch' && entry.status === 200)
				.reduce((sum, entry) => sum + ((entry.body as Json).items as unknown[]).length, 0);
			expect(written).toBeGreaterThan(0);
			expect(sim.tasks.size).toBe(written);
		},
		3 * 60_000,
	);

	test(
		"a 422 on one item, with Continue On Fail, fails that item only with the service's message; batched and single",
		async () => {
			configure();
			const run = await execute(REJECTED);
			expect(W.runError(run.run)).toBeUndefined();
			for (const [node, prefix] of [
				['Batched', 'P'],
				['Single', 'Q'],
			]) {
				const items = output(run, node);
				expect(items).toHaveLength(10);
				items.forEach((item, i) => {
					if (i === 3) {
						expect(item.httpCode).toBe('422');
						expect(String(item.error)).toMatch(/a task cannot be its own parent/);
						expect(String(item.error)).toContain(ticketUid(`${prefix}-4`));
					} else {
						expect(item.error).toBeUndefined();
						expect(item.uid).toBe(ticketUid(`${prefix}-${i + 1}`));
					}
				});
				expect(sim.tasks.has(ticketUid(`${prefix}-4`))).toBe(false);
				for (const i of [1, 2, 3, 5, 6, 7, 8, 9, 10])
					expect(sim.tasks.has(ticketUid(`${prefix}-${i}`))).toBe(true);
			}
			expect(sim.tasks.size).toBe(18);
		},
		3 * 60_000,
	);

	test(
		'bad inputs (bad UID, invalid JSON, empty title, a 5 MB field, a base URL without scheme) give their errors and send nothing',
		async () => {
			configure();
			const run = await execute(BAD);
			expect(W.runError(run.run)).toBeUndefined();
			for (const [node, { error }] of Object.entries(bad)) {
				const items = output(run, node);
				expect(items).toHaveLength(1);
				expect(String(items[0].error)).toMatch(error);
			}
			expect(sim.requests).toEqual([]);

			// without Continue On Fail the run stops at the bad item, before any request
			const stopped = await execute(BAD_STOPS);
			expect(stopped.code).not.toBe(0);
			expect(W.runError(stopped.run)?.message).toMatch(bad['Bad UID'].error);
			expect(sim.requests).toEqual([]);
		},
		3 * 60_000,
	);

	test(
		"two workflows running at once in one n8n process share the credential's rate limit: no 429, never more than 60 requests in any window",
		async () => {
			configure();
			for (const id of CONCURRENT) await folder.folder.activate(id);
			let server: N8nServer | undefined;
			try {
				server = await folder.folder.start({ timeoutMs: 120_000 });
				for (const name of ['A', 'B'])
					await folder.folder.waitForWebhook(server.baseUrl, hookPath(name));
				sim.clearRequests();
				const trigger = (name: string) =>
					request(`${server!.baseUrl}/webhook/${hookPath(name)}`, {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: '{}',
						headersTimeout: 120_000,
						bodyTimeout: 120_000,
					}).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }));
				const answers = await Promise.all([trigger('A'), trigger('B')]);
				for (const answer of answers) {
					seen.push(answer.body);
					expect(answer.status).toBe(200);
					expect(JSON.parse(answer.body)).toHaveLength(LIMIT);
				}
				const requests: LoggedRequest[] = sim.requests;
				const owner = (entry: LoggedRequest) =>
					String((entry.body as Json)?.fields?.ticket_id ?? '').slice(0, 1);
				// summaries only: a failed expectation must not print the request headers (they hold the token)
				const start = requests[0]?.at ?? 0;
				const summary = requests.map(
					(entry) =>
						`${entry.at - start} ms ${entry.method} ${entry.path} ${owner(entry)} ${entry.status}`,
				);
				if (summary.some((line) => line.endsWith(' 429')))
					log(`concurrent requests, ms since the first:\n${summary.join('\n')}`);
				expect(summary.filter((line) => line.endsWith(' 429'))).toEqual([]);
				// each ticket written once; the rest are each workflow's reads before writing (POST /tasks/query, or
				// GET /tasks/{uid} for one task)
				expect(
					requests.filter((entry) => entry.path !== '/tasks/query' && entry.method !== 'GET'),
				).toHaveLength(2 * LIMIT);
				// both ran at once: their requests interleave
				const firstB = requests.findIndex((entry) => owner(entry) === 'B');
				const lastA = requests.map(owner).lastIndexOf('A');
				const firstA = requests.findIndex((entry) => owner(entry) === 'A');
				const lastB = requests.map(owner).lastIndexOf('B');
				expect(Math.max(firstA, firstB)).toBeLessThan(Math.min(lastA, lastB));
				// any window of WINDOW_MS holds at most LIMIT requests, however it is placed
				let most = 0;
				for (let i = 0, j = 0; i < requests.length; i++) {
					while (requests[i].at - requests[j].at >= WINDOW_MS) j++;
					most = Math.max(most, i - j + 1);
				}
				expect(most).toBeLessThanOrEqual(LIMIT);
				expect(sim.tasks.size).toBe(2 * LIMIT);
			} finally {
				if (server) {
					seen.push(server.logs());
					await server.stop();
				}
			}
		},
		4 * 60_000,
	);

	test('the API token appears in no execution output, error or n8n log', () => {
		expect(seen.length).toBeGreaterThan(5);
		for (const text of seen) expect(text.includes(token)).toBe(false);
		// and the runs did see a 401 and errors, so there was occasion to leak it
		expect(seen.some((text) => text.includes('401'))).toBe(true);
	});
});
