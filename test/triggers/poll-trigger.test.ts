/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { TaskBacklogPollTrigger } from '../../nodes/TaskBacklogPollTrigger/TaskBacklogPollTrigger.node';
import {
	startSimulator,
	type Simulator,
	type SimulatorOptions,
	type Task,
} from '../../tools/simulator/simulator';
import { clockPastStamps } from '../helpers/clock';
import { activePoller, serviceApi, type Poller } from './harness';

const TOKEN = 'test-token';

let sim: Simulator;
let proxy: { url: string; stop: () => Promise<void> } | undefined;

async function start(options: SimulatorOptions = {}) {
	sim = await startSimulator({ tokens: [TOKEN], ...options });
	return sim;
}

afterEach(async () => {
	await proxy?.stop();
	proxy = undefined;
	await sim?.stop();
});

function poller(
	parameters: INodeParameters,
	options: {
		baseUrl?: string;
		credentials?: IDataObject;
		budgetMs?: number;
		mode?: 'manual' | 'trigger';
		savedOnlyWhenEmitting?: boolean;
	} = {},
): Poller {
	return activePoller(
		{
			nodeType: new TaskBacklogPollTrigger(),
			parameters,
			credentials: {
				baseUrl: options.baseUrl ?? sim.url,
				token: TOKEN,
				requestsPerMinute: 100000,
				...options.credentials,
			},
		},
		{
			budgetMs: options.budgetMs,
			mode: options.mode,
			savedOnlyWhenEmitting: options.savedOnlyWhenEmitting,
			beforeFirstPoll: () => clockPastStamps(sim),
		},
	);
}

const api = serviceApi(() => sim.url, TOKEN);

const create = (title: string, fields: IDataObject = {}) =>
	api('POST', '/tasks', { fields: { title, ...fields } });
/** Someone else's edit. It sends the whole fields object, as it must on a server that replaces fields on PATCH. */
const patch = async (uid: string, body: IDataObject) => {
	if (!body.fields) return await api('PATCH', `/tasks/${uid}`, body);
	const current = await api('GET', `/tasks/${uid}`);
	return await api('PATCH', `/tasks/${uid}`, {
		...body,
		fields: { ...current.fields, ...(body.fields as IDataObject) },
	});
};

const tasksOf = (output: INodeExecutionData[][] | null) =>
	(output?.[0] ?? []).map((item) => item.json as unknown as Task);
const uids = (output: INodeExecutionData[][] | null) => tasksOf(output).map((task) => task.uid);
/** The listings the trigger sent: POST /tasks/query (time, status, assignee) or GET /tasks (custom fields only). */
const listRequests = () =>
	sim.requests.filter(
		(r) => r.path === '/tasks/query' || (r.method === 'GET' && r.path === '/tasks'),
	);
/** Every leaf condition of a query body (paging by uid nests the trigger's own conditions one level down). */
const conditionsOf = (body: unknown): IDataObject[] => {
	const leaves = (condition: IDataObject | undefined): IDataObject[] =>
		!condition
			? []
			: Array.isArray(condition.conditions)
				? (condition.conditions as IDataObject[]).flatMap(leaves)
				: [condition];
	return leaves(((body ?? {}) as IDataObject).condition as IDataObject | undefined);
};
const conditionOn = (body: unknown, field: string) =>
	conditionsOf(body).find((c) => c.field === field);

/** The condition tree without the conditions on the given fields. */
function withoutConditionsOn(
	condition: IDataObject | undefined,
	fields: string[],
): IDataObject | undefined {
	if (!condition) return undefined;
	if (Array.isArray(condition.conditions)) {
		const kept = (condition.conditions as IDataObject[])
			.map((child) => withoutConditionsOn(child, fields))
			.filter((child): child is IDataObject => child !== undefined);
		return kept.length > 0 ? { ...condition, conditions: kept } : undefined;
	}
	return fields.includes(String(condition.field)) ? undefined : condition;
}

/**
 * A hop in front of the simulator that ignores some filters: it drops the named query parameters and the query
 * body's conditions on those fields (a server that ignores them). It keeps the rest, e.g. paging by uid.
 */
