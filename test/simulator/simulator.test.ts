/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-explicit-any -- test code, never ships */
// Tests of the Task Backlog simulator over real HTTP, named after the spec rules (or our stated choices) they check.
import * as http from 'node:http';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { request, type Dispatcher } from 'undici';

import {
	countRequests,
	startSimulator,
	type Simulator,
	type SimulatorOptions,
	type Task,
} from '../../tools/simulator/simulator';

interface Reply {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	json: any;
}

interface CallOptions {
	body?: unknown;
	raw?: string;
	token?: string | null;
	headers?: Record<string, string>;
}

async function call(
	sim: Simulator,
	method: string,
	path: string,
	o: CallOptions = {},
): Promise<Reply> {
	const headers: Record<string, string> = { 'user-agent': 'simulator-test/1.0', ...o.headers };
	if (o.token !== null) headers.authorization = `Bearer ${o.token ?? 'test-token'}`;
	let body: string | undefined = o.raw;
	if (body === undefined && o.body !== undefined) {
		body = JSON.stringify(o.body);
		headers['content-type'] = 'application/json';
	}
	const res = await request(sim.url + path, {
		method: method as Dispatcher.HttpMethod,
		headers,
		body,
	});
	const text = await res.body.text();
	return {
		status: res.statusCode,
		headers: res.headers,
		json: text ? JSON.parse(text) : undefined,
	};
}

async function control(
	sim: Simulator,
	method: string,
	name: string,
	body?: unknown,
): Promise<Reply> {
	const res = await request(`http://127.0.0.1:${sim.port}/_sim/${name}`, {
		method: method as Dispatcher.HttpMethod,
		body: body === undefined ? undefined : JSON.stringify(body),
		headers: { 'content-type': 'application/json' },
	});
	const text = await res.body.text();
	return {
		status: res.statusCode,
		headers: res.headers,
		json: text ? JSON.parse(text) : undefined,
	};
}

const UID = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const sims: Simulator[] = [];
async function start(options?: SimulatorOptions): Promise<Simulator> {
	const s = await startSimulator(options);
	sims.push(s);
	return s;
}

let sim: Simulator;
beforeAll(async () => {
	sim = await start({ maxBatchSize: 5 });
});
beforeEach(() => sim.reset());
afterAll(async () => {
	await Promise.all(sims.map((s) => s.stop()));
});

describe('authentication and errors', () => {
	test('missing or unknown token gets 401 with a message, and the request is still logged', async () => {
		const missing = await call(sim, 'GET', '/tasks', { token: null });
		expect(missing.status).toBe(401);
		expect(missing.json).toEqual({ message: 'Invalid or missing bearer token' });
		expect((await call(sim, 'GET', '/tasks', { token: 'nope' })).status).toBe(401);
		expect(countRequests(sim, 'GET', '/tasks')).toBe(2);
		expect(sim.requests.map((r) => r.status)).toEqual([401, 401]);
	});

	test('GET /accounts/me verifies the token', async () => {
		const r = await call(sim, 'GET', '/accounts/me');
		expect(r.status).toBe(200);
		expect(r.json).toMatchObject({ name: 'Simulated account', user: { role: 'super_admin' } });
	});

	test('unknown route gets 404, wrong method 405, invalid JSON 400', async () => {
		expect((await call(sim, 'GET', '/nothing')).status).toBe(404);
		expect((await call(sim, 'DELETE', '/tasks')).status).toBe(405);
		const bad = await call(sim, 'POST', '/tasks', {
			raw: '{"fields":',
			headers: { 'content-type': 'application/json' },
		});
		expect(bad.status).toBe(400);
		expect(typeof bad.json.message).toBe('string');
	});

	test('request headers are logged (User-Agent, service-* headers)', async () => {
		await call(sim, 'GET', '/tasks', { headers: { 'service-versioning': '2024-01' } });
		expect(sim.requests[0].headers['user-agent']).toBe('simulator-test/1.0');
		expect(sim.requests[0].headers['service-versioning']).toBe('2024-01');
	});
});

