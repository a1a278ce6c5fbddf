// What the node believes of the service's answers before it reports a write done: echoed values, batch answers, bulk
// reads that find nothing, 422s about one item, and a listing that is minutes old. Each case runs on both profiles.
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { json, startServer } from '../helpers/servers';
import {
	createWithItemUid,
	runBacklog,
	sent,
	useSimulator,
	writesSent,
	uidOf,
	upsertByTicket,
} from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const tickets = (n: number) =>
	Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, title: `Ticket ${i + 1}` }));
const upsert = upsertByTicket;
const onQuery = (req: { method: string; path: string }) =>
	req.method === 'POST' && req.path === '/tasks/query';
const emptyPage = { items: [], meta: {} };

describe('Create: a task it made is never reported as taken', () => {
	it.each([
		['Assignee Email', { assignee_email: 'ops@example.com' }],
		['Global Status', { status_global: 'TODO' }],
	])(
		'Create with %s, which the answer does not echo, creates the task and reports it created',
		async (_, additionalFields) => {
			const run = await runBacklog(sim, {
				resource: 'task',
				operation: 'create',
				title: 'Printer on fire',
				additionalFields,
			});
			expect(run.error).toBeUndefined();
			expect(sim.tasks.size).toBe(1);
			expect(run.json[0].uid).toBe([...sim.tasks.keys()][0]);
		},
	);

	it('Create with Assignee Email repeated in the same execution (Retry On Fail) finds its own task: one task, no error', async () => {
		const parameters = {
			resource: 'task',
			operation: 'create',
			title: '={{ $json.title }}',
			additionalFields: { assignee_email: 'ops@example.com' },
		};
		const first = await runBacklog(sim, parameters, {
			items: tickets(3),
			executionId: 'execution-7',
		});
		const again = await runBacklog(sim, parameters, {
			items: tickets(3),
			executionId: 'execution-7',
		});
		expect(first.error).toBeUndefined();
		expect(again.error).toBeUndefined();
		expect(again.json.map((json) => json.uid)).toEqual(first.json.map((json) => json.uid));
		expect(sim.tasks.size).toBe(3);
	});

	it('Create with a UID another task holds, with other values, is still refused', async () => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Someone else' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'create',
			title: 'Mine',
			additionalFields: { uid: task.uid, assignee_email: 'ops@example.com' },
		});
		expect(run.error?.message).toMatch(/already exists/);
		expect(sim.tasks.get(task.uid)!.fields.title).toBe('Someone else');
	});
});

describe('Without Continue On Fail the node stops at the failing item, and nothing after the failure is written', () => {
	const FREE_UID = '2b7e4f3a-9c1d-4e8f-a6b5-0d3c2e1f4a5b';

	it.each([
		['without Continue On Fail, nothing of the run is written', false],
		['with Continue On Fail, the other items are written', true],
	])('Create with a UID another task holds, beside a free one: %s', async (_, continueOnFail) => {
		const [task] = sim.seedTasks(1, () => ({ fields: { title: 'Someone else' } }));
		const run = await runBacklog(sim, createWithItemUid, {
			items: [
				{ uid: task.uid, title: 'Mine' },
				{ uid: FREE_UID, title: 'Also mine' },
			],
			continueOnFail,
		});
		expect(sim.tasks.get(task.uid)!.fields.title).toBe('Someone else');
		if (continueOnFail) {
			expect(run.json[0].error).toMatch(/already exists/);
			expect(run.json[1].uid).toBe(FREE_UID);
			expect(sim.tasks.has(FREE_UID)).toBe(true);
		} else {
			expect(run.error?.message).toMatch(/already exists/);
			expect(sim.tasks.has(FREE_UID)).toBe(false);
			expect(writesSent(sim)).toHaveLength(0);
		}
	});

	it('a create that fails after the update of an earlier item was planned: the node’s error is the create’s, not "not sent"', async () => {
		sim.seedTasks(1, () => ({ uid: uidOf('T-1'), fields: { title: 'Old 1', ticket_id: 'T-1' } }));
		sim.failNext({
			status: 400,
			body: { message: 'title is not accepted here' },
			when: (req) => req.method === 'PUT',
		});
		const run = await runBacklog(sim, upsert, { items: tickets(2) });
		expect(run.error?.message).not.toMatch(/not sent/i);
		expect(JSON.stringify(run.error)).toMatch(/title is not accepted here/);
		expect(sim.tasks.get(uidOf('T-1'))!.fields.title).toBe('Old 1');
		expect(sim.tasks.has(uidOf('T-2'))).toBe(false);
	});
});

