/* eslint-disable @typescript-eslint/no-explicit-any -- test code, never ships */
// Tests of the simulator's readings of the spec's open points (readings.ts), over real HTTP. Each test is named after
// the spec text the reading comes from; "strict:" tests run against the strict profile (or the one reading alone when
// the observable result needs the JSON error details), "lenient:" tests pin the historical behaviour.
import { request, type Dispatcher } from 'undici';

import {
	LENIENT_READINGS,
	STRICT_READINGS,
	readingsFor,
	startSimulator,
	type Readings,
	type Simulator,
	type SimulatorOptions,
	type Task,
} from '../../tools/simulator/simulator';
import { parseReadingAssignment } from '../../tools/simulator/readings';

interface Reply {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	/** Parsed JSON when the answer is JSON. */
	json: any;
	text: string;
}

async function call(
	sim: Simulator,
	method: string,
	path: string,
	body?: unknown,
	raw?: string,
): Promise<Reply> {
	const headers: Record<string, string> = {
		'user-agent': 'strict-profile-test/1.0',
		authorization: 'Bearer test-token',
	};
	let payload = raw;
	if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
	if (payload !== undefined) headers['content-type'] = 'application/json';
	const res = await request(sim.url + path, {
		method: method as Dispatcher.HttpMethod,
		headers,
		body: payload,
	});
	const text = await res.body.text();
	const isJson = String(res.headers['content-type'] ?? '').startsWith('application/json');
	return {
		status: res.statusCode,
		headers: res.headers,
		json: isJson && text ? JSON.parse(text) : undefined,
		text,
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
		text,
	};
}

const UID = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const sims: Simulator[] = [];
async function start(options?: SimulatorOptions): Promise<Simulator> {
	const s = await startSimulator(options);
	sims.push(s);
	return s;
}
/** A simulator with one reading set alone (lenient otherwise): its 422s keep FastAPI details with `loc`. */
const alone = (readings: Partial<Readings>, extra: SimulatorOptions = {}): Promise<Simulator> =>
	start({ readings, ...extra });

let strict: Simulator;
let lenient: Simulator;
beforeAll(async () => {
	strict = await start({ profile: 'strict' });
	lenient = await start();
});
beforeEach(() => {
	strict.reset();
	lenient.reset();
});
afterAll(async () => {
	await Promise.all(sims.map((s) => s.stop()));
});