describe('tasks', () => {
	test('POST /tasks with only fields creates a task with every R field defaulted', async () => {
		const r = await call(sim, 'POST', '/tasks', {
			body: { fields: { title: 'Review KYC', ticket_id: '1042' } },
		});
		expect(r.status).toBe(200);
		const t: Task = r.json;
		expect(t.uid).toMatch(/^[0-9a-f-]{36}$/);
		expect(t).toMatchObject({
			archived: false,
			status: 'TODO',
			legacy_data: {},
			skills: [],
			assignee_uid: null,
			participants: {},
			parent_uid: null,
			form_data: {},
			done_at: null,
			queue_time: null,
			num_children: 0,
			num_children_done: 0,
		});
		expect(Date.parse(t.due_at) - Date.parse(t.created_at)).toBe(7 * 24 * 3600 * 1000);
		for (const k of [
			'metadata_form_uid',
			'external_status',
			'resolution_time_business',
			'internal_created_at',
		])
			expect(t).toHaveProperty(k);
		expect(sim.tasks.get(t.uid)?.fields.ticket_id).toBe('1042');
	});

	test('POST /tasks honours a client uid and answers 409 when it exists', async () => {
		const r = await call(sim, 'POST', '/tasks', { body: { uid: UID(1), fields: { title: 'a' } } });
		expect(r.json.uid).toBe(UID(1));
		const again = await call(sim, 'POST', '/tasks', {
			body: { uid: UID(1), fields: { title: 'b' } },
		});
		expect(again.status).toBe(409);
		expect(again.json.message).toContain(UID(1));
	});

	test('create without fields.title is 422 naming body.fields.title', async () => {
		const r = await call(sim, 'POST', '/tasks', { body: { fields: { url: 'https://x' } } });
		expect(r.status).toBe(422);
		expect(r.json.detail[0]).toEqual({
			loc: ['body', 'fields', 'title'],
			msg: 'field required',
			type: 'value_error.missing',
		});
		expect(sim.tasks.size).toBe(0);
	});

	test('malformed uids, enums, dates and booleans are 422 with the field in loc', async () => {
		const r = await call(sim, 'POST', '/tasks', {
			body: {
				fields: { title: 'x' },
				assignee_uid: 'bob',
				status: 'OPEN',
				due_at: 'tomorrow',
				archived: 'no',
			},
		});
		expect(r.status).toBe(422);
		const locs = r.json.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
		expect(locs.sort()).toEqual([
			'body.archived',
			'body.assignee_uid',
			'body.due_at',
			'body.status',
		]);
		const path = await call(sim, 'GET', '/tasks/not-a-uuid');
		expect(path.status).toBe(422);
		expect(path.json.detail[0].loc).toEqual(['path', 'uid']);
	});

	test('internal, metric and counter fields in a body are ignored', async () => {
		const r = await call(sim, 'POST', '/tasks', {
			body: {
				fields: { title: 'x' },
				num_children: 9,
				queue_time: 5,
				internal_created_at: '2000-01-01T00:00:00Z',
			},
		});
		expect(r.json).toMatchObject({ num_children: 0, queue_time: null });
		expect(r.json.internal_created_at).not.toBe('2000-01-01T00:00:00.000Z');
	});

	test('PUT with the same uid twice creates one task; the second call is a no-op', async () => {
		const first = await call(sim, 'PUT', `/tasks/${UID(7)}`, {
			body: { fields: { title: 'first' } },
		});
		expect(first.status).toBe(200);
		const second = await call(sim, 'PUT', `/tasks/${UID(7)}`, {
			body: { fields: { title: 'second' }, status: 'DONE' },
		});
		expect(second.status).toBe(200);
		expect(second.json).toEqual(first.json);
		expect(sim.tasks.size).toBe(1);
		expect(sim.tasks.get(UID(7))?.fields.title).toBe('first');
	});

	test('PATCH merges fields key by key, null removes a key, and 404s on a missing task', async () => {
		await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't', a: 1, b: 2 } } });
		const r = await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { fields: { b: null, c: 3 } } });
		expect(r.json.fields).toEqual({ title: 't', a: 1, c: 3 });
		expect(
			(await call(sim, 'PATCH', `/tasks/${UID(2)}`, { body: { status: 'DONE' } })).status,
		).toBe(404);
		expect(
			(await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { fields: { title: '' } } })).status,
		).toBe(422);
	});

	test('status DONE sets done_at, TODO clears it, STARTED sets started_at; updated_at strictly increases on real changes only', async () => {
		const created = (
			await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't' } } })
		).json as Task;
		const started = (await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { status: 'STARTED' } }))
			.json as Task;
		expect(started.started_at).not.toBeNull();
		const done = (await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { status: 'DONE' } }))
			.json as Task;
		expect(done.done_at).not.toBeNull();
		const same = (await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { status: 'DONE' } }))
			.json as Task;
		expect(same.updated_at).toBe(done.updated_at);
		const reopened = (await call(sim, 'PATCH', `/tasks/${UID(1)}`, { body: { status: 'TODO' } }))
			.json as Task;
		expect(reopened.done_at).toBeNull();
		const stamps = [created, started, done, reopened].map((t) => Date.parse(t.updated_at));
		for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]);
	});

	test('GET /tasks/{uid} expands assignee, parent, children and comments; an unknown expand is 422', async () => {
		await call(sim, 'PUT', `/tasks/${UID(1)}`, {
			body: { fields: { title: 'parent' }, assignee_uid: UID(99) },
		});
		await call(sim, 'PUT', `/tasks/${UID(2)}`, {
			body: { fields: { title: 'child' }, parent_uid: UID(1), status: 'DONE' },
		});
		await call(sim, 'PUT', `/tasks/${UID(3)}`, {
			body: { fields: { title: 'child 2' }, parent_uid: UID(1) },
		});
		await call(sim, 'POST', `/tasks/${UID(1)}/comments`, { body: { text: 'hello' } });
		const plain = (await call(sim, 'GET', `/tasks/${UID(1)}`)).json;
		expect(plain).not.toHaveProperty('assignee');
		expect(plain).toMatchObject({ num_children: 2, num_children_done: 1 });
		const r = await call(sim, 'GET', `/tasks/${UID(1)}?expand=assignee,children&expand=comments`);
		expect(r.json.assignee).toMatchObject({ uid: UID(99), is_registered: true });
		expect(r.json.children.map((c: Task) => c.uid)).toEqual([UID(2), UID(3)]);
		expect(r.json.comments).toHaveLength(1);
		const child = await call(sim, 'GET', `/tasks/${UID(2)}?expand=parent`);
		expect(child.json.parent.uid).toBe(UID(1));
		const bad = await call(sim, 'GET', `/tasks/${UID(1)}?expand=owner`);
		expect(bad.status).toBe(422);
		expect(bad.json.detail[0].loc[0]).toBe('query');
	});

	test('DELETE /tasks/{uid} removes the task and 404s afterwards', async () => {
		await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't' } } });
		expect((await call(sim, 'DELETE', `/tasks/${UID(1)}`)).status).toBe(200);
		expect((await call(sim, 'GET', `/tasks/${UID(1)}`)).status).toBe(404);
		expect((await call(sim, 'DELETE', `/tasks/${UID(1)}`)).status).toBe(404);
	});
});

