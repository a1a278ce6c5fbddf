// The one listing path (issue 32 items 1 and 2, nodes/shared/tasks/listTasks.ts): Sync Backlog's listing of its source
// and Get Many's Return All read through the endpoint that carries the most tasks per request, learn the page sizes
// from the first answers, and fall back to GET /tasks where /tasks/query cannot be relied on. Both profiles (unit,
// unit-strict): the issue's server is the profile with GET /tasks pages of at most 13 and /tasks/query pages of 100.
import type { IDataObject } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator, SimulatorOptions } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
import { readingsOf, runBacklog, sent, useSimulator } from '../helpers/backlog';

let sim: Simulator;

/** Issue 32's server: GET /tasks clamps `limit` to 13 and /tasks/query to 100, silently; batches of at most 50. */
const ISSUE_SERVER: SimulatorOptions = {
	maxPageSize: 13,
	maxBatchSize: 50,
	readings: { queryMaxLimit: 100 },
};

useSimulator((started) => (sim = started), ISSUE_SERVER);

const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
const sync = {
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	// Every row (one per ticket and per task closed), as versions 1 and 2 output by default: the tests count them.
	syncOutput: 'allRows',
};
const getAll = (filters: IDataObject = {}) => ({
	resource: 'task',
	operation: 'getAll',
	returnAll: true,
	simplify: false,
	filters,
});

/** The source's open tasks, as an earlier sync of tickets T-1 ... T-n left them an hour ago; and `others` of another source. */
function seedSource(n: number, others = 0) {
	sim.seedTasks(n, (i) => ({
		uid: uidOf(`T-${i + 1}`),
		fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
	}));
	if (others > 0)
		sim.seedTasks(others, (i) => ({ fields: { title: `Other ${i}`, source: 'crm' } }));
	// Past Sync Backlog's Close Grace Period: the missing ones are closed, not kept open.
	ageTasks(sim);
	sim.clearRequests();
}

/** Queries that list (the bulk reads by uid before writing are `uid in [...]` queries). */
const listingQueries = () =>
	sent(sim, 'POST', '/tasks/query').filter(
		(request) => !JSON.stringify(request.body).includes('"operator":"in"'),
	);
const listPages = () => sent(sim, 'GET', '/tasks');
const countBy = (values: unknown[]) =>
	values.reduce<Record<string, number>>((counts, value) => {
		counts[String(value)] = (counts[String(value)] ?? 0) + 1;
		return counts;
	}, {});
const expectEachOnce = (json: IDataObject[], n: number) => {
	expect(json).toHaveLength(n);
	expect(new Set(json.map((task) => task.uid)).size).toBe(n);
};
/** Get Many with Return All over the `n` tasks seeded: every one returned once. */
async function returnAllOf(n: number, executionId?: string) {
	if (executionId === undefined) seedSource(n);
	const run = await runBacklog(sim, getAll(), { executionId });
	expect(run.error).toBeUndefined();
	expectEachOnce(run.json, n);
}