describe('profiles and the readings API', () => {
	test('lenient is the default and keeps the historical readings; strict takes the unfriendly one of each', () => {
		expect(readingsFor({})).toEqual(LENIENT_READINGS);
		expect(readingsFor({ profile: 'lenient' })).toEqual(LENIENT_READINGS);
		expect(readingsFor({ profile: 'strict' })).toEqual(STRICT_READINGS);
		expect(STRICT_READINGS).toMatchObject({
			maxBatchSize: 50,
			queryMaxLimit: 50,
			batchPutExisting: 'replace',
		});
		const changed = (Object.keys(LENIENT_READINGS) as Array<keyof Readings>).filter(
			(k) => LENIENT_READINGS[k] !== STRICT_READINGS[k],
		);
		expect(changed).not.toContain('batchPutExisting'); // strict reads PUT batch as lenient does
		expect(changed).not.toContain('queryOperators'); // and answers every operator (documented-only is set alone)
		expect(changed).toHaveLength(Object.keys(LENIENT_READINGS).length - 2);
	});

	test('a reading set alone overrides the profile; explicit maxBatchSize and maxPageSize feed the limits', () => {
		expect(readingsFor({ profile: 'strict', readings: { patchFields: 'merge' } })).toEqual({
			...STRICT_READINGS,
			patchFields: 'merge',
		});
		expect(readingsFor({ readings: { errorBodies: 'varied' } })).toEqual({
			...LENIENT_READINGS,
			errorBodies: 'varied',
		});
		expect(readingsFor({ profile: 'strict', maxBatchSize: 5 }).maxBatchSize).toBe(5);
		expect(
			readingsFor({ profile: 'strict', maxBatchSize: 5, readings: { maxBatchSize: 7 } })
				.maxBatchSize,
		).toBe(7);
		expect(readingsFor({ maxPageSize: 30 }).queryMaxLimit).toBe(30); // lenient: the query clamps like the lists
		expect(readingsFor({ profile: 'strict', maxPageSize: 30 }).queryMaxLimit).toBe(30);
		expect(readingsFor({ profile: 'strict', maxPageSize: 500 }).queryMaxLimit).toBe(50);
	});

	test('startSimulator refuses an unknown profile, reading or value', async () => {
		await expect(startSimulator({ profile: 'harsh' as never })).rejects.toThrow(/profile/);
		await expect(startSimulator({ readings: { nope: 1 } as never })).rejects.toThrow(
			/unknown reading "nope"/,
		);
		await expect(
			startSimulator({ readings: { patchFields: 'overwrite' as never } }),
		).rejects.toThrow(/patchFields/);
	});

	test('GET /_sim/options shows the profile and the effective readings; POST /_sim/configure sets and merges them', async () => {
		const s = await start();
		const before = await control(s, 'GET', 'options');
		expect(before.json.options).toMatchObject({
			profile: 'lenient',
			readings: LENIENT_READINGS,
			readingOverrides: {},
		});
		const set = await control(s, 'POST', 'configure', {
			profile: 'strict',
			readings: { patchFields: 'merge' },
		});
		expect(set.status).toBe(200);
		expect(set.json.options.readings).toEqual({ ...STRICT_READINGS, patchFields: 'merge' });
		await control(s, 'POST', 'configure', { readings: { queryMaxLimit: 20 } }); // merged with patchFields
		expect((await control(s, 'GET', 'options')).json.options.readingOverrides).toEqual({
			patchFields: 'merge',
			queryMaxLimit: 20,
		});
		await control(s, 'POST', 'configure', { readings: { patchFields: null } }); // null drops one override
		expect((await control(s, 'GET', 'options')).json.options.readings).toEqual({
			...STRICT_READINGS,
			queryMaxLimit: 20,
		});
		const bad = await control(s, 'POST', 'configure', {
			profile: 'lenient',
			readings: { queryPaging: 'offset' },
		});
		expect(bad.status).toBe(400);
		expect(bad.json.message).toContain('queryPaging');
		expect(s.options.profile).toBe('strict'); // nothing applied
		await control(s, 'POST', 'configure', { profile: 'lenient', readings: null });
		expect((await control(s, 'GET', 'options')).json.options.readings).toEqual(LENIENT_READINGS);
	});

	test('configure() switches the profile of a running simulator', async () => {
		const s = await start();
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't', a: 1 } });
		s.configure({ profile: 'strict' });
		expect(
			(await call(s, 'PATCH', `/tasks/${UID(1)}`, { fields: { title: 't', b: 2 } })).json.fields,
		).toEqual({ title: 't', b: 2 });
		s.configure({ readings: { patchFields: 'merge' } });
		expect((await call(s, 'PATCH', `/tasks/${UID(1)}`, { fields: { c: 3 } })).json.fields).toEqual({
			title: 't',
			b: 2,
			c: 3,
		});
		expect(() => s.configure({ readings: { updatedAt: 'sometimes' as never } })).toThrow(
			/updatedAt/,
		);
	});

	test('the CLI form --reading name=value parses names, values and numbers', () => {
		expect(parseReadingAssignment('patchFields=replace')).toEqual({ patchFields: 'replace' });
		expect(parseReadingAssignment('maxBatchSize=25')).toEqual({ maxBatchSize: 25 });
		expect(() => parseReadingAssignment('maxBatchSize=lots')).toThrow(/positive integer/);
		expect(() => parseReadingAssignment('colour=blue')).toThrow(/unknown reading/);
		expect(() => parseReadingAssignment('patchFields')).toThrow(/name=value/);
	});
});

describe('patchFields (spec 4.2 rule 9: whether PATCH of fields replaces the object or merges keys: not shown)', () => {
	test('strict: PATCH fields replaces the whole object', async () => {
		await call(strict, 'PUT', `/tasks/${UID(1)}`, {
			fields: { title: 'old', ticket_id: '1042', keep: 'me?' },
		});
		const r = await call(strict, 'PATCH', `/tasks/${UID(1)}`, {
			fields: { title: 'new', extra: null },
		});
		expect(r.status).toBe(200);
		expect(r.json.fields).toEqual({ title: 'new', extra: null }); // exactly the object sent
		expect(strict.tasks.get(UID(1))?.fields).toEqual({ title: 'new', extra: null });
	});

	test('strict: PATCH /tasks/batch fields replace the whole object too', async () => {
		await call(strict, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'a', x: 1 } });
		await call(strict, 'PUT', `/tasks/${UID(2)}`, { fields: { title: 'b', x: 2 } });
		const r = await call(strict, 'PATCH', '/tasks/batch', {
			items: [
				{ uid: UID(1), fields: { title: 'A' } },
				{ uid: UID(2), status: 'DONE' },
			],
		});
		expect(r.status).toBe(200);
		expect(r.json.items[0].fields).toEqual({ title: 'A' });
		expect(r.json.items[1].fields).toEqual({ title: 'b', x: 2 }); // no fields sent: untouched
	});

	test('strict: PATCH fields without a title is 422 (fields.title is required) and changes nothing', async () => {
		const s = await alone({ patchFields: 'replace' });
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't', a: 1 } });
		const r = await call(s, 'PATCH', `/tasks/${UID(1)}`, { fields: { a: 2 } });
		expect(r.status).toBe(422);
		expect(r.json.detail).toEqual([
			{ loc: ['body', 'fields', 'title'], msg: 'field required', type: 'value_error.missing' },
		]);
		const b = await call(s, 'PATCH', '/tasks/batch', {
			items: [{ uid: UID(1), fields: { a: 3 } }],
		});
		expect(b.status).toBe(422);
		expect(b.json.detail[0].loc).toEqual(['body', 'items', 0, 'fields', 'title']);
		expect(s.tasks.get(UID(1))?.fields).toEqual({ title: 't', a: 1 });
	});

	test('lenient: PATCH fields merges key by key', async () => {
		await call(lenient, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't', a: 1 } });
		expect(
			(await call(lenient, 'PATCH', `/tasks/${UID(1)}`, { fields: { b: 2 } })).json.fields,
		).toEqual({ title: 't', a: 1, b: 2 });
	});
});