async function startIgnoringProxy(ignored: string[]) {
	const target = new URL(sim.url);
	const server: Server = createServer(async (req, res) => {
		const url = new URL(req.url ?? '/', 'http://proxy');
		for (const name of ignored) url.searchParams.delete(name);
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		let body = Buffer.concat(chunks);
		if (body.length > 0) {
			const parsed = JSON.parse(body.toString('utf8'));
			parsed.condition = withoutConditionsOn(parsed.condition, ignored);
			body = Buffer.from(JSON.stringify(parsed));
		}
		const upstream = httpRequest(
			{
				host: target.hostname,
				port: target.port,
				method: req.method,
				path: `${url.pathname}${url.search}`,
				headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
			},
			(response) => {
				res.writeHead(response.statusCode ?? 502, response.headers);
				response.pipe(res);
			},
		);
		upstream.end(body);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	proxy = {
		url: `http://127.0.0.1:${port}${target.pathname}`,
		stop: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
	return proxy;
}

/** Each (uid, marker) must appear once over all polls. */
function expectNoRepeats(emitted: Array<[string, string]>) {
	const keys = emitted.map(([uid, at]) => `${uid}@${at}`);
	expect(new Set(keys).size).toBe(keys.length);
}

describe('Task Backlog Poll Trigger', () => {
	it('the first poll emits nothing but sets the position', async () => {
		await start();
		const seeded = sim.seedTasks(5);
		const p = poller({ event: 'updatedTask' });

		expect(await p.poll()).toBeNull();

		const newest = seeded
			.map((t) => t.updated_at)
			.sort()
			.at(-1);
		const state = p.staticData().state as IDataObject;
		expect(state.position).toBe(newest);
		expect(Object.keys(state.seen as IDataObject).sort()).toEqual(seeded.map((t) => t.uid).sort());
		// It asked for changes only, with a condition on updated_at (GET /tasks has no documented time parameter).
		expect(listRequests()[0].path).toBe('/tasks/query');
		expect(conditionOn(listRequests()[0].body, 'updated_at')).toMatchObject({
			operator: '>=',
			value: expect.any(String),
		});
		// Nothing changed since: the second poll has nothing either.
		expect(await p.poll()).toBeNull();
	});

	it.each([
		['Updated Task', 'updatedTask'],
		['New Task', 'newTask'],
	])(
		'%s: a change saved while the first poll reads (after the trigger started) is emitted by the next poll, once',
		async (_, event) => {
			await start();
			const [task] = sim.seedTasks(3);
			let changed: Task | undefined;
			// Saved after the poll started, before the service answers its listing: the listing shows it.
			sim.meanwhile(
				({ method, path }) =>
					(method === 'POST' && path === '/tasks/query') || (method === 'GET' && path === '/tasks'),
				async () => {
					changed =
						event === 'newTask'
							? await create('Created while the trigger started')
							: await patch(task.uid, { status: 'STARTED' });
				},
			);
			const p = poller({ event });
			expect(await p.poll()).toBeNull();
			expect(changed).toBeDefined();
			expect(tasksOf(await p.poll()).map((t) => [t.uid, t.updated_at])).toEqual([
				[changed!.uid, changed!.updated_at],
			]);
			expect(await p.poll()).toBeNull();
		},
	);

	it('a poll that starts while the last one still runs (n8n 1.x starts polls on time) emits nothing: each change is emitted once', async () => {
		await start();
		const [task] = sim.seedTasks(2);
		const p = poller({ event: 'updatedTask' });
		expect(await p.poll()).toBeNull();
		const changed = await patch(task.uid, { status: 'STARTED' });
		// The next listing is slow (a slow service, or the trigger's requests waiting behind a busy workflow's).
		sim.meanwhile(
			({ path }) => path === '/tasks/query',
			() => new Promise((resolve) => setTimeout(resolve, 500)),
		);
		const first = p.poll();
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(await p.poll()).toBeNull();
		expect(uids(await first)).toEqual([changed.uid]);
		expect(await p.poll()).toBeNull();
	});

	it('a filter whose expression resolved to nothing fails the poll, before any request, instead of watching every task', async () => {
		await start();
		sim.seedTasks(3);
		const p = poller({
			event: 'updatedTask',
			filters: { assignee_uid: '={{ $vars.ASSIGNEE ?? "" }}' },
		});
		await expect(p.poll()).rejects.toThrow(
			'the filter "Assignee UID" is empty: its expression resolved to nothing',
		);
		expect(listRequests()).toHaveLength(0);
	});

	it('the first poll on an empty or quiet account still gives the next poll a starting point', async () => {
		await start();
		const p = poller({ event: 'newTask' });
		expect(await p.poll()).toBeNull();
		expect((p.staticData().state as IDataObject).position).toEqual(expect.any(String));

		const task = await create('First ever');
		expect(uids(await p.poll())).toEqual([task.uid]);
	});

	it('the poll trigger emits each change once across polls', async () => {
		await start();
		const [a, b] = sim.seedTasks(2);
		const p = poller({ event: 'updatedTask' });
		const emitted: Array<[string, string]> = [];
		const run = async () => {
			const tasks = tasksOf(await p.poll());
			emitted.push(...tasks.map((t): [string, string] => [t.uid, t.updated_at]));
			return tasks;
		};

		expect(await run()).toEqual([]);

		const a1 = await patch(a.uid, { fields: { note: 'first edit' } });
		expect((await run()).map((t) => [t.uid, t.updated_at])).toEqual([[a.uid, a1.updated_at]]);
		expect(await run()).toEqual([]);

		const c = await create('Brand new');
		const b1 = await patch(b.uid, { status: 'STARTED' });
		const a2 = await patch(a.uid, { fields: { note: 'second edit' } });
		const batch = await run();
		// Oldest change first; the emitted item is the task as the service returns it.
		expect(batch.map((t) => t.uid)).toEqual([c.uid, b.uid, a.uid]);
		expect(batch[2]).toEqual(a2);
		expect(batch[1].updated_at).toBe(b1.updated_at);
		expect(await run()).toEqual([]);
		expect(await run()).toEqual([]);

		expectNoRepeats(emitted);
		expect(emitted).toHaveLength(4);
	});

	it('with Send Time Filter off, each poll lists through the endpoint that carries the most per request: 500 tasks on GET pages of 13 cost one GET page and the query pages, and a change is emitted once', async () => {
		// Issue 32's server: GET /tasks clamps pages to 13, /tasks/query to 100.
		await start({ maxPageSize: 13, readings: { queryMaxLimit: 100 } });
		const seeded = sim.seedTasks(500);
		const p = poller({ event: 'updatedTask', options: { sendTimeFilter: false } });
		expect(await p.poll()).toBeNull();
		await patch(seeded[321].uid, { status: 'STARTED' });
		sim.clearRequests();
		expect(uids(await p.poll())).toEqual([seeded[321].uid]);
		expect(listRequests().filter((r) => r.method === 'GET')).toHaveLength(1);
		expect(listRequests().length).toBeLessThanOrEqual(1 + Math.ceil(500 / 100) + 1);
		expect(await p.poll()).toBeNull();
	});

	it('more changes than one page between two polls are all emitted once', async () => {
		// The server clamps every page to 10 items, whatever the trigger asks for.
		await start({ maxPageSize: 10 });
		sim.seedTasks(3);
		const p = poller({ event: 'updatedTask' });
		await p.poll();

		const created: string[] = [];
		for (let i = 0; i < 35; i++) created.push((await create(`Bulk ${i}`)).uid);
		sim.clearRequests();
		const first = uids(await p.poll());
		expect(first).toEqual(created);
		// Four pages of at most 10 (by cursor where the server offers one, by uid where it does not).
		expect(listRequests().length).toBeGreaterThanOrEqual(4);

		for (const uid of created.slice(0, 23))
			await patch(uid, { fields: { title: `Edited ${uid}` } });
		const second = uids(await p.poll());
		expect(second).toEqual(created.slice(0, 23));
		expect(await p.poll()).toBeNull();
	});

	it.each([0, 60])(
		'a server that ignores the time condition still emits each change once (lookback %ss)',
		async (lookbackSeconds) => {
			await start({ maxPageSize: 10 });
			const seeded = sim.seedTasks(25);
			// Ignores the time condition: every poll gets every task.
			const hop = await startIgnoringProxy(['updated_at', 'internal_updated_at']);
			const p = poller(
				{ event: 'updatedTask', options: { lookbackSeconds } },
				{ baseUrl: hop.url },
			);
			const emitted: Array<[string, string]> = [];
			const run = async () => {
				const tasks = tasksOf(await p.poll());
				emitted.push(...tasks.map((t): [string, string] => [t.uid, t.updated_at]));
				return tasks.map((t) => t.uid);
			};

			expect(await run()).toEqual([]);
			await patch(seeded[20].uid, { status: 'STARTED' });
			await patch(seeded[3].uid, { status: 'DONE' });
			expect(await run()).toEqual([seeded[20].uid, seeded[3].uid]);
			expect(await run()).toEqual([]);
			await patch(seeded[3].uid, { status: 'TODO' });
			expect(await run()).toEqual([seeded[3].uid]);
			expect(await run()).toEqual([]);

			// The proxy really did drop the condition, and every poll read all pages.
			expect(listRequests().some((r) => conditionOn(r.body, 'updated_at') !== undefined)).toBe(
				false,
			);
			expect(listRequests().length).toBeGreaterThanOrEqual(5 * 3);
			expectNoRepeats(emitted);
		},
	);

	it('with the default lookback, changes are read again but not emitted again', async () => {
		await start();
		const [a] = sim.seedTasks(1);
		const p = poller({ event: 'updatedTask' });
		await p.poll();
		await patch(a.uid, { fields: { note: 'x' } });
		expect(uids(await p.poll())).toEqual([a.uid]);
		sim.clearRequests();
		expect(await p.poll()).toBeNull();
		// The overlap returned the change again; the trigger remembered it.
		const since = conditionOn(listRequests()[0].body, 'updated_at')!.value;
		expect(Date.parse(String(since))).toBeLessThan(Date.parse(sim.tasks.get(a.uid)!.updated_at));
	});

	it('New Task emits created tasks once, not their later updates or older tasks', async () => {
		await start();
		const [old] = sim.seedTasks(2);
		const p = poller({ event: 'newTask' });
		await p.poll();

		await patch(old.uid, { fields: { note: 'updated, not new' } });
		const n1 = await create('New one');
		const n2 = await create('New two');
		expect(uids(await p.poll())).toEqual([n1.uid, n2.uid]);

		await patch(n1.uid, { status: 'STARTED' });
		expect(await p.poll()).toBeNull();
	});

	it('Closed Task emits a task when it becomes DONE, once, and again only after a reopen', async () => {
		await start();
		const [done] = sim.seedTasks(1, () => ({ status: 'DONE' }));
		const p = poller({ event: 'closedTask' });
		await p.poll();

		const task = await create('To close');
		expect(await p.poll()).toBeNull();

		const closed = await patch(task.uid, { status: 'DONE' });
		expect(tasksOf(await p.poll()).map((t) => [t.uid, t.status])).toEqual([[task.uid, 'DONE']]);

		// Edits of a closed task are not closings.
		await patch(task.uid, { fields: { note: 'after closing' } });
		await patch(done.uid, { fields: { note: 'closed before the trigger started' } });
		expect(await p.poll()).toBeNull();

		await patch(task.uid, { status: 'TODO' });
		expect(await p.poll()).toBeNull();
		const reclosed = await patch(task.uid, { status: 'DONE' });
		expect(reclosed.done_at).not.toBe(closed.done_at);
		expect(uids(await p.poll())).toEqual([task.uid]);

		// The server was asked for DONE tasks only.
		expect(listRequests().every((r) => conditionOn(r.body, 'status')?.value === 'DONE')).toBe(true);
	});

	it('status and custom-field filters are sent, and applied again when the server ignores them', async () => {
		await start();
		sim.seedTasks(1);
		const hop = await startIgnoringProxy(['status', 'fields.queue', 'updated_at']);
		const parameters = {
			event: 'updatedTask',
			filters: {
				status: ['STARTED'],
				customFields: { field: [{ name: 'queue', value: 'billing' }] },
			},
		};
		const direct = poller(parameters);
		const ignored = poller(parameters, { baseUrl: hop.url });
		await direct.poll();
		await ignored.poll();

		const match = await create('Billing issue', { queue: 'billing' });
		const otherQueue = await create('Sales lead', { queue: 'sales' });
		await patch(match.uid, { status: 'STARTED' });
		await patch(otherQueue.uid, { status: 'STARTED' });
		await create('Billing, not started', { queue: 'billing' });

		expect(uids(await direct.poll())).toEqual([match.uid]);
		expect(uids(await ignored.poll())).toEqual([match.uid]);
		const sentDirect = listRequests().filter(
			(r) => conditionOn(r.body, 'fields.queue') !== undefined,
		);
		expect(sentDirect.length).toBeGreaterThan(0);
		expect(
			sentDirect.every(
				(r) =>
					conditionOn(r.body, 'status')?.value === 'STARTED' &&
					conditionOn(r.body, 'fields.queue')?.value === 'billing',
			),
		).toBe(true);
	});

	it('a server without a cursor on /tasks/query that clamps pages silently still gets every change emitted once', async () => {
		await start({ readings: { queryPaging: 'none', queryLimitFrom: 'body', queryMaxLimit: 10 } });
		sim.seedTasks(2);
		const p = poller({ event: 'newTask' });
		await p.poll();
		const created: string[] = [];
		for (let i = 0; i < 35; i++) created.push((await create(`Backlog ${i}`)).uid);
		expect(uids(await p.poll())).toEqual(created);
		expect(await p.poll()).toBeNull();
	});

	it('tasks written by one batch share one updated_at (one timestamp per batch) and are each emitted once', async () => {
		await start({
			maxPageSize: 10,
			readings: { batchStamp: 'perBatch', queryPaging: 'none', queryMaxLimit: 10 },
		});
		sim.seedTasks(2);
		const p = poller({ event: 'newTask' });
		await p.poll();
		const items = Array.from({ length: 25 }, (_, i) => ({
			uid: randomUUID(),
			fields: { title: `Batch ${i}` },
		}));
		await api('PUT', '/tasks/batch', { items });
		expect(new Set(items.map((item) => sim.tasks.get(item.uid)!.updated_at)).size).toBe(1);
		expect(uids(await p.poll()).sort()).toEqual(items.map((item) => item.uid).sort());
		expect(await p.poll()).toBeNull();
	});

	it('follows the rate limit like every other call', async () => {
		await start({ maxPageSize: 5, requestsPerWindow: 4, windowMs: 1000 });
		sim.seedTasks(2);
		const p = poller(
			{ event: 'newTask' },
			{ credentials: { requestsPerMinute: 4, rateLimitWindowSeconds: 1 } },
		);
		await p.poll();
		const added = sim.seedTasks(14);
		sim.clearRequests();

		const started = Date.now();
		expect(uids(await p.poll())).toEqual(added.map((t) => t.uid));
		// 3 pages of 5 at 4 per second, without a single 429.
		expect(sim.requests.some((r) => r.status === 429)).toBe(false);
		expect(listRequests().length).toBeGreaterThanOrEqual(3);
		expect(Date.now() - started).toBeLessThan(10000);
	}, 20000);

	it('a manual run returns the latest few matching tasks as a sample and leaves the position alone', async () => {
		await start();
		const seeded = sim.seedTasks(8);
		await patch(seeded[1].uid, { status: 'DONE' });
		await patch(seeded[6].uid, { status: 'DONE' });
		const manual = poller({ event: 'updatedTask' }, { mode: 'manual' });

		const sample = uids(await manual.poll());
		expect(sample).toHaveLength(5);
		expect(sample.slice(0, 2)).toEqual([seeded[6].uid, seeded[1].uid]);
		expect(manual.staticData().state).toBeUndefined();

		const closed = poller({ event: 'closedTask' }, { mode: 'manual' });
		expect(uids(await closed.poll())).toEqual([seeded[6].uid, seeded[1].uid]);
	});

	it('choosing another event starts over with a new baseline', async () => {
		await start();
		const [a] = sim.seedTasks(1);
		const state: IDataObject = {};
		const updated = activePoller({
			nodeType: new TaskBacklogPollTrigger(),
			parameters: { event: 'updatedTask' },
			credentials: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 100000 },
			staticData: state,
		});
		await updated.poll();
		await patch(a.uid, { status: 'DONE' });
		const closed = activePoller(
			{
				nodeType: new TaskBacklogPollTrigger(),
				parameters: { event: 'closedTask' },
				credentials: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 100000 },
				staticData: updated.staticData(),
			},
			{ beforeFirstPoll: () => clockPastStamps(sim) },
		);
		// The saved state belongs to Updated Task: the closed-task trigger takes its own baseline first.
		expect(await closed.poll()).toBeNull();
		expect((closed.staticData().state as IDataObject).event).toBe('closedTask');
	});
});

describe('Task Backlog Poll Trigger within the poll budget', () => {
	/**
	 * A clock on which every listing request takes `stepMs`: Date.now, for the node and the simulator alike, runs
	 * ahead by that much per listing request logged. The budget decisions are then the same on any machine.
	 */
	function slowListings(stepMs: number) {
		const realNow = Date.now.bind(Date);
		jest.spyOn(Date, 'now').mockImplementation(() => realNow() + stepMs * listRequests().length);
	}
	afterEach(() => jest.restoreAllMocks());

	const STEP_MS = 10_000;
	/** n8n 2.x's durable scheduler: a poll is abandoned after 45 s and the node told 36 s. */
	const BUDGET_MS = 36_000;

	/** The tasks a bulk import writes, by PUT /tasks/batch in batches of 50 (one updated_at a batch under strict). */
	async function bulkImport(n: number): Promise<string[]> {
		const items = Array.from({ length: n }, (_, i) => ({
			uid: randomUUID(),
			fields: { title: `Imported ${i}` },
		}));
		for (let i = 0; i < n; i += 50)
			await api('PUT', '/tasks/batch', { items: items.slice(i, i + 50) });
		// the next poll starts after them
		await clockPastStamps(sim);
		return items.map((item) => item.uid);
	}

	/** Polls until a window is read whole and a poll finds nothing; each poll's output and listing requests. */
	async function drain(p: Poller, maxPolls = 60) {
		const polls: Array<{ tasks: Task[]; requests: number }> = [];
		for (let i = 0; i < maxPolls; i++) {
			const before = listRequests().length;
			const tasks = tasksOf(await p.poll());
			polls.push({ tasks, requests: listRequests().length - before });
			if (tasks.length === 0 && !(p.staticData().state as IDataObject).pass) return polls;
		}
		throw new Error(`still reading after ${maxPolls} polls`);
	}
	const emittedOf = (polls: Array<{ tasks: Task[] }>) =>
		polls.flatMap(({ tasks }) => tasks.map((t): [string, string] => [t.uid, t.updated_at]));
	/** Each of `uids` emitted across the polls, and each once. */
	const expectEachOnce = (polls: Array<{ tasks: Task[] }>, uids: string[]) => {
		expectNoRepeats(emittedOf(polls));
		expect(
			emittedOf(polls)
				.map(([uid]) => uid)
				.sort(),
		).toEqual([...uids].sort());
	};

	it("a bulk import of 2,000 changes read at a rate that does not fit one poll's budget is emitted over several polls, each change once", async () => {
		await start();
		sim.seedTasks(3);
		slowListings(STEP_MS);
		const p = poller({ event: 'updatedTask' }, { budgetMs: BUDGET_MS });
		expect(await p.poll()).toBeNull();
		const imported = await bulkImport(2000);

		const polls = await drain(p);
		const emitted = emittedOf(polls);
		expectNoRepeats(emitted);
		expect(emitted.map(([uid]) => uid).sort()).toEqual([...imported].sort());
		// Several polls, none of which read for longer than the budget (each listing request takes 10 s here).
		expect(polls.filter(({ tasks }) => tasks.length > 0).length).toBeGreaterThanOrEqual(3);
		for (const { requests } of polls) expect(requests * STEP_MS).toBeLessThanOrEqual(BUDGET_MS);
		// Each poll's changes go oldest first, as before.
		for (const { tasks } of polls) {
			const stamps = tasks.map((t) => Date.parse(t.updated_at));
			expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
		}
		// The window read, the position is the newest change and the next poll has nothing.
		const newest = imported
			.map((uid) => sim.tasks.get(uid)!.updated_at)
			.sort((a, b) => Date.parse(a) - Date.parse(b))
			.at(-1);
		expect(Date.parse((p.staticData().state as IDataObject).position as string)).toBe(
			Date.parse(newest!),
		);
		expect(await p.poll()).toBeNull();
	}, 60000);

	it('the position moves only past a slice read whole: a poll that fails mid-slice changes nothing, and changes made meanwhile are emitted once', async () => {
		await start();
		sim.seedTasks(2);
		slowListings(STEP_MS);
		const p = poller({ event: 'updatedTask' }, { budgetMs: BUDGET_MS });
		await p.poll();
		const before = p.staticData().state as IDataObject;
		const imported = await bulkImport(600);

		const first = tasksOf(await p.poll());
		const afterFirst = p.staticData().state as IDataObject;
		const pass = afterFirst.pass as IDataObject;
		// Part of the window: the position stays; the slice's end is its last uid, every task up to it was emitted.
		expect(first.length).toBeGreaterThan(0);
		expect(first.length).toBeLessThan(600);
		expect(afterFirst.position).toBe(before.position);
		const upTo = imported.filter((uid) => uid <= String(pass.uid));
		expect(first.map((t) => t.uid).sort()).toEqual(upTo.sort());

		// The next poll fails on its second page (as if abandoned there): nothing it read counts.
		let queries = 0;
		sim.failNext({
			status: 400,
			body: { message: 'refused' },
			when: (r) => r.path === '/tasks/query' && ++queries === 2,
		});
		await expect(p.poll()).rejects.toThrow();
		expect(p.staticData().state).toEqual(afterFirst);

		// Meanwhile: a task already emitted changes again, and one not read yet changes.
		const readUid = upTo[0];
		const unreadUid = imported.find((uid) => uid > String(pass.uid))!;
		const readAgain = await patch(readUid, { status: 'STARTED' });
		const unread = await patch(unreadUid, { status: 'STARTED' });

		const polls = await drain(p);
		const emitted = [
			...first.map((t): [string, string] => [t.uid, t.updated_at]),
			...emittedOf(polls),
		];
		expectNoRepeats(emitted);
		// Every imported task, once; the one changed after it was emitted, again with that change.
		expect(
			emitted
				.filter(([uid]) => uid !== readUid)
				.map(([uid]) => uid)
				.sort(),
		).toEqual(imported.filter((uid) => uid !== readUid).sort());
		expect(emitted.filter(([uid]) => uid === readUid).map(([, at]) => at)).toEqual([
			first.find((t) => t.uid === readUid)!.updated_at,
			readAgain.updated_at,
		]);
		expect(emitted.filter(([uid]) => uid === unreadUid)).toEqual([[unreadUid, unread.updated_at]]);
	}, 60000);

	it("under n8n 2.x's durable scheduler, which saves a poll's state only when the poll emits, the windows after a bulk import (which hold it again, read over several polls) emit each later change once", async () => {
		await start();
		sim.seedTasks(2);
		slowListings(STEP_MS);
		const p = poller(
			{ event: 'updatedTask' },
			{ budgetMs: BUDGET_MS, savedOnlyWhenEmitting: true },
		);
		expect(await p.poll()).toBeNull();
		const imported = await bulkImport(600);
		expectEachOnce(await drain(p), imported);

		// The next window holds the 600 again (inside the lookback): its slices before the last change emit nothing,
		// and n8n keeps nothing of those polls. The first and the last task in uid order change.
		const [lowest, highest] = [[...imported].sort()[0], [...imported].sort().at(-1)!];
		const changed = [
			await patch(lowest, { status: 'STARTED' }),
			await patch(highest, { status: 'STARTED' }),
		];
		await clockPastStamps(sim);
		const polls = await drain(p);
		expect(polls.filter(({ requests }) => requests > 0).length).toBeGreaterThanOrEqual(2);
		expect(emittedOf(polls).sort()).toEqual(
			changed.map((task): [string, string] => [task.uid, task.updated_at]).sort(),
		);
		expect(emittedOf(await drain(p))).toEqual([]);
	}, 60000);

	it('without getPollBudgetMs (n8n 1.x) the default budget of 30 s applies', async () => {
		await start();
		sim.seedTasks(2);
		slowListings(STEP_MS);
		const p = activePoller(
			{
				nodeType: new TaskBacklogPollTrigger(),
				parameters: { event: 'newTask' },
				credentials: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 100000 },
			},
			{ withoutBudget: true, beforeFirstPoll: () => clockPastStamps(sim) },
		);
		// n8n-core's PollContext offers 5 minutes, as n8n 2.x's default scheduler: a window of the same size is read
		// in one poll.
		const roomy = poller({ event: 'newTask' });
		await p.poll();
		await roomy.poll();
		const imported = await bulkImport(600);
		expect(uids(await roomy.poll()).sort()).toEqual([...imported].sort());
		expect((roomy.staticData().state as IDataObject).pass).toBeUndefined();

		const polls = await drain(p);
		expectEachOnce(polls, imported);
		expect(polls.filter(({ tasks }) => tasks.length > 0).length).toBeGreaterThanOrEqual(2);
		for (const { requests } of polls) expect(requests * STEP_MS).toBeLessThanOrEqual(30_000);
	}, 60000);

	it('a server that ignores the time condition: every window is all tasks, read over several polls, and each change is emitted once', async () => {
		await start();
		const seeded = sim.seedTasks(500);
		await clockPastStamps(sim);
		const hop = await startIgnoringProxy(['updated_at', 'internal_updated_at']);
		slowListings(STEP_MS);
		const p = poller({ event: 'updatedTask' }, { baseUrl: hop.url, budgetMs: BUDGET_MS });
		expect(emittedOf(await drain(p))).toEqual([]);

		const [a, b] = [seeded[7], seeded[400]];
		const a1 = await patch(a.uid, { status: 'STARTED' });
		const b1 = await patch(b.uid, { status: 'DONE' });
		const polls = await drain(p);
		expect(emittedOf(polls).sort(([x], [y]) => (x < y ? -1 : 1))).toEqual(
			[
				[a.uid, a1.updated_at],
				[b.uid, b1.updated_at],
			].sort(([x], [y]) => (x < y ? -1 : 1)),
		);
		// Each window (500 tasks) was read over several polls, none beyond the budget.
		for (const { requests } of polls) expect(requests * STEP_MS).toBeLessThanOrEqual(BUDGET_MS);
		expect(emittedOf(await drain(p))).toEqual([]);
		expect(listRequests().some((r) => conditionOn(r.body, 'updated_at') !== undefined)).toBe(false);
	}, 60000);

	it('a first poll whose baseline window does not fit the budget takes it over several polls, emitting nothing', async () => {
		await start();
		sim.seedTasks(600);
		await clockPastStamps(sim);
		slowListings(STEP_MS);
		const p = poller({ event: 'updatedTask' }, { budgetMs: BUDGET_MS });
		const before = listRequests().length;
		expect(await p.poll()).toBeNull();
		expect((p.staticData().state as IDataObject).pass).toBeDefined();
		expect((listRequests().length - before) * STEP_MS).toBeLessThanOrEqual(BUDGET_MS);

		const polls = await drain(p);
		expect(emittedOf(polls)).toEqual([]);
		// The next window holds the 600 again (inside the lookback) and the new task: only the new task is emitted.
		const task = await create('After the start');
		expect(emittedOf(await drain(p))).toEqual([[task.uid, task.updated_at]]);
	}, 60000);
});