describe('A batch answer is read by uid only', () => {
	it('an answer that leaves out a task fails that item only, and never gives it another task’s uid or fields', async () => {
		sim.seedTasks(1, () => ({
			uid: uidOf('T-1'),
			fields: { title: 'Old 1', ticket_id: 'T-1', keep: 'one' },
		}));
		sim.seedTasks(1, () => ({
			uid: uidOf('T-2'),
			fields: { title: 'Old 2', ticket_id: 'T-2', keep: 'two' },
		}));
		// The PATCH batch is answered with T-2 alone, in T-1's position, and nothing is written.
		const other = { ...sim.tasks.get(uidOf('T-2'))! } as unknown as IDataObject;
		sim.failNext({
			status: 200,
			body: { items: [other] },
			when: (req) => req.method === 'PATCH' && req.path === '/tasks/batch',
		});
		const run = await runBacklog(sim, upsert, { items: tickets(2), continueOnFail: true });
		expect(run.json[0].error).toMatch(/did not include task/);
		expect(run.json[0].uid).toBeUndefined();
		expect(run.json[1].uid).toBe(uidOf('T-2'));
		expect(run.items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(sim.tasks.get(uidOf('T-1'))!.fields.keep).toBe('one');
	});
});

describe('A bulk read that finds nothing where tasks exist never leads to a replace', () => {
	/**
	 * Each case twice: with no task known to the caller (the read is confirmed with a GET), and after the caller wrote
	 * one, which the bulk read then asks for last (tasks/send.ts, probesFor): the server leaves it out too, so the read
	 * is not trusted either way.
	 */
	const knowing = [
		['no task known', false],
		['a task the caller wrote asked for last', true],
	] as const;
	const writeKnownTask = async (known: boolean) => {
		if (!known) return;
		const run = await runBacklog(sim, upsert, { items: [{ id: 'K-1', title: 'Known' }] });
		expect(run.error).toBeUndefined();
	};

	it.each(knowing)(
		'a server answering {items: []} to uid in [...]: the tasks are found one by one and PATCHed, their other custom fields kept (%s)',
		async (_, known) => {
			await writeKnownTask(known);
			sim.seedTasks(3, (i) => ({
				uid: uidOf(`T-${i + 1}`),
				fields: { title: `Old ${i + 1}`, ticket_id: `T-${i + 1}`, keep: `kept ${i + 1}` },
			}));
			sim.failNext(
				{ status: 200, body: emptyPage, when: onQuery },
				{ status: 200, body: emptyPage, when: onQuery },
			);
			const since = sim.requests.length;
			const run = await runBacklog(sim, upsert, { items: tickets(3) });
			expect(run.error).toBeUndefined();
			const asked = (sim.requests[since].body as { condition: { value: string[] } }).condition
				.value;
			expect(asked[asked.length - 1] === uidOf('K-1')).toBe(known);
			for (let i = 1; i <= 3; i++)
				expect(sim.tasks.get(uidOf(`T-${i}`))!.fields).toEqual({
					title: `Ticket ${i}`,
					ticket_id: `T-${i}`,
					keep: `kept ${i}`,
				});
			expect(sent(sim, 'PUT').slice(known ? 1 : 0)).toHaveLength(0);
		},
	);

	it.each(knowing)(
		'a server that applies only the start of a long uid list: the tasks past it are found and kept (%s)',
		async (_, known) => {
			await writeKnownTask(known);
			for (const i of [1, 3])
				sim.seedTasks(1, () => ({
					uid: uidOf(`T-${i}`),
					fields: { title: `Old ${i}`, ticket_id: `T-${i}`, keep: `kept ${i}` },
				}));
			const first = { ...sim.tasks.get(uidOf('T-1'))! } as unknown as IDataObject;
			sim.failNext(
				{ status: 200, body: { items: [first], meta: {} }, when: onQuery },
				{ status: 200, body: emptyPage, when: onQuery },
			);
			const run = await runBacklog(sim, upsert, { items: tickets(3) });
			expect(run.error).toBeUndefined();
			expect(sim.tasks.get(uidOf('T-1'))!.fields.keep).toBe('kept 1');
			expect(sim.tasks.get(uidOf('T-3'))!.fields.keep).toBe('kept 3');
			expect(sim.tasks.size).toBe(known ? 4 : 3);
		},
	);
});

describe('Batch too large only from a 413 or a 422 about the list', () => {
	it('one item’s 422 ("fields.title: value too long") fails that item and does not shrink the batch size for the run', async () => {
		// A service that refuses any batch holding the one over-long title, naming no item, as real services do.
		const tooLong = 'x'.repeat(5000);
		const api = await startServer((req, res, text) => {
			const path = (req.url ?? '').replace(/^\/api\/v1/, '').split('?')[0];
			if (req.method === 'POST' && path === '/tasks/query')
				return json(res, 200, { items: [], meta: {} });
			if (req.method === 'GET') return json(res, 404, { message: 'Not found' });
			const body = JSON.parse(text) as IDataObject;
			const items = (
				path === '/tasks/batch' ? body.items : [{ ...body, uid: path.split('/')[2] }]
			) as IDataObject[];
			if (items.some((item) => (item.fields as IDataObject).title === tooLong))
				return json(res, 422, { message: 'fields.title: value too long' });
			return json(res, 200, path === '/tasks/batch' ? { items } : items[0]);
		});
		try {
			const items = tickets(300).map((ticket, i) =>
				i === 200 ? { ...ticket, title: tooLong } : ticket,
			);
			const run = await runBacklog(sim, upsert, {
				items,
				continueOnFail: true,
				credentials: { baseUrl: `${api.origin}/api/v1` },
			});
			expect(run.json.filter((json) => json.error)).toHaveLength(1);
			expect(run.json[200].error).toMatch(/value too long/);
			const writes = api.received.filter((request) => request.method === 'PUT');
			// Halving finds the item in about 2 × log2(300) requests; a batch size of 1 kept for the run would take 300.
			expect(writes.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(300)) + 1);
		} finally {
			await api.stop();
		}
	});

	it('a 422 about the items list ("at most 50 items") is still read as batch too large', async () => {
		sim.configure({ readings: { maxBatchSize: 50, batchTooLarge: '422' } });
		const run = await runBacklog(sim, upsert, { items: tickets(300) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(300);
		expect(sent(sim, 'PUT', '/tasks/batch')).toHaveLength(1 + 300 / 50);
	});
});

describe('Sync Backlog writes only what it changes', () => {
	const sync = {
		resource: 'task',
		operation: 'syncBacklog',
		externalId: '={{ $json.id }}',
		title: '={{ $json.title }}',
		sourceValue: 'helpdesk',
		syncOutput: 'allRows',
	};

	it('an operator’s edit made after the listing, to a key the sync does not set, is kept', async () => {
		sim.seedTasks(3, (i) => ({
			uid: uidOf(`T-${i + 1}`),
			fields: {
				title: `Ticket ${i + 1}`,
				ticket_id: `T-${i + 1}`,
				source: 'helpdesk',
				note: 'old',
			},
		}));
		// The edit lands as soon as the listing is answered, before anything else of the run reaches the service.
		let edited = false;
		sim.failNext({
			status: 500,
			when: (req) => {
				if (!edited && req.path !== '/tasks') {
					sim.tasks.get(uidOf('T-2'))!.fields.note = 'operator edit';
					edited = true;
				}
				return false;
			},
		});
		const items = tickets(3).map((ticket) =>
			ticket.id === 'T-2' ? { ...ticket, title: 'Ticket 2 (renamed)' } : ticket,
		);
		const run = await runBacklog(sim, sync, {
			items: [...items, { id: 'T-4', title: 'Ticket 4' }],
		});
		expect(run.error).toBeUndefined();
		expect(edited).toBe(true);
		expect(sim.tasks.get(uidOf('T-2'))!.fields).toEqual({
			title: 'Ticket 2 (renamed)',
			ticket_id: 'T-2',
			source: 'helpdesk',
			note: 'operator edit',
		});
	});

	it('an update sends the custom fields that changed, over the task as read just before its batch', async () => {
		sim.seedTasks(2, (i) => ({
			uid: uidOf(`T-${i + 1}`),
			fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk', note: 'n' },
		}));
		const run = await runBacklog(sim, sync, {
			items: [
				{ id: 'T-1', title: 'Renamed' },
				{ id: 'T-2', title: 'Ticket 2' },
			],
		});
		expect(run.json.map((json) => json.action)).toEqual(['update', 'unchanged']);
		const [patch] = writesSent(sim);
		expect(patch.path).toBe(`/tasks/${uidOf('T-1')}`);
		expect(patch.body).toEqual({
			fields: { title: 'Renamed', ticket_id: 'T-1', source: 'helpdesk', note: 'n' },
		});
	});
});
