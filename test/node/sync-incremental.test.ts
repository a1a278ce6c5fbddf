// Sync Backlog reads only what changed (issue 46 item 1, actions/shared/syncMemory.ts): a run started by a trigger
// remembers what it left in the node's static data, and the next reads the source's tasks changed since then. Each
// test checks the result against a full read of the same service state, on both profiles (unit, unit-strict): the
// strict one leaves internal_updated_at null and keeps a caller's updated_at, so its time condition is on updated_at
// alone; its /tasks/query has no cursors.
import type { IDataObject } from 'n8n-workflow';

import { resetCallers } from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
import { runBacklog, sent, TOKEN, uidOf, useSimulator } from '../helpers/backlog';
import { serviceApi } from '../triggers/harness';

let sim: Simulator;
// What a test sets of the server's behaviour is undone before the next.
useSimulator((started) => (sim = started), {
	queryIgnores: [],
	queryUnknownFields: [],
	refuseContent: [],
	intercept: undefined,
	readings: undefined,
});

const sync = (options: IDataObject = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	syncOptions: { fullReadEveryHours: 24, ...options },
});
const tickets = (ids: number[], title = (id: number) => `Ticket ${id}`) =>
	ids.map((id) => ({ id: String(id), title: title(id) }));
const range = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, index) => from + index);

/** A run as a trigger or schedule starts it: its static data kept from run to run (in `memory`). */
async function scheduled(
	items: IDataObject[],
	memory: IDataObject,
	options: IDataObject = {},
	mode: 'trigger' | 'manual' = 'trigger',
) {
	sim.clearRequests();
	// Continue On Fail: a ticket whose task is of another source gets its row, and the others are synced.
	const run = await runBacklog(sim, sync(options), {
		items,
		staticData: memory,
		mode,
		continueOnFail: true,
	});
	return { ...run, read: readOf() };
}

/** Whether the run read the whole source (its listing starts with GET /tasks) or what changed (a time condition). */
function readOf(): 'full' | 'changes' {
	return sent(sim, 'GET', '/tasks').length > 0 ? 'full' : 'changes';
}

/**
 * Another system's write through the API (stamped by the service, as an operator's edit is). A write of `fields` sends
 * them all: the strict reading's PATCH replaces the object.
 */
const api = serviceApi(() => sim.url, TOKEN);

/** An operator's edit of a ticket's task: every field sent (the strict reading's PATCH replaces `fields`). */
const edit = async (id: number, change: IDataObject) => {
	const task = sim.tasks.get(uidOf(String(id)))!;
	const { fields, ...rest } = change;
	await api('PATCH', `/tasks/${task.uid}`, {
		...rest,
		...(fields ? { fields: { ...task.fields, ...(fields as IDataObject) } } : {}),
	});
};

/**
 * What a run decided per ticket (closes included), by external ID: the rows of the tasks it changed, and of the others
 * where the Output has a row for each.
 */
const actions = (json: IDataObject[]) =>
	Object.fromEntries(
		json
			.filter((row) => row.external_id !== undefined && row.action !== 'summary')
			.map((row) => [String(row.external_id), row.action]),
	);
/** The service's tasks without their stamps (a run's writes stamp them anew). */
const state = () =>
	[...sim.tasks.values()]
		.map(({ uid, status, archived, fields }) => ({ uid, status, archived, fields }))
		.sort((a, b) => a.uid.localeCompare(b.uid));

/**
 * Runs `items` as a scheduled run with `memory`, then the same on the service as it was before, reading everything
 * (Full Read Every 0): both must decide and leave the same.
 */
async function sameAsFullRead(
	items: IDataObject[],
	memory: IDataObject,
	options: IDataObject = {},
) {
	const before = [...sim.tasks.values()].map((task) => structuredClone(task));
	const incremental = await scheduled(items, memory, options);
	const requests = [...sim.requests];
	const after = state();
	sim.tasks.clear();
	for (const task of before) sim.tasks.set(task.uid, task);
	const full = await scheduled(items, {}, { ...options, fullReadEveryHours: 0 });
	expect(full.read).toBe('full');
	expect(incremental.error).toBeUndefined();
	expect(actions(incremental.json)).toEqual(actions(full.json));
	expect(after).toEqual(state());
	return { ...incremental, requests, fullRequests: [...sim.requests] };
}