describe('putExisting (spec 4.2 rule 1 "later calls are no-ops" vs 4.5 rule 1 "creates or updates")', () => {
	test('strict: PUT /tasks/{uid} on an existing uid updates it like PUT /tasks/batch', async () => {
		await call(strict, 'PUT', `/tasks/${UID(1)}`, {
			fields: { title: 'first', old: 1 },
			assignee_uid: UID(9),
		});
		const r = await call(strict, 'PUT', `/tasks/${UID(1)}`, {
			fields: { title: 'second' },
			status: 'DONE',
		});
		expect(r.status).toBe(200);
		expect(r.json).toMatchObject({
			status: 'DONE',
			fields: { title: 'second' },
			assignee_uid: UID(9),
		}); // not-given kept
		expect(r.json.fields).toEqual({ title: 'second' }); // fields replaced whole
		expect(r.json.done_at).not.toBeNull();
		expect(strict.tasks.size).toBe(1);
	});

	test('strict: PUT over an existing uid with fields but no title is 422', async () => {
		const s = await alone({ putExisting: 'replace' });
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'first' } });
		const r = await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { note: 'x' } });
		expect(r.status).toBe(422);
		expect(r.json.detail[0].loc).toEqual(['body', 'fields', 'title']);
		expect((await call(s, 'PUT', `/tasks/${UID(1)}`, { status: 'STARTED' })).json).toMatchObject({
			status: 'STARTED',
			fields: { title: 'first' },
		});
	});

	test('lenient: a later PUT with the same uid is a no-op', async () => {
		const first = await call(lenient, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'first' } });
		const again = await call(lenient, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'second' } });
		expect(again.json).toEqual(first.json);
	});
});

describe('batchPutExisting (spec 4.2 rule 1: "PUT on /tasks/batch is likewise a create-or-update")', () => {
	test('strict: PUT /tasks/batch updates existing tasks (strict reads it as lenient does)', async () => {
		await call(strict, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'old', x: 1 } });
		const r = await call(strict, 'PUT', '/tasks/batch', {
			items: [{ uid: UID(1), fields: { title: 'new' } }],
		});
		expect(r.json.items[0].fields).toEqual({ title: 'new' });
	});

	test('noop (set alone): PUT /tasks/batch leaves existing tasks unchanged and returns them as stored', async () => {
		const s = await alone({ batchPutExisting: 'noop' });
		const stored = (await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'old', x: 1 } }))
			.json as Task;
		const r = await call(s, 'PUT', '/tasks/batch', {
			items: [
				{ uid: UID(1), status: 'DONE', fields: { title: 'new' } },
				{ uid: UID(2), fields: { title: 'fresh' } },
			],
		});
		expect(r.status).toBe(200);
		expect(r.json.items[0]).toEqual(stored);
		expect(r.json.items[1]).toMatchObject({ uid: UID(2), fields: { title: 'fresh' } });
		expect(s.tasks.get(UID(1))).toEqual(stored);
		const bad = await call(s, 'PUT', '/tasks/batch', { items: [{ uid: UID(1), status: 'OPEN' }] }); // still validated
		expect(bad.status).toBe(422);
	});
});