describe('listing', () => {
	test('GET /tasks clamps limit to the maximum page size and next_cursor is empty on the last page', async () => {
		const small = await start({ maxPageSize: 10 });
		const seeded = small.seedTasks(25);
		const seen: string[] = [];
		let cursor = '';
		let pages = 0;
		do {
			const r = await call(
				small,
				'GET',
				`/tasks?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
			);
			expect(r.status).toBe(200);
			expect(r.json.meta.limit).toBe(10);
			expect(r.json.meta.total_count).toBe(25);
			expect(typeof r.json.meta.self_cursor).toBe('string');
			seen.push(...r.json.items.map((t: Task) => t.uid));
			cursor = r.json.meta.next_cursor;
			pages++;
		} while (cursor !== '');
		expect(pages).toBe(3);
		expect(seen).toEqual(seeded.map((t) => t.uid)); // created_at then uid order
		const first = await call(small, 'GET', '/tasks');
		expect(first.json.meta).toMatchObject({ limit: 10, prev_cursor: '' });
	});

	test('default page size is min(50, maxPageSize); a bad cursor is 400; limit=0 is 422', async () => {
		sim.seedTasks(60);
		const r = await call(sim, 'GET', '/tasks');
		expect(r.json.items).toHaveLength(50);
		expect((await call(sim, 'GET', '/tasks?cursor=garbage')).status).toBe(400);
		expect((await call(sim, 'GET', '/tasks?limit=0')).status).toBe(422);
	});

	test('a cursor neither repeats nor skips tasks when tasks are created or deleted between pages', async () => {
		const seeded = sim.seedTasks(6);
		const p1 = await call(sim, 'GET', '/tasks?limit=3');
		sim.tasks.delete(seeded[0].uid);
		sim.seedTasks(1);
		const p2 = await call(sim, 'GET', `/tasks?limit=3&cursor=${p1.json.meta.next_cursor}`);
		expect(p2.json.items.map((t: Task) => t.uid)).toEqual(seeded.slice(3, 6).map((t) => t.uid));
	});

	test('filters: status, custom field equality, archived hidden by default, updated_at_after with order_by', async () => {
		sim.seedTasks(6, (i) => ({
			fields: { ticket_id: String(i % 3) },
			status: i < 2 ? 'DONE' : 'TODO',
			archived: i === 5,
		}));
		const done = await call(sim, 'GET', '/tasks?status=DONE');
		expect(done.json.items).toHaveLength(2);
		const byTicket = await call(sim, 'GET', '/tasks?ticket_id=1');
		expect(byTicket.json.items.map((t: Task) => t.fields.ticket_id)).toEqual(['1', '1']);
		expect((await call(sim, 'GET', '/tasks')).json.meta.total_count).toBe(5);
		expect((await call(sim, 'GET', '/tasks?archived=true')).json.meta.total_count).toBe(1);
		const mark = [...sim.tasks.values()][3];
		const changed = await call(sim, 'PATCH', `/tasks/${mark.uid}`, {
			body: { fields: { note: 'x' } },
		});
		const since = await call(
			sim,
			'GET',
			`/tasks?order_by=updated_at&updated_at_after=${encodeURIComponent(mark.created_at)}`,
		);
		expect(since.json.items.map((t: Task) => t.uid).pop()).toBe(changed.json.uid);
		expect((await call(sim, 'GET', '/tasks?order_by=priority')).status).toBe(422);
	});

	test('search looks at no more than 10×limit tasks of the ordered set', async () => {
		sim.seedTasks(30, (i) => ({
			fields: { title: i === 25 ? 'Needle in the stack' : `Hay ${i}` },
		}));
		const narrow = await call(sim, 'GET', '/tasks?search=needle&limit=2'); // window of 20: misses position 25
		expect(narrow.json.items).toHaveLength(0);
		const wide = await call(sim, 'GET', '/tasks?search=NEEDLE&limit=3'); // window of 30: finds it
		expect(wide.json.items.map((t: Task) => t.fields.title)).toEqual(['Needle in the stack']);
		expect(wide.json.meta.total_count).toBe(1);
	});
});

describe('query pages', () => {
	test('a first page is the first of the sorted order, and its cursor goes on where it ends (300 tasks, limit 40)', async () => {
		// titles in a scrambled order, so that neither the uid nor the insertion order is the sort order
		sim.seedTasks(300, (i) => ({ uid: UID(i + 1), fields: { title: `T${(i * 7919) % 300}` } }));
		const body = {
			condition: {},
			sorts: [{ field: 'fields.title', direction: 'ascending' }],
			limit: 40,
		};
		const read: string[] = [];
		let cursor = '';
		for (let page = 0; page < 20; page++) {
			const r = await call(sim, 'POST', `/tasks/query${cursor ? `?cursor=${cursor}` : ''}`, {
				body,
			});
			read.push(...r.json.items.map((t: Task) => t.fields.title as string));
			cursor = r.json.meta.next_cursor;
			if (!cursor) break;
		}
		const expected = Array.from({ length: 300 }, (_, i) => `T${(i * 7919) % 300}`).sort();
		expect(read).toEqual(expected);
	});
});

describe('query', () => {
	beforeEach(() => {
		sim.seedTasks(6, (i) => ({
			uid: UID(i + 1),
			status: (['TODO', 'STARTED', 'DONE'] as const)[i % 3],
			fields: { title: `Task ${i + 1}`, ticket_id: String(100 + i), tags: i % 2 ? ['vip'] : [] },
			archived: i === 5,
		}));
	});

	test('query with or/!=/in', async () => {
		const r = await call(sim, 'POST', '/tasks/query', {
			body: {
				condition: {
					combinator: 'or',
					conditions: [
						{ field: 'fields.ticket_id', operator: 'in', value: ['100', '101'] },
						{
							combinator: 'and',
							conditions: [
								{ field: 'status', operator: '!=', value: 'TODO' },
								{ field: 'fields.ticket_id', operator: '>=', value: '104' },
							],
						},
					],
				},
			},
		});
		expect(r.status).toBe(200);
		expect(r.json.items.map((t: Task) => t.uid)).toEqual([UID(1), UID(2), UID(5)]); // UID(6) is archived
		expect(r.json.meta.total_count).toBe(3);
	});

	test('query contains, negated, disabled, sorts and the archived parameter', async () => {
		const r = await call(sim, 'POST', '/tasks/query?archived=true', {
			body: { condition: { field: 'fields.tags', operator: 'contains', value: 'vip' } },
		});
		expect(r.json.items.map((t: Task) => t.uid)).toEqual([UID(6)]);
		const neg = await call(sim, 'POST', '/tasks/query', {
			body: {
				condition: {
					combinator: 'and',
					conditions: [
						{ field: 'status', operator: '==', value: 'DONE', negated: true },
						{ field: 'status', operator: '==', value: 'nothing', disabled: true },
					],
				},
				sorts: [{ field: 'fields.ticket_id', direction: 'descending' }],
				limit: 2,
			},
		});
		expect(neg.json.items.map((t: Task) => t.uid)).toEqual([UID(5), UID(4)]);
		expect(neg.json.meta.limit).toBe(2);
		const next = await call(sim, 'POST', `/tasks/query?cursor=${neg.json.meta.next_cursor}`, {
			body: {
				condition: { field: 'status', operator: '==', value: 'DONE', negated: true },
				sorts: [{ field: 'fields.ticket_id', direction: 'descending' }],
				limit: 2,
			},
		});
		expect(next.json.items.map((t: Task) => t.uid)).toEqual([UID(2), UID(1)]);
		expect(next.json.meta.next_cursor).toBe('');
	});

	test('an empty condition matches every non-archived task; unknown operator or combinator is 422', async () => {
		const all = await call(sim, 'POST', '/tasks/query', { body: { condition: {} } });
		expect(all.json.meta.total_count).toBe(5);
		const op = await call(sim, 'POST', '/tasks/query', {
			body: { condition: { field: 'status', operator: 'like', value: 'x' } },
		});
		expect(op.status).toBe(422);
		expect(op.json.detail[0].loc).toEqual(['body', 'condition', 'operator']);
		const comb = await call(sim, 'POST', '/tasks/query', {
			body: { condition: { combinator: 'xor', conditions: [] } },
		});
		expect(comb.status).toBe(422);
	});
	test('queryIgnores: a server that ignores conditions on uid, or the sorts, answers as if they were absent', async () => {
		const s = await start({ queryIgnores: ['uid'] });
		s.seedTasks(4, (i) => ({
			uid: UID(i + 1),
			fields: { title: `t${i}`, team: i < 3 ? 'a' : 'b' },
		}));
		const body = {
			condition: {
				combinator: 'and',
				conditions: [
					{ field: 'fields.team', operator: '==', value: 'a' },
					{ field: 'uid', operator: '>', value: UID(1) },
				],
			},
			sorts: [{ field: 'uid', direction: 'descending' }],
		};
		const uids = async () =>
			(await call(s, 'POST', '/tasks/query', { body })).json.items.map((t: Task) => t.uid);
		expect(await uids()).toEqual([UID(3), UID(2), UID(1)]); // the team condition kept, the uid one dropped
		s.configure({ queryIgnores: ['sorts'] });
		expect(await uids()).toEqual([UID(2), UID(3)]); // created_at order
		s.configure({ queryIgnores: [] });
		expect(await uids()).toEqual([UID(3), UID(2)]);
	});

	test("queryIgnores ['time']: a server that does not filter by time answers a time condition as if it were absent", async () => {
		const s = await start({ queryIgnores: ['time'] });
		s.seedTasks(3, (i) => ({ uid: UID(i + 1), fields: { title: `t${i}`, team: 'a' } }));
		const body = {
			condition: {
				combinator: 'and',
				conditions: [
					{ field: 'fields.team', operator: '==', value: 'a' },
					{ field: 'updated_at', operator: '>=', value: '2999-01-01T00:00:00.000Z' },
				],
			},
		};
		const count = async () => (await call(s, 'POST', '/tasks/query', { body })).json.items.length;
		expect(await count()).toBe(3); // the team condition kept, the time one dropped
		s.configure({ queryIgnores: [] });
		expect(await count()).toBe(0);
	});

	test('the issue-32 server: GET /tasks pages of at most 13 (maxPageSize), /tasks/query pages of 100 (queryMaxLimit)', async () => {
		for (const profile of ['lenient', 'strict'] as const) {
			const s = await start({ profile, maxPageSize: 13, readings: { queryMaxLimit: 100 } });
			s.seedTasks(150);
			const list = await call(s, 'GET', '/tasks?limit=100');
			expect(list.json.items).toHaveLength(13);
			expect(list.json.meta.limit).toBe(13);
			const query = await call(s, 'POST', '/tasks/query?limit=100', { body: { limit: 100 } });
			expect(query.json.items).toHaveLength(100);
		}
	});
});

describe('batch', () => {
	test('POST /tasks/batch creates every item and answers in input order with meta', async () => {
		const r = await call(sim, 'POST', '/tasks/batch', {
			body: { items: [{ uid: UID(2), fields: { title: 'b' } }, { fields: { title: 'a' } }] },
		});
		expect(r.status).toBe(200);
		expect(r.json.items.map((t: Task) => t.fields.title)).toEqual(['b', 'a']);
		expect(r.json.items[0].uid).toBe(UID(2));
		expect(r.json.meta).toEqual({
			limit: 2,
			total_count: 2,
			self_cursor: '',
			prev_cursor: '',
			next_cursor: '',
		});
	});

	test('PUT /tasks/batch updates an existing uid (unlike single PUT) and creates new ones', async () => {
		await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 'old', keep: 'no' } } });
		const r = await call(sim, 'PUT', '/tasks/batch', {
			body: {
				items: [
					{ uid: UID(1), status: 'DONE', fields: { title: 'new' } },
					{ uid: UID(2), fields: { title: 'fresh' } },
				],
			},
		});
		expect(r.status).toBe(200);
		expect(r.json.items[0]).toMatchObject({
			uid: UID(1),
			status: 'DONE',
			fields: { title: 'new' },
		});
		expect(sim.tasks.get(UID(1))?.fields).toEqual({ title: 'new' });
		expect(sim.tasks.size).toBe(2);
	});

	test('PATCH /tasks/batch updates partially; an unknown uid is 422 task not found', async () => {
		sim.seedTasks(2, (i) => ({ uid: UID(i + 1), fields: { title: `t${i}`, x: 1 } }));
		const r = await call(sim, 'PATCH', '/tasks/batch', {
			body: { items: [{ uid: UID(2), fields: { y: 2 } }] },
		});
		expect(r.json.items[0].fields).toEqual({ title: 't1', x: 1, y: 2 });
		const missing = await call(sim, 'PATCH', '/tasks/batch', {
			body: { items: [{ uid: UID(3), status: 'DONE' }, { status: 'DONE' }] },
		});
		expect(missing.status).toBe(422);
		expect(missing.json.detail).toEqual([
			expect.objectContaining({ loc: ['body', 'items', 0, 'uid'], msg: 'task not found' }),
			expect.objectContaining({ loc: ['body', 'items', 1, 'uid'], msg: 'field required' }),
		]);
	});

	test('a batch with one invalid item writes nothing and names the item', async () => {
		const items = [0, 1, 2, 3].map((i) => ({
			uid: UID(i + 1),
			fields: i === 3 ? { url: 'u' } : { title: `t${i}` },
		}));
		const r = await call(sim, 'PUT', '/tasks/batch', { body: { items } });
		expect(r.status).toBe(422);
		expect(r.json.detail).toEqual([
			{
				loc: ['body', 'items', 3, 'fields', 'title'],
				msg: 'field required',
				type: 'value_error.missing',
			},
		]);
		expect(sim.tasks.size).toBe(0);
	});

	test('more than maxBatchSize items is 422 naming the limit', async () => {
		const items = Array.from({ length: 6 }, (_, i) => ({ fields: { title: `t${i}` } }));
		const r = await call(sim, 'POST', '/tasks/batch', { body: { items } });
		expect(r.status).toBe(422);
		expect(r.json.detail[0].msg).toContain('at most 5');
		expect(sim.tasks.size).toBe(0);
	});
});

describe('comments', () => {
	test('comments round-trip: create, list, get with expand, patch, idempotent PUT', async () => {
		await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't' } } });
		const created = await call(sim, 'POST', `/tasks/${UID(1)}/comments`, {
			body: { text: 'first' },
		});
		expect(created.status).toBe(200);
		expect(created.json).toMatchObject({
			task_uid: UID(1),
			text: 'first',
			archived: false,
			blocks: [],
		});
		expect(created.json.author_uid).toMatch(/^[0-9a-f-]{36}$/);
		await call(sim, 'PUT', `/tasks/${UID(1)}/comments/${UID(50)}`, { body: { text: 'second' } });
		const noop = await call(sim, 'PUT', `/tasks/${UID(1)}/comments/${UID(50)}`, {
			body: { text: 'changed' },
		});
		expect(noop.json.text).toBe('second');
		const list = await call(sim, 'GET', `/tasks/${UID(1)}/comments?limit=1`);
		expect(list.json.items.map((c: { text: string }) => c.text)).toEqual(['first']);
		expect(list.json.meta.total_count).toBe(2);
		const one = await call(
			sim,
			'GET',
			`/tasks/${UID(1)}/comments/${UID(50)}?expand=task&expand=author`,
		);
		expect(one.json.task.uid).toBe(UID(1));
		expect(one.json.author.uid).toBe(one.json.author_uid);
		const patched = await call(sim, 'PATCH', `/tasks/${UID(1)}/comments/${UID(50)}`, {
			body: { text: 'edited' },
		});
		expect(patched.json.text).toBe('edited');
		expect(Date.parse(patched.json.updated_at)).toBeGreaterThan(Date.parse(noop.json.updated_at));
	});

	test('a comment needs an existing task and a non-empty text (or blocks)', async () => {
		expect(
			(await call(sim, 'POST', `/tasks/${UID(1)}/comments`, { body: { text: 'x' } })).status,
		).toBe(404);
		await call(sim, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't' } } });
		const empty = await call(sim, 'POST', `/tasks/${UID(1)}/comments`, { body: { text: '' } });
		expect(empty.status).toBe(422);
		expect(empty.json.detail[0].loc).toEqual(['body', 'text']);
		const blocks = await call(sim, 'POST', `/tasks/${UID(1)}/comments`, {
			body: {
				blocks: [
					{
						id: 'b1',
						type: 'paragraph',
						props: {},
						content: [{ type: 'text', text: 'from blocks' }],
						children: [],
					},
				],
			},
		});
		expect(blocks.json.text).toBe('from blocks');
	});
});

describe('rate limit and faults', () => {
	test('more than N requests per window get 429; 401s are not counted; the next window is fresh', async () => {
		const limited = await start({ requestsPerWindow: 3, windowMs: 1000 });
		await call(limited, 'GET', '/tasks', { token: 'wrong' });
		const statuses: number[] = [];
		for (let i = 0; i < 5; i++) statuses.push((await call(limited, 'GET', '/tasks')).status);
		expect(statuses).toEqual([200, 200, 200, 429, 429]);
		const r = await call(limited, 'GET', '/tasks');
		expect(r.json).toEqual({ message: 'Too many requests: limit is 3 per window' });
		expect(r.headers['retry-after']).toBeUndefined();
		await new Promise((res) => setTimeout(res, 1050));
		expect((await call(limited, 'GET', '/tasks')).status).toBe(200);
	});

	test('fault injection with a seed is deterministic', async () => {
		const faults = { error5xxRate: 0.3, rateLimitRate: 0.2, retryAfterRate: 0.5 };
		const run = async (): Promise<string[]> => {
			const s = await start({ seed: 42, faults });
			const out: string[] = [];
			for (let i = 0; i < 25; i++) {
				const r = await call(s, 'PUT', `/tasks/${UID(i)}`, {
					body: { fields: { title: `t${i}` } },
				});
				out.push(`${r.status}:${r.headers['retry-after'] ?? ''}`);
			}
			expect(s.tasks.size).toBe(out.filter((o) => o.startsWith('200')).length); // faults come before side effects
			return out;
		};
		const a = await run();
		expect(await run()).toEqual(a);
		expect(new Set(a.map((o) => o.split(':')[0])).size).toBeGreaterThan(2);
	});

	test('a reset fault closes the socket without a response; `only` restricts faults', async () => {
		const s = await start({ faults: { resetRate: 1, only: (r) => r.method === 'POST' } });
		await expect(call(s, 'POST', '/tasks', { body: { fields: { title: 'x' } } })).rejects.toThrow();
		expect(s.tasks.size).toBe(0);
		expect((await call(s, 'GET', '/tasks')).status).toBe(200);
		expect(s.requests[0]).toMatchObject({ fault: 'reset', status: 0 });
		s.configure({ faults: { rateLimitRate: 1, retryAfterRate: 1, retryAfterSeconds: 2 } });
		const r = await call(s, 'GET', '/tasks');
		expect(r.status).toBe(429);
		expect(r.headers['retry-after']).toBe('2');
	});

	test('a reset after the effect keeps the work but sends no answer; a retried PUT does not duplicate', async () => {
		const s = await start({
			seed: 7,
			faults: { resetAfterEffectRate: 1, only: (r) => r.method === 'PUT' },
		});
		await expect(
			call(s, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 'x' } } }),
		).rejects.toThrow();
		expect(s.requests[0]).toMatchObject({ fault: 'reset-after-effect', status: 0 });
		expect(s.tasks.size).toBe(1);
		s.configure({ faults: undefined });
		expect(
			(await call(s, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 'x' } } })).status,
		).toBe(200);
		expect(s.tasks.size).toBe(1);
	});

	test('a body containing refused content is answered 400 naming the item and the value, and nothing is written', async () => {
		const s = await start({ refuseContent: ['PAYROLL-4711-secret'] });
		const items = [0, 1, 2].map((i) => ({
			uid: UID(i + 1),
			fields: { title: i === 2 ? 'Pay PAYROLL-4711-secret now' : `t${i}` },
		}));
		const batch = await call(s, 'PUT', '/tasks/batch', { body: { items } });
		expect(batch.status).toBe(400);
		expect(batch.json).toEqual({
			message: 'items[2].fields.title: forbidden content "PAYROLL-4711-secret"',
		});
		const patch = await call(s, 'PATCH', '/tasks/batch', { body: { items } });
		expect(patch.json.message).toBe(
			'items[2].fields.title: forbidden content "PAYROLL-4711-secret"',
		);
		const single = await call(s, 'PUT', `/tasks/${UID(9)}`, {
			body: { fields: { title: 'x', note: 'PAYROLL-4711-secret' } },
		});
		expect(single.status).toBe(400);
		expect(single.json).toEqual({
			message: 'fields.note: forbidden content "PAYROLL-4711-secret"',
		});
		expect(s.tasks.size).toBe(0);
		expect(s.requests.map((r) => r.fault)).toEqual([
			'refused-content',
			'refused-content',
			'refused-content',
		]);
		// bodies without it, and reads (a query naming it), are served as usual
		expect(
			(await call(s, 'PUT', '/tasks/batch', { body: { items: items.slice(0, 2) } })).status,
		).toBe(200);
		const query = await call(s, 'POST', '/tasks/query', {
			body: { condition: { field: 'title', operator: '==', value: 'PAYROLL-4711-secret' } },
		});
		expect(query.status).toBe(200);
		expect(s.tasks.size).toBe(2);
		s.configure({ refuseContent: [] });
		expect((await call(s, 'PUT', '/tasks/batch', { body: { items } })).status).toBe(200);
		expect(s.tasks.size).toBe(3);
	});
});

describe('webhooks', () => {
	test('closing a task delivers a signed task.completed event', async () => {
		const received: Array<{ headers: http.IncomingHttpHeaders; raw: string }> = [];
		const receiver = http.createServer((req, res) => {
			let raw = '';
			req.on('data', (c) => (raw += c));
			req.on('end', () => {
				received.push({ headers: req.headers, raw });
				res.end('ok');
			});
		});
		await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
		const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
		try {
			const s = await start({
				webhooks: [
					{ url, secret: 's3cret', events: ['task.completed'] },
					{ url: `${url}?ts`, secret: 'other', signTimestamp: true },
				],
			});
			await call(s, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 't' } } });
			await call(s, 'PATCH', `/tasks/${UID(1)}`, { body: { status: 'DONE' } });
			await s.flushDeliveries();
			const plain = received.filter((r) => r.headers['x-backlog-event'] === 'task.completed');
			expect(plain).toHaveLength(2);
			const bodySigned = received.find(
				(r) =>
					r.headers['x-backlog-signature'] ===
					`sha256=${createHmac('sha256', 's3cret').update(r.raw).digest('hex')}`,
			);
			expect(bodySigned).toBeDefined();
			const event = JSON.parse(bodySigned!.raw);
			expect(event).toMatchObject({
				type: 'task.completed',
				data: { task: { uid: UID(1), status: 'DONE' } },
				info: {},
			});
			expect(typeof event.sentAt).toBe('string');
			const tsSigned = received.filter((r) => {
				const ts = r.headers['x-backlog-timestamp'];
				return (
					r.headers['x-backlog-signature'] ===
					`sha256=${createHmac('sha256', 'other').update(`${ts}.${r.raw}`).digest('hex')}`
				);
			});
			expect(tsSigned.map((r) => r.headers['x-backlog-event'])).toEqual([
				'task.created',
				'task.completed',
			]);
			expect(s.deliveries.map((d) => d.status)).toEqual([200, 200, 200]);
		} finally {
			receiver.closeAllConnections();
			await new Promise((r) => receiver.close(r));
		}
	});
});

describe('control surface and persistence', () => {
	test('/_sim/ routes seed, configure, report state and reset, without being logged', async () => {
		expect((await control(sim, 'POST', 'seed', { n: 3 })).json.items).toHaveLength(3);
		expect(
			(await control(sim, 'POST', 'configure', { requestsPerWindow: 100 })).json.options
				.requestsPerWindow,
		).toBe(100);
		await call(sim, 'GET', '/tasks');
		const state = await control(sim, 'GET', 'state');
		expect(state.json.counts).toMatchObject({ tasks: 3, comments: 0, requests: 1 });
		expect(
			(await control(sim, 'GET', 'requests')).json.requests.map((r: { path: string }) => r.path),
		).toEqual(['/tasks']);
		await control(sim, 'POST', 'reset');
		expect(sim.tasks.size).toBe(0);
		expect(sim.requests).toHaveLength(0);
		sim.configure({ requestsPerWindow: 0 });
	});

	test('persistFile keeps tasks across a restart', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'sim-'));
		try {
			const file = join(dir, 'state.json');
			const a = await startSimulator({ persistFile: file });
			await call(a, 'PUT', `/tasks/${UID(1)}`, { body: { fields: { title: 'kept' } } });
			await a.stop();
			const b = await startSimulator({ persistFile: file });
			expect(b.tasks.get(UID(1))?.fields.title).toBe('kept');
			await b.stop();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