/** A backlog the first scheduled run of tickets 1-20 made an hour ago (outside any grace period before closing). */
async function firstRun(memory: IDataObject) {
	const first = await scheduled(tickets(range(1, 20)), memory);
	expect(first.error).toBeUndefined();
	expect(first.read).toBe('full');
	expect(first.json.find((row) => row.action === 'summary')?.read).toBe('full');
	ageTasks(sim);
	sim.seedTasks(1, () => ({ fields: { title: 'Other', source: 'crm', ticket_id: '900' } }));
}

/** Each test runs the node up to six times; a loaded machine may take longer than jest's 5 s default. */
const RUNS_TIMEOUT = 30_000;

describe('Sync Backlog reads only what changed since its last run', () => {
	it(
		'after operator edits, closes and archives, a run that reads what changed does what a full read does',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(3, { fields: { title: 'Renamed by an operator' } }); // set back to the ticket's title
			await edit(4, { status: 'DONE' }); // closed by an operator: reopened
			await edit(5, { archived: true }); // archived: restored
			await edit(7, { fields: { note: 'kept' } }); // a key the ticket does not set: unchanged
			await edit(8, { status: 'STARTED' }); // worked on: unchanged
			await edit(12, { status: 'DONE' }); // closed, and its ticket gone too: nothing to do
			await edit(13, { archived: true }); // archived, and its ticket gone too: nothing to do
			const input = tickets([...range(1, 10), 11, 14, 15, 16, 17, 18, 19, 21], (id) =>
				id === 9 ? 'Ticket 9 (changed upstream)' : `Ticket ${id}`,
			);
			const run = await sameAsFullRead(input, memory);
			expect(run.read).toBe('changes');
			expect(actions(run.json)).toMatchObject({
				'3': 'update',
				'4': 'reopen',
				'5': 'unarchive',
				'9': 'update',
				'20': 'close',
				'21': 'create',
			});
			expect(actions(run.json)['12']).toBeUndefined();
			expect(actions(run.json)['13']).toBeUndefined();
			expect(sim.tasks.get(uidOf('13'))).toMatchObject({ archived: true, status: 'TODO' });
			// An operator's key the ticket does not set, and a task being worked on: left as they are.
			expect(['7', '8'].map((id) => actions(run.json)[id] ?? 'unchanged')).toEqual([
				'unchanged',
				'unchanged',
			]);
			expect(sim.tasks.get(uidOf('7'))!.fields.note).toBe('kept');
			expect(sim.tasks.get(uidOf('8'))!.status).toBe('STARTED');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a run after one that changed nothing costs a few requests, whatever the size of the source',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			const quiet = await scheduled(tickets(range(1, 20)), memory);
			expect(quiet.read).toBe('changes');
			// The summary (Output Changes and Summary, version 3's default) says how the source was read.
			expect(quiet.json.find((row) => row.action === 'summary')).toMatchObject({
				read: 'incremental',
				counts: { unchanged: 20 },
			});
			expect(Object.values(actions(quiet.json)).every((action) => action === 'unchanged')).toBe(
				true,
			);
			// The changes (not archived, archived; an empty page more each where the query has no cursors) and the count.
			expect(sent(sim).length).toBeLessThanOrEqual(5);
			expect(sent(sim).every((request) => request.path === '/tasks/query')).toBe(true);
		},
		RUNS_TIMEOUT,
	);

	it(
		'a task moved to another source meanwhile is noticed by the count of open tasks: everything is read, and its ticket is a conflict',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(6, { fields: { source: 'crm' } });
			const run = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(run.read).toBe('full');
			expect(actions(run.json)['6']).toBe('conflict');
			expect(sim.tasks.get(uidOf('6'))!.fields.source).toBe('crm');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a task deleted meanwhile is noticed by the count of open tasks: everything is read, and its ticket gets a task again',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await api('DELETE', `/tasks/${uidOf('2')}`);
			const run = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(run.read).toBe('full');
			expect(actions(run.json)['2']).toBe('create');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a task of the source created meanwhile by another workflow, not in the input, is kept open or closed as a full read does',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await api('PUT', `/tasks/${uidOf('30')}`, {
				fields: { title: 'Made by an event', ticket_id: '30', source: 'helpdesk' },
			});
			// Within the Close Grace Period: kept open.
			const kept = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(kept.read).toBe('changes');
			expect(actions(kept.json)['30'] ?? 'kept_open').toBe('kept_open');
			expect(sim.tasks.get(uidOf('30'))!.status).toBe('TODO');
			// A grace period of 0 keeps only what changed after the run began: closed.
			const closed = await sameAsFullRead(tickets(range(1, 20)), memory, { closeGraceMinutes: 0 });
			expect(closed.read).toBe('changes');
			expect(actions(closed.json)['30']).toBe('close');
			expect(sim.tasks.get(uidOf('30'))!.status).toBe('DONE');
		},
		RUNS_TIMEOUT,
	);

	it(
		'the mass-close guard judges the whole source: an input cut short stops the run before any write',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			const run = await scheduled(tickets(range(1, 5)), memory);
			expect(run.read).toBe('changes');
			expect(run.error?.message).toMatch(/would close 15 of the 20 open tasks/);
			expect(sent(sim, 'PATCH')).toHaveLength(0);
		},
		RUNS_TIMEOUT,
	);

	it(
		'the first run, a manual run and Full Read Every 0 read everything; a manual run leaves the memory as it was',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			const kept = JSON.stringify(memory);
			const manual = await scheduled(tickets(range(1, 20)), memory, {}, 'manual');
			expect(manual.read).toBe('full');
			expect(JSON.stringify(memory)).toBe(kept);
			expect((await scheduled(tickets(range(1, 20)), memory, { fullReadEveryHours: 0 })).read).toBe(
				'full',
			);
			// Full Read Every 0 keeps nothing: the next run has no memory to start from.
			expect(memory.syncMemory).toBeUndefined();
			expect((await scheduled(tickets(range(1, 20)), memory)).read).toBe('full');
			expect((await scheduled(tickets(range(1, 20)), memory)).read).toBe('changes');
		},
		RUNS_TIMEOUT,
	);

	it(
		'the safety net: once Full Read Every has passed since the last full read, the run reads everything',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			expect((await scheduled(tickets(range(1, 20)), memory)).read).toBe('changes');
			const saved = memory.syncMemory as IDataObject;
			saved.fullAt = Number(saved.fullAt) - 25 * 3_600_000;
			expect((await scheduled(tickets(range(1, 20)), memory)).read).toBe('full');
			expect((await scheduled(tickets(range(1, 20)), memory)).read).toBe('changes');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a memory of another source or node version is not used',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			const run = await runBacklog(
				sim,
				{ ...sync(), sourceValue: 'billing' },
				{
					items: tickets([100]),
					staticData: memory,
					mode: 'trigger',
				},
			);
			expect(run.error).toBeUndefined();
			expect(readOf()).toBe('full');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a server that does not filter by time is noticed: the run reads everything, and the next runs do not ask it again',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(3, { fields: { title: 'Renamed by an operator' } });
			sim.configure({ queryIgnores: ['time'] });
			const run = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(run.read).toBe('full');
			expect(actions(run.json)['3']).toBe('update');
			sim.clearRequests();
			const next = await scheduled(tickets(range(1, 20)), memory);
			expect(next.read).toBe('full');
			const timeConditions = sent(sim, 'POST', '/tasks/query').filter((request) =>
				JSON.stringify(request.body).includes('updated_at'),
			);
			expect(timeConditions).toHaveLength(0);
		},
		RUNS_TIMEOUT,
	);

	it(
		'a service that refuses time conditions (only == and and) is read whole every run, with the same result',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(4, { status: 'DONE' });
			sim.configure({ readings: { queryOperators: 'documented' } });
			const run = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(run.read).toBe('full');
			expect(actions(run.json)['4']).toBe('reopen');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a change another caller dates in the past (its updated_at kept) is seen through internal_updated_at where the service fills it',
		async () => {
			sim.configure({ readings: { updatedAtFrom: 'body', internalStamps: 'filled' } });
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(3, {
				fields: { title: 'Backdated edit' },
				updated_at: '2020-01-01T00:00:00.000Z',
			});
			const run = await sameAsFullRead(tickets(range(1, 20)), memory);
			expect(run.read).toBe('changes');
			expect(actions(run.json)['3']).toBe('update');
		},
		RUNS_TIMEOUT,
	);

	it(
		'where the service leaves internal_updated_at null, such a change is seen at the next full read (Full Read Every)',
		async () => {
			sim.configure({ readings: { updatedAtFrom: 'body', internalStamps: 'null' } });
			const memory: IDataObject = {};
			await firstRun(memory);
			await edit(3, {
				fields: { title: 'Backdated edit' },
				updated_at: '2020-01-01T00:00:00.000Z',
			});
			// The time condition cannot see it: the incremental run leaves the task as the other caller left it.
			const missed = await scheduled(tickets(range(1, 20)), memory);
			expect(missed.read).toBe('changes');
			expect(sim.tasks.get(uidOf('3'))!.fields.title).toBe('Backdated edit');
			const saved = memory.syncMemory as IDataObject;
			saved.fullAt = Number(saved.fullAt) - 25 * 3_600_000;
			const full = await scheduled(tickets(range(1, 20)), memory);
			expect(full.read).toBe('full');
			expect(actions(full.json)['3']).toBe('update');
			expect(sim.tasks.get(uidOf('3'))!.fields.title).toBe('Ticket 3');
		},
		RUNS_TIMEOUT,
	);

	it(
		'a Dry Run leaves the memory as it was; a run with a failed write (Continue On Fail) keeps none, so the next reads everything',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			const kept = JSON.stringify(memory);
			const dry = await runBacklog(
				sim,
				{ ...sync(), dryRun: true },
				{
					items: tickets(range(1, 21)),
					staticData: memory,
					mode: 'trigger',
				},
			);
			expect(dry.error).toBeUndefined();
			expect(JSON.stringify(memory)).toBe(kept);
			sim.configure({ refuseContent: ['FORBIDDEN'] });
			const failed = await scheduled(
				tickets(range(1, 20), (id) => (id === 2 ? 'Ticket 2 FORBIDDEN' : `Ticket ${id}`)),
				memory,
			);
			expect(failed.read).toBe('changes');
			expect(failed.json.some((row) => row.error !== undefined)).toBe(true);
			expect(memory.syncMemory).toBeUndefined();
			sim.configure({ refuseContent: [] });
			const next = await scheduled(tickets(range(1, 20)), memory);
			expect(next.read).toBe('full');
		},
		RUNS_TIMEOUT,
	);

	it(
		'new tickets are looked for once among open tasks and once among archived ones before they are created, with no GET: a remembered task asked for last shows the server read the whole list',
		async () => {
			const memory: IDataObject = {};
			await firstRun(memory);
			// The next run in a process of its own, as each `n8n execute` is: it has seen no task of the service yet.
			resetCallers();
			const run = await sameAsFullRead(tickets(range(1, 22)), memory);
			expect(run.read).toBe('changes');
			expect(actions(run.json)).toEqual({ '21': 'create', '22': 'create' });
			for (const uid of [uidOf('21'), uidOf('22')]) {
				const reads = run.requests.filter(
					(request) =>
						(request.method === 'GET' || request.path === '/tasks/query') &&
						`${request.path} ${JSON.stringify(request.body ?? '')}`.includes(uid),
				);
				expect(reads.map((request) => `${request.method} ${request.path}`)).toEqual([
					'POST /tasks/query',
					'POST /tasks/query',
				]);
			}
			expect(run.requests.filter((request) => request.method === 'GET')).toEqual([]);
		},
		RUNS_TIMEOUT,
	);

	it('at 2,000 tickets, a run with 1 % of titles changed, 0.5 % new and 0.5 % gone costs requests for what changed, not for the source', async () => {
		const memory: IDataObject = {};
		const all = range(1, 2000);
		const first = await scheduled(tickets(all), memory, { closeAllowance: 100 });
		expect(first.error).toBeUndefined();
		ageTasks(sim);
		const input = tickets([...range(11, 2000), ...range(2001, 2010)], (id) =>
			id % 100 === 0 ? `Ticket ${id} (changed)` : `Ticket ${id}`,
		);
		const run = await sameAsFullRead(input, memory, { closeAllowance: 100 });
		expect(run.read).toBe('changes');
		const counts = (run.json.find((row) => row.action === 'summary') ?? {}).counts;
		expect(counts).toMatchObject({ update: 20, create: 10, close: 10, unchanged: 1970 });
		// The incremental run's reads: the changes and the count, then by uid the 40 tickets and tasks it writes (and
		// each PATCH batch's tasks again just before it); a full read of the source takes a page per 100 tasks at best.
		const reads = (requests: typeof run.requests) =>
			requests.filter((request) => request.method === 'GET' || request.path === '/tasks/query');
		expect(reads(run.requests).length).toBeLessThanOrEqual(12);
		expect(reads(run.fullRequests).length).toBeGreaterThanOrEqual(20);
	}, 60_000);
});