describe('postExisting (spec 4.2 rule 2: a client-supplied uid is honored; what happens when it exists: not shown)', () => {
	test('strict: POST /tasks with the uid of an existing task overwrites it and answers 200', async () => {
		await call(strict, 'POST', '/tasks', {
			uid: UID(1),
			fields: { title: 'a', x: 1 },
			assignee_uid: UID(9),
		});
		const r = await call(strict, 'POST', '/tasks', {
			uid: UID(1),
			fields: { title: 'b' },
			status: 'DONE',
		});
		expect(r.status).toBe(200);
		expect(r.json).toMatchObject({
			uid: UID(1),
			status: 'DONE',
			assignee_uid: UID(9),
			fields: { title: 'b' },
		});
		expect(r.json.fields).toEqual({ title: 'b' });
		expect(strict.tasks.size).toBe(1);
	});

	test('strict: POST /tasks/batch with an existing uid overwrites it too', async () => {
		await call(strict, 'POST', '/tasks', { uid: UID(1), fields: { title: 'a' } });
		const r = await call(strict, 'POST', '/tasks/batch', {
			items: [{ uid: UID(1), fields: { title: 'b' } }, { fields: { title: 'c' } }],
		});
		expect(r.status).toBe(200);
		expect(r.json.items.map((t: Task) => t.fields.title)).toEqual(['b', 'c']);
		expect(strict.tasks.get(UID(1))?.fields.title).toBe('b');
	});

	test('lenient: POST over an existing uid is 409, and a 422 item issue in a batch', async () => {
		await call(lenient, 'POST', '/tasks', { uid: UID(1), fields: { title: 'a' } });
		expect(
			(await call(lenient, 'POST', '/tasks', { uid: UID(1), fields: { title: 'b' } })).status,
		).toBe(409);
		const b = await call(lenient, 'POST', '/tasks/batch', {
			items: [{ uid: UID(1), fields: { title: 'b' } }],
		});
		expect(b.status).toBe(422);
		expect(b.json.detail[0]).toMatchObject({
			loc: ['body', 'items', 0, 'uid'],
			msg: 'uid already exists',
		});
		expect(lenient.tasks.get(UID(1))?.fields.title).toBe('a');
	});
});

describe('batch size and batchTooLarge (spec 8: batch size limit not shown; spec 7: error body shape not shown)', () => {
	const items = (n: number): unknown[] =>
		Array.from({ length: n }, (_, i) => ({ fields: { title: `t${i}` } }));

	test('strict: a batch of 50 is accepted, 51 is 413 with a text/plain body that does not say the limit', async () => {
		expect((await call(strict, 'POST', '/tasks/batch', { items: items(50) })).status).toBe(200);
		strict.reset();
		const r = await call(strict, 'PUT', '/tasks/batch', { items: items(51) });
		expect(r.status).toBe(413);
		expect(r.headers['content-type']).toMatch(/^text\/plain/);
		expect(r.text).toBe('Request Entity Too Large');
		expect(r.text).not.toMatch(/\d/);
		expect(strict.tasks.size).toBe(0);
	});

	test('strict: an explicit maxBatchSize option still wins over the profile', async () => {
		const s = await start({ profile: 'strict', maxBatchSize: 3 });
		expect((await call(s, 'POST', '/tasks/batch', { items: items(3) })).status).toBe(200);
		expect((await call(s, 'PATCH', '/tasks/batch', { items: items(4) })).status).toBe(413);
	});

	test('lenient: 1000 is the default limit and too many items is 422 naming it', async () => {
		const r = await call(lenient, 'POST', '/tasks/batch', { items: items(1001) });
		expect(r.status).toBe(422);
		expect(r.json.detail[0].msg).toBe('ensure this value has at most 1000 items');
	});
});

describe('listParams (spec 4.2 rule 3: filters on custom fields by name; other parameter names not shown)', () => {
	beforeEach(() => {
		strict.seedTasks(4, (i) => ({
			uid: UID(i + 1),
			status: i === 0 ? 'DONE' : 'TODO',
			archived: i === 3,
			fields: { ticket_id: String(i), ...(i === 1 ? { status: 'DONE' } : {}) },
		}));
	});

	test('strict: status, assignee_uid, order_by, *_after and search filter custom fields of those names', async () => {
		const status = await call(strict, 'GET', '/tasks?status=DONE');
		expect(status.json.items.map((t: Task) => t.uid)).toEqual([UID(2)]); // fields.status, not the task status
		for (const q of [
			'assignee_uid=' + UID(9),
			'order_by=updated_at',
			'order_by=priority',
			'updated_at_after=2000-01-01T00:00:00Z',
			'created_at_after=x',
			'search=Seeded',
		]) {
			const r = await call(strict, 'GET', `/tasks?${q}`);
			expect([q, r.status, r.json.items.length]).toEqual([q, 200, 0]);
		}
	});

	test('strict: archived is a custom-field filter and archived tasks stay hidden', async () => {
		expect((await call(strict, 'GET', '/tasks?archived=true')).json.items).toHaveLength(0);
		expect((await call(strict, 'GET', '/tasks')).json.meta.total_count).toBe(3);
	});

	test('strict: limit, cursor and expand keep their meaning; other names filter fields', async () => {
		const p1 = await call(strict, 'GET', '/tasks?limit=2&expand=assignee');
		expect(p1.json.items.map((t: Task) => t.uid)).toEqual([UID(1), UID(2)]);
		expect(p1.json.items[0]).toHaveProperty('assignee', null);
		const p2 = await call(strict, 'GET', `/tasks?limit=2&cursor=${p1.json.meta.next_cursor}`);
		expect(p2.json.items.map((t: Task) => t.uid)).toEqual([UID(3)]);
		expect(
			(await call(strict, 'GET', '/tasks?ticket_id=2')).json.items.map((t: Task) => t.uid),
		).toEqual([UID(3)]);
	});

	test('lenient: status, archived and order_by are honoured', async () => {
		lenient.seedTasks(2, (i) => ({ status: i === 0 ? 'DONE' : 'TODO', archived: i === 1 }));
		expect((await call(lenient, 'GET', '/tasks?status=DONE')).json.items).toHaveLength(1);
		expect((await call(lenient, 'GET', '/tasks?archived=true')).json.items).toHaveLength(1);
		expect((await call(lenient, 'GET', '/tasks?order_by=priority')).status).toBe(422);
	});
});