describe('Sync Backlog at the floor (issue 32 item 2)', () => {
	it('a 10,000-task source with 1 % of titles changed, 0.5 % new and 0.5 % gone costs at most 1.1 × (ceil(N / 100) + its writes in batches of 50) + 5 requests, every task seen once', async () => {
		const n = 10_000;
		seedSource(n, 30);
		// Tickets T-51 ... T-10,050: T-1 ... T-50 are gone, T-10,001 ... T-10,050 new, every 100th renamed.
		const items = Array.from({ length: n }, (_, i) => {
			const id = i + 51;
			return { id: `T-${id}`, title: id % 100 === 0 ? `Ticket ${id} (renamed)` : `Ticket ${id}` };
		});
		const renamed = items.filter((item) => item.title.endsWith('(renamed)')).length;
		const run = await runBacklog(sim, sync, { items });
		expect(run.error).toBeUndefined();

		expect(countBy(run.json.map((json) => json.action))).toEqual({
			unchanged: n - 50 - renamed,
			update: renamed,
			create: 50,
			close: 50,
		});
		expect(new Set(run.json.map((json) => json.uid)).size).toBe(n + 50);
		const tasks = [...sim.tasks.values()].filter((task) => task.fields.source === 'helpdesk');
		expect(tasks).toHaveLength(n + 50);
		expect(
			tasks.filter((task) => task.status === 'DONE').map((task) => task.fields.ticket_id),
		).toEqual(expect.arrayContaining(Array.from({ length: 50 }, (_, i) => `T-${i + 1}`)));
		expect(tasks.filter((task) => task.status === 'DONE')).toHaveLength(50);
		expect(sim.tasks.get(uidOf('T-1000'))!.fields.title).toBe('Ticket 1000 (renamed)');

		const writeBatches = Math.ceil(50 / 50) + Math.ceil((renamed + 50) / 50);
		const bound = Math.floor(1.1 * (Math.ceil(n / 100) + writeBatches) + 5);
		expect(sim.requests.length).toBeLessThanOrEqual(bound);
		// The listing: one GET /tasks page (it says the server's page holds 13), then /tasks/query pages of 100.
		expect(listPages()).toHaveLength(1);
		expect(listingQueries().length).toBeLessThanOrEqual(Math.ceil(n / 100) + 1);
		// Every safety kept: the tasks of a PATCH batch read again just before it (a bulk read per batch).
		const patches = sent(sim, 'PATCH', '/tasks/batch').filter((request) => request.status === 200);
		expect(patches).toHaveLength(Math.ceil((renamed + 50) / 50));
	}, 180_000);

	it('the mass-close guard still counts the whole source listed through the query: 500 gone of 2,000 is refused, nothing written', async () => {
		seedSource(2_000);
		const items = Array.from({ length: 1_500 }, (_, i) => ({
			id: `T-${i + 1}`,
			title: `Ticket ${i + 1}`,
		}));
		const run = await runBacklog(sim, sync, { items });
		expect(run.error?.message).toMatch(/^Sync Backlog would close 500 of the 2000 open tasks/);
		expect(sent(sim).filter((request) => !['GET', 'POST'].includes(request.method))).toEqual([]);
		expect(listingQueries().length).toBeGreaterThan(0);
	}, 60_000);

	it('an archived task of a ticket is still found when the source is listed through the query: the row says unarchive', async () => {
		seedSource(500);
		const archived = uidOf('T-7');
		sim.tasks.get(archived)!.archived = true;
		sim.tasks.get(archived)!.status = 'DONE';
		const items = Array.from({ length: 500 }, (_, i) => ({
			id: `T-${i + 1}`,
			title: `Ticket ${i + 1}`,
		}));
		const run = await runBacklog(sim, sync, { items });
		expect(run.error).toBeUndefined();
		expect(run.json.find((json) => json.uid === archived)?.action).toBe('unarchive');
		expect(sim.tasks.get(archived)).toMatchObject({ archived: false, status: 'TODO' });
		expect(countBy(run.json.map((json) => json.action))).toEqual({ unchanged: 499, unarchive: 1 });
		expect(listingQueries().length).toBeGreaterThan(0);
	}, 60_000);
});