describe('queryPaging (facts.md: "No cursor is documented for it" [/tasks/query])', () => {
	test('strict: POST /tasks/query answers one page with meta {limit, total_count} and ignores a cursor', async () => {
		strict.seedTasks(5, (i) => ({ uid: UID(i + 1) }));
		const r = await call(strict, 'POST', '/tasks/query', { condition: {}, limit: 2 });
		expect(r.status).toBe(200);
		expect(r.json.meta).toEqual({ limit: 2, total_count: 5 });
		expect(r.json.items.map((t: Task) => t.uid)).toEqual([UID(1), UID(2)]);
		const lenientCursor = (
			await (async () => {
				lenient.seedTasks(5);
				return call(lenient, 'POST', '/tasks/query', { limit: 2 });
			})()
		).json.meta.next_cursor as string;
		const again = await call(strict, 'POST', `/tasks/query?cursor=${lenientCursor}`, { limit: 2 });
		expect(again.json.items.map((t: Task) => t.uid)).toEqual([UID(1), UID(2)]);
		expect((await call(strict, 'POST', '/tasks/query?cursor=garbage', { limit: 2 })).status).toBe(
			200,
		);
	});

	test('lenient: POST /tasks/query pages with cursors', async () => {
		lenient.seedTasks(3);
		const r = await call(lenient, 'POST', '/tasks/query', { limit: 2 });
		expect(r.json.meta.next_cursor).not.toBe('');
		expect(typeof r.json.meta.self_cursor).toBe('string');
	});
});

describe('queryLimitFrom and queryMaxLimit (spec 4.3: limit is a body property; spec 8: maximum limit not shown)', () => {
	test('strict: POST /tasks/query reads limit only from the body', async () => {
		strict.seedTasks(5);
		expect((await call(strict, 'POST', '/tasks/query?limit=1', {})).json.items).toHaveLength(5);
		expect(
			(await call(strict, 'POST', '/tasks/query?limit=1', { limit: 3 })).json.items,
		).toHaveLength(3);
		expect((await call(strict, 'POST', '/tasks/query?limit=abc', { limit: 2 })).status).toBe(200);
		lenient.seedTasks(5);
		expect(
			(await call(lenient, 'POST', '/tasks/query?limit=1', { limit: 3 })).json.items,
		).toHaveLength(1);
	});

	test('strict: POST /tasks/query clamps limit to 50 silently', async () => {
		strict.seedTasks(60);
		const r = await call(strict, 'POST', '/tasks/query', { limit: 80 });
		expect(r.status).toBe(200);
		expect(r.json.items).toHaveLength(50);
		expect(r.json.meta).toEqual({ limit: 50, total_count: 60 });
		const s = await alone({ queryMaxLimit: 4 });
		s.seedTasks(6);
		const q = await call(s, 'POST', '/tasks/query', { limit: 10 });
		expect(q.json.items).toHaveLength(4);
		expect(q.json.meta.limit).toBe(4);
		expect((await call(s, 'GET', '/tasks?limit=10')).json.items).toHaveLength(6); // lists keep maxPageSize
	});

	test('lenient: POST /tasks/query clamps to maxPageSize (100)', async () => {
		lenient.seedTasks(120);
		expect((await call(lenient, 'POST', '/tasks/query', { limit: 500 })).json.items).toHaveLength(
			100,
		);
	});
});

describe('typeComparison (spec 2.3: "No type validation is done; the caller keeps types consistent")', () => {
	const seed = (s: Simulator): void => {
		s.seedTasks(4, (i) => ({
			uid: UID(i + 1),
			fields: [
				{ n: 1, flag: true, tags: [1], at: '2024-01-01T01:00:00+01:00' },
				{ n: '1', flag: 'true', tags: ['1'], at: '2024-01-01T00:00:00.000Z' },
				{ n: 2, flag: false, tags: [], at: '2024-02-01T00:00:00Z' },
				{ n: '10', flag: 'false', tags: [], at: 'soon' },
			][i],
		}));
	};
	const uids = async (s: Simulator, condition: unknown): Promise<string[]> => {
		const r = await call(s, 'POST', '/tasks/query', { condition });
		expect(r.status).toBe(200);
		return r.json.items.map((t: Task) => t.uid);
	};

	test('strict: query conditions compare JSON types (1 is not "1", true is not "true")', async () => {
		seed(strict);
		expect(await uids(strict, { field: 'fields.n', operator: '==', value: 1 })).toEqual([UID(1)]);
		expect(await uids(strict, { field: 'fields.n', operator: '==', value: '1' })).toEqual([UID(2)]);
		expect(await uids(strict, { field: 'fields.flag', operator: '==', value: true })).toEqual([
			UID(1),
		]);
		expect(await uids(strict, { field: 'fields.n', operator: 'in', value: [1, 2] })).toEqual([
			UID(1),
			UID(3),
		]);
		expect(await uids(strict, { field: 'fields.n', operator: '>', value: 1 })).toEqual([UID(3)]); // "10" is a string
		expect(await uids(strict, { field: 'fields.tags', operator: 'contains', value: 1 })).toEqual([
			UID(1),
		]);
		expect(await uids(strict, { field: 'fields.n', operator: '!=', value: 1 })).toEqual([
			UID(2),
			UID(3),
			UID(4),
		]);
	});

	test('strict: date-time strings still compare as instants', async () => {
		seed(strict);
		expect(
			await uids(strict, { field: 'fields.at', operator: '==', value: '2024-01-01T00:00:00Z' }),
		).toEqual([UID(1), UID(2)]);
		expect(
			await uids(strict, { field: 'fields.at', operator: '>', value: '2024-01-15T00:00:00Z' }),
		).toEqual([UID(3), UID(4)]); // "soon" > by text
	});

	test('strict: GET /tasks custom-field filters still compare as strings (a query string has no types)', async () => {
		seed(strict);
		expect((await call(strict, 'GET', '/tasks?n=1')).json.items.map((t: Task) => t.uid)).toEqual([
			UID(1),
			UID(2),
		]);
		expect(
			(await call(strict, 'GET', '/tasks?flag=true')).json.items.map((t: Task) => t.uid),
		).toEqual([UID(1), UID(2)]);
	});

	test('lenient: "1" equals 1 and "true" equals true', async () => {
		seed(lenient);
		expect(await uids(lenient, { field: 'fields.n', operator: '==', value: 1 })).toEqual([
			UID(1),
			UID(2),
		]);
		expect(await uids(lenient, { field: 'fields.flag', operator: '==', value: 'true' })).toEqual([
			UID(1),
			UID(2),
		]);
	});
});

describe('duplicateUids (spec 4.2 rule 8: bodies for POST and PATCH on /tasks/batch not shown)', () => {
	test('strict: a batch carrying the same uid twice is 422 for the later occurrence and writes nothing', async () => {
		const s = await alone({ duplicateUids: 'reject' });
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'a' } });
		await call(s, 'PUT', `/tasks/${UID(4)}`, { fields: { title: 'd' } });
		for (const method of ['PUT', 'PATCH', 'POST']) {
			const again = method === 'PATCH' ? UID(1) : UID(2); // PATCH needs existing tasks
			const items = [
				{ uid: again, fields: { title: 'x' } },
				{ uid: method === 'POST' ? UID(3) : UID(4), fields: { title: 'y' } },
				{ uid: again.toUpperCase(), fields: { title: 'z' } },
			];
			const r = await call(s, method, '/tasks/batch', { items });
			expect([method, r.status]).toEqual([method, 422]);
			const dup = {
				loc: ['body', 'items', 2, 'uid'],
				msg: 'duplicate uid in batch',
				type: 'value_error.duplicate',
			};
			expect(r.json.detail).toEqual([dup]);
		}
		expect([...s.tasks.keys()]).toEqual([UID(1), UID(4)]);
		expect(s.tasks.get(UID(1))?.fields.title).toBe('a');
	});

	test('strict profile: the duplicate batch is refused with its message', async () => {
		const r = await call(strict, 'PUT', '/tasks/batch', {
			items: [
				{ uid: UID(1), fields: { title: 'x' } },
				{ uid: UID(1), fields: { title: 'y' } },
			],
		});
		expect(r.status).toBe(422);
		expect(r.json.detail).toContain('duplicate uid in batch');
		expect(strict.tasks.size).toBe(0);
	});

	test('lenient: the same uid twice in one batch is applied in order', async () => {
		const r = await call(lenient, 'PUT', '/tasks/batch', {
			items: [
				{ uid: UID(1), fields: { title: 'x' } },
				{ uid: UID(1), fields: { title: 'y' } },
			],
		});
		expect(r.status).toBe(200);
		expect(lenient.tasks.get(UID(1))?.fields.title).toBe('y');
	});
});