describe('The listing chooses the endpoint that carries the most tasks per request (issue 32 item 1)', () => {
	it('Get Many with Return All returns all 2,000 tasks once, through /tasks/query pages of 100 after one GET /tasks page of 13', async () => {
		seedSource(2_000, 25);
		const run = await runBacklog(sim, getAll());
		expect(run.error).toBeUndefined();
		expectEachOnce(run.json, 2_025);
		expect(listPages()).toHaveLength(1);
		// A server without query cursors ends the read by uid with an empty page.
		const cursors = readingsOf(sim).queryPaging === 'cursor';
		expect(listingQueries()).toHaveLength(Math.ceil(2_025 / 100) + (cursors ? 0 : 1));
	}, 60_000);

	it('Get Many with Return All and a custom-field filter reads the same tasks through the query, the filter its condition', async () => {
		seedSource(400, 300);
		const run = await runBacklog(
			sim,
			getAll({ customFields: { field: [{ name: 'source', value: 'helpdesk' }] } }),
		);
		expect(run.error).toBeUndefined();
		expectEachOnce(run.json, 400);
		expect(run.json.every((task) => (task.fields as IDataObject).source === 'helpdesk')).toBe(true);
		expect(listingQueries().length).toBeLessThanOrEqual(6);
	}, 60_000);

	it('a clamped limit is learnt from the first page: a listing that fits one GET /tasks page costs that page alone', async () => {
		await returnAllOf(13);
		expect(sent(sim).map((request) => `${request.method} ${request.path}`)).toEqual(['GET /tasks']);
	}, 60_000);

	it('a listing a few GET /tasks pages long stays on GET /tasks when the query would not cost fewer requests', async () => {
		await returnAllOf(30);
		expect(listPages()).toHaveLength(3);
		expect(listingQueries()).toHaveLength(0);
	}, 60_000);

	it('a query clamped below the GET page is learnt from its first page: GET /tasks goes on, and the next run does not try the query', async () => {
		sim.configure({ readings: { queryMaxLimit: 10 } });
		await returnAllOf(300);
		expect(listingQueries()).toHaveLength(1);
		expect(listPages()).toHaveLength(Math.ceil(300 / 13));
		sim.clearRequests();
		await returnAllOf(300, 'second');
		expect(listingQueries()).toHaveLength(0);
	}, 60_000);

	it('a query page clamped to 40 is learnt, and the listing uses it: one GET /tasks page, then pages of 40', async () => {
		sim.configure({ readings: { queryMaxLimit: 40 } });
		await returnAllOf(400);
		const cursors = readingsOf(sim).queryPaging === 'cursor';
		expect(listingQueries()).toHaveLength(Math.ceil(400 / 40) + (cursors ? 0 : 1));
		expect(listPages()).toHaveLength(1);
	}, 60_000);

	it('a full-text search, which only GET /tasks has, is listed through GET /tasks alone', async () => {
		sim.configure({ readings: { listParams: 'honour' } });
		seedSource(300);
		const run = await runBacklog(sim, getAll({ search: 'Ticket 1' }));
		expect(run.error).toBeUndefined();
		expect(run.json.length).toBeGreaterThan(13);
		expect(sent(sim, 'POST', '/tasks/query')).toHaveLength(0);
	}, 60_000);
});

describe('Where /tasks/query cannot be relied on for a listing, GET /tasks is (issue 32 item 1)', () => {
	const noCursors = { queryPaging: 'none' } as const;

	it.each([
		['ignores the uid condition (repeats its first page)', ['uid'] as Array<'uid' | 'sorts'>],
		['ignores the sort (answers in its own order)', ['sorts'] as Array<'uid' | 'sorts'>],
	])(
		'a server whose query endpoint %s: Sync Backlog falls back to GET /tasks and loses no task',
		async (_, queryIgnores) => {
			sim.configure({ readings: noCursors, queryIgnores });
			seedSource(500, 20);
			const items = Array.from({ length: 495 }, (_, i) => ({
				id: `T-${i + 6}`,
				title: `Ticket ${i + 6}`,
			}));
			const run = await runBacklog(sim, sync, { items });
			expect(run.error).toBeUndefined();
			expect(countBy(run.json.map((json) => json.action))).toEqual({ unchanged: 495, close: 5 });
			const done = [...sim.tasks.values()].filter((task) => task.status === 'DONE');
			expect(done.map((task) => task.fields.ticket_id).sort()).toEqual([
				'T-1',
				'T-2',
				'T-3',
				'T-4',
				'T-5',
			]);
			// The query was tried (at most its first two pages), then GET /tasks read the source to its end.
			expect(listingQueries().length).toBeLessThanOrEqual(2);
			expect(listPages()).toHaveLength(Math.ceil(500 / 13));
			// The caller keeps that: its next listing does not try the query.
			sim.clearRequests();
			const again = await runBacklog(sim, getAll(), { executionId: 'again' });
			// Closed tasks are listed too (Get Many has no status filter here).
			expectEachOnce(again.json, 500 + 20);
			expect(listingQueries()).toHaveLength(0);
		},
		60_000,
	);

	it.each([404, 403])(
		'a server that answers /tasks/query with a %i: Get Many falls back to GET /tasks and returns every task once',
		async (status) => {
			sim.failNext({ status, when: (request) => request.path === '/tasks/query' });
			await returnAllOf(300);
			expect(listingQueries()).toHaveLength(1);
			expect(listPages()).toHaveLength(Math.ceil(300 / 13));
		},
		60_000,
	);

	it('a server that knows only the documented query operators (==, and) refuses uid > last: Get Many falls back to GET /tasks and returns every task once', async () => {
		sim.configure({ readings: { ...noCursors, queryOperators: 'documented' } });
		await returnAllOf(300);
		expect(listPages()).toHaveLength(Math.ceil(300 / 13));
	}, 60_000);
});