describe('unknownKeys (spec 2.2: internal_* timestamps, time metrics, child counters and expansions "are not accepted in bodies")', () => {
	test('strict: read-only and unknown keys in a task body are 422 naming them', async () => {
		const s = await alone({ unknownKeys: 'reject' });
		const r = await call(s, 'POST', '/tasks', {
			fields: { title: 'x', anything: 1 },
			num_children: 9,
			internal_created_at: '2000-01-01T00:00:00Z',
			comments: [],
			priority: 'high',
		});
		expect(r.status).toBe(422);
		expect(r.json.detail.map((d: { loc: unknown[] }) => d.loc.join('.')).sort()).toEqual([
			'body.comments',
			'body.internal_created_at',
			'body.num_children',
			'body.priority',
		]);
		expect(r.json.detail.find((d: { loc: string[] }) => d.loc[1] === 'num_children')).toMatchObject(
			{
				msg: 'read-only field is not accepted in a body',
				type: 'value_error.extra',
			},
		);
		expect(r.json.detail.find((d: { loc: string[] }) => d.loc[1] === 'priority').msg).toBe(
			'extra fields not permitted',
		);
		expect(s.tasks.size).toBe(0);
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } });
		expect((await call(s, 'PATCH', `/tasks/${UID(1)}`, { queue_time: 5 })).status).toBe(422);
		const b = await call(s, 'PUT', '/tasks/batch', {
			items: [{ uid: UID(2), fields: { title: 'u' }, wait_time: 3 }],
		});
		expect(b.json.detail[0].loc).toEqual(['body', 'items', 0, 'wait_time']);
	});

	test('strict profile: a whole task echoed back (GET then PUT) is refused', async () => {
		const t = (await call(strict, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } }))
			.json as Task;
		const r = await call(strict, 'PUT', `/tasks/${UID(1)}`, t);
		expect(r.status).toBe(422);
		expect(r.json.detail).toContain('body.internal_updated_at');
	});

	test('lenient: unknown and read-only keys are dropped silently', async () => {
		const r = await call(lenient, 'POST', '/tasks', {
			fields: { title: 'x' },
			num_children: 9,
			priority: 'high',
		});
		expect(r.status).toBe(200);
		expect(r.json.num_children).toBe(0);
		expect(r.json).not.toHaveProperty('priority');
	});
});

describe('updatedAt (spec 2.2: when updated_at moves is not shown)', () => {
	test('strict: every accepted write moves updated_at, even when nothing changed', async () => {
		const created = (
			await call(strict, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' }, status: 'DONE' })
		).json as Task;
		const patched = (await call(strict, 'PATCH', `/tasks/${UID(1)}`, { status: 'DONE' }))
			.json as Task;
		const put = (await call(strict, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } }))
			.json as Task;
		const batch = (
			await call(strict, 'PATCH', '/tasks/batch', {
				items: [{ uid: UID(1), fields: { title: 't' } }],
			})
		).json.items[0] as Task;
		const stamps = [created, patched, put, batch].map((t) => Date.parse(t.updated_at));
		for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]);
		expect({ ...batch, updated_at: '', internal_updated_at: '' }).toEqual({
			...created,
			updated_at: '',
			internal_updated_at: '',
		});
	});

	test('everyWrite set alone: a no-op PUT (spec 4.2 rule 1) still writes nothing', async () => {
		const s = await alone({ updatedAt: 'everyWrite' });
		const first = (await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } }))
			.json as Task;
		expect(
			(await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } })).json.updated_at,
		).toBe(first.updated_at);
		expect((await call(s, 'PATCH', `/tasks/${UID(1)}`, {})).json.updated_at).not.toBe(
			first.updated_at,
		);
	});

	test('lenient: updated_at stays when a write changes nothing', async () => {
		const first = (await call(lenient, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 't' } }))
			.json as Task;
		expect(
			(await call(lenient, 'PATCH', `/tasks/${UID(1)}`, { fields: { title: 't' } })).json
				.updated_at,
		).toBe(first.updated_at);
	});
});

describe('batchStamp (spec 4.2: batch semantics not shown)', () => {
	test('strict: every task written by one batch request gets the same updated_at, and later writes are later', async () => {
		const r = await call(strict, 'PUT', '/tasks/batch', {
			items: [1, 2, 3].map((n) => ({ uid: UID(n), fields: { title: `t${n}` } })),
		});
		const stamps = new Set(r.json.items.map((t: Task) => t.updated_at));
		expect(stamps.size).toBe(1);
		const [stamp] = [...stamps] as string[];
		const next = (await call(strict, 'PATCH', `/tasks/${UID(2)}`, { status: 'DONE' })).json as Task;
		expect(Date.parse(next.updated_at)).toBeGreaterThan(Date.parse(stamp));
		const again = await call(strict, 'PATCH', '/tasks/batch', {
			items: [1, 3].map((n) => ({ uid: UID(n), status: 'STARTED' })),
		});
		expect(again.json.items[0].updated_at).toBe(again.json.items[1].updated_at);
		expect(Date.parse(again.json.items[0].updated_at)).toBeGreaterThan(Date.parse(next.updated_at));
	});

	test('lenient: each item of a batch gets its own, strictly increasing updated_at', async () => {
		const r = await call(lenient, 'PUT', '/tasks/batch', {
			items: [1, 2, 3].map((n) => ({ uid: UID(n), fields: { title: `t${n}` } })),
		});
		const stamps = r.json.items.map((t: Task) => Date.parse(t.updated_at));
		expect(stamps[1]).toBeGreaterThan(stamps[0]);
		expect(stamps[2]).toBeGreaterThan(stamps[1]);
	});
});

describe('errorBodies (spec 7: "Shape of the error response body: not shown")', () => {
	test('strict: 422 is {"detail": "<one string>"} without per-item loc arrays', async () => {
		const r = await call(strict, 'POST', '/tasks', { fields: { url: 'u' }, status: 'OPEN' });
		expect(r.status).toBe(422);
		expect(Object.keys(r.json)).toEqual(['detail']);
		expect(typeof r.json.detail).toBe('string');
		expect(r.json.detail).toContain('field required');
	});

	test('strict: 400, 404 and 409 are {"error": {"message": ...}}', async () => {
		const notFound = await call(strict, 'GET', `/tasks/${UID(1)}`);
		expect(notFound.status).toBe(404);
		expect(notFound.json).toEqual({ error: { message: `Task ${UID(1)} not found` } });
		const badJson = await call(strict, 'POST', '/tasks', undefined, '{"fields":');
		expect(badJson.status).toBe(400);
		expect(badJson.json).toEqual({ error: { message: 'Invalid JSON body' } });
		const s = await alone({ errorBodies: 'varied' }); // postExisting stays 'conflict' here
		await call(s, 'POST', '/tasks', { uid: UID(1), fields: { title: 'a' } });
		const conflict = await call(s, 'POST', '/tasks', { uid: UID(1), fields: { title: 'a' } });
		expect(conflict.status).toBe(409);
		expect(conflict.json).toEqual({ error: { message: `Task ${UID(1)} already exists` } });
	});

	test('strict: 429 and 5xx have text/plain bodies; a scripted body is sent as given', async () => {
		const s = await start({ profile: 'strict', requestsPerWindow: 1 });
		expect((await call(s, 'GET', '/tasks')).status).toBe(200);
		const limited = await call(s, 'GET', '/tasks');
		expect(limited.status).toBe(429);
		expect(limited.headers['content-type']).toMatch(/^text\/plain/);
		expect(limited.text).toBe('Too many requests: limit is 1 per window');
		expect(limited.headers['retry-after']).toBeUndefined(); // retryAfterOnLimit: false under both profiles
		s.configure({ requestsPerWindow: 0 });
		s.failNext({ status: 503 }, { status: 502, body: { message: 'as scripted' } });
		const unavailable = await call(s, 'GET', '/tasks');
		expect([unavailable.status, unavailable.headers['content-type'], unavailable.text]).toEqual([
			503,
			'text/plain; charset=utf-8',
			'Scripted 503',
		]);
		const scripted = await call(s, 'GET', '/tasks');
		expect([scripted.status, scripted.json]).toEqual([502, { message: 'as scripted' }]);
		s.configure({ faults: { error5xxRate: 1 } });
		const random = await call(s, 'GET', '/tasks');
		expect(random.status).toBeGreaterThanOrEqual(500);
		expect(random.text).toMatch(/^Simulated 50\d /);
	});

	test('lenient: errors are JSON {"message"} and 422 FastAPI details', async () => {
		expect((await call(lenient, 'GET', `/tasks/${UID(1)}`)).json).toEqual({
			message: `Task ${UID(1)} not found`,
		});
		expect((await call(lenient, 'POST', '/tasks', { fields: {} })).json.detail[0].loc).toEqual([
			'body',
			'fields',
			'title',
		]);
	});
});

describe('queryOperators (spec 4.3: only the operator "==" and the combinator "and" are shown)', () => {
	test('documented (set alone): "in", ">" and "or" are a 422 naming the operator; "==" under "and" is answered', async () => {
		const s = await alone({ queryOperators: 'documented' });
		await call(s, 'PUT', `/tasks/${UID(1)}`, { fields: { title: 'a' } });
		for (const condition of [
			{ field: 'uid', operator: 'in', value: [UID(1)] },
			{ field: 'uid', operator: '>', value: UID(0) },
			{ combinator: 'or', conditions: [{ field: 'uid', operator: '==', value: UID(1) }] },
		]) {
			const refused = await call(s, 'POST', '/tasks/query', { condition });
			expect(refused.status).toBe(422);
			expect(JSON.stringify(refused.json)).toMatch(/permitted: '(==|and)'/);
		}
		const answered = await call(s, 'POST', '/tasks/query', {
			condition: {
				combinator: 'and',
				conditions: [{ field: 'uid', operator: '==', value: UID(1) }],
			},
		});
		expect(answered.status).toBe(200);
		expect(answered.json.items.map((task: { uid: string }) => task.uid)).toEqual([UID(1)]);
	});

	test('both profiles answer every operator the node uses (the documented-only reading is set alone)', () => {
		expect(readingsFor({ profile: 'lenient' }).queryOperators).toBe('all');
		expect(readingsFor({ profile: 'strict' }).queryOperators).toBe('all');
	});
});
