import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { BacklogClient, Page } from './client';

/** Page size asked of POST /tasks/query; a server may clamp it silently, which the paging below copes with. */
export const QUERY_PAGE_SIZE = 100;

/**
 * uids per bulk read to start with: a `uid in [...]` body of about 400 KB, so 10,000 writes cost one read (two with
 * the archived ones). A server that refuses the body as too large (413) gets half as many, kept for the run.
 */
export const UIDS_PER_READ = 10_000;

export interface TaskQuery {
	/** The query body (spec 4.3) without `limit`, which the paging sets. */
	body: IDataObject;
	/** Query parameter `archived` (spec 4.2): false (the default) hides archived tasks, true shows only them. */
	archived?: boolean;
	/** At most this many tasks; Infinity for every match. */
	maxItems?: number;
	/** Stop after the page for which this returns true (its tasks are returned): the caller has seen enough. */
	stopAfter?: (page: IDataObject[]) => boolean;
	itemIndex?: number;
}

type Sort = { field: string; direction?: string };

const BY_UID: Sort[] = [{ field: 'uid', direction: 'ascending' }];

function and(condition: IDataObject | undefined, extra: IDataObject): IDataObject {
	if (!condition || Object.keys(condition).length === 0) return extra;
	return { combinator: 'and', conditions: [condition, extra] };
}

function fieldValue(task: IDataObject, path: string): unknown {
	let current: unknown = task;
	for (const part of path.split('.')) {
		if (!current || typeof current !== 'object') return undefined;
		current = (current as IDataObject)[part];
	}
	// A bare custom field name (the service resolves `ticket_id` as `fields.ticket_id` too).
	if (current === undefined && !path.includes('.')) return ((task.fields ?? {}) as IDataObject)[path];
	return current;
}

function compare(a: unknown, b: unknown): number {
	if (a === b) return 0;
	if (a === undefined || a === null) return -1;
	if (b === undefined || b === null) return 1;
	if (typeof a === 'number' && typeof b === 'number') return a - b;
	const [x, y] = [typeof a === 'object' ? JSON.stringify(a) : String(a), typeof b === 'object' ? JSON.stringify(b) : String(b)];
	return x < y ? -1 : x > y ? 1 : 0;
}

/** Our side of the user's sorts, for results gathered in uid order. */
function sortLocally(tasks: IDataObject[], sorts: Sort[]): IDataObject[] {
	return [...tasks].sort((a, b) => {
		for (const { field, direction } of sorts) {
			const order = compare(fieldValue(a, field), fieldValue(b, field));
			if (order !== 0) return direction === 'descending' ? -order : order;
		}
		return compare(a.uid, b.uid);
	});
}

/**
 * Every task a query matches (or the first `maxItems`), on any server the spec allows.
 *
 * The spec documents no cursor for /tasks/query, nor where its `limit` goes, nor its maximum. So `limit` goes in
 * the body and the query string; when the answer carries `meta.self_cursor` the cursors are followed (spec 4.1).
 * Otherwise the pages are cut by uid ("keyset"): sorted by uid, each next request asks for `uid > last`, until a
 * page comes back empty. An answer shorter than asked proves nothing there, since the server may clamp `limit`
 * without saying so. With sorts of its own, a query that needs more than its first page is read in uid order and
 * sorted here.
 */
export async function queryTasks(client: BacklogClient, query: TaskQuery): Promise<IDataObject[]> {
	const maxItems = query.maxItems ?? Infinity;
	const body: IDataObject = { ...query.body };
	delete body.limit;
	const userSorts = (Array.isArray(body.sorts) ? body.sorts : []) as Sort[];
	const qsBase: IDataObject = { archived: query.archived === true };
	let stopped = false;
	const send = async (pageBody: IDataObject, cursor?: string, limit = Math.min(QUERY_PAGE_SIZE, maxItems)) => {
		const qs: IDataObject = { ...qsBase, limit };
		if (cursor) qs.cursor = cursor;
		// A query reads: sending it twice changes nothing, so it is retried like a GET.
		const page = await client.request<Page>({
			method: 'POST',
			path: '/tasks/query',
			qs,
			body: { ...pageBody, limit },
			idempotent: true,
			itemIndex: query.itemIndex,
		});
		const items = Array.isArray(page?.items) ? page.items : [];
		stopped = query.stopAfter?.(items) === true;
		return { items, meta: page?.meta };
	};

	const first = await send(userSorts.length > 0 ? body : { ...body, sorts: BY_UID });
	const all = [...first.items];
	if (first.meta?.self_cursor) {
		// The endpoint paginates after all: follow its cursors (a repeated one would loop forever).
		const seen = new Set<string>();
		let next = first.meta.next_cursor;
		while (next && all.length < maxItems && !seen.has(next) && !stopped) {
			seen.add(next);
			const page = await send(userSorts.length > 0 ? body : { ...body, sorts: BY_UID }, next);
			if (page.items.length === 0) break;
			all.push(...page.items);
			next = page.meta?.next_cursor;
		}
		return all.slice(0, maxItems);
	}
	if (stopped || all.length === 0 || all.length >= maxItems) return all.slice(0, maxItems);

	// No cursor and possibly more: page by uid.
	const byUid = userSorts.length > 0 ? [] : all;
	let last = byUid.length > 0 ? String(byUid[byUid.length - 1].uid) : undefined;
	checkUidOrder(client, byUid, query.itemIndex);
	while (!stopped && (userSorts.length > 0 || byUid.length < maxItems)) {
		const condition = last === undefined ? (body.condition as IDataObject | undefined) : and(body.condition as IDataObject, { field: 'uid', operator: '>', value: last });
		const page = await send({ ...body, condition, sorts: BY_UID }, undefined, userSorts.length > 0 ? QUERY_PAGE_SIZE : undefined);
		if (page.items.length === 0) break;
		checkUidOrder(client, page.items, query.itemIndex, last);
		byUid.push(...page.items);
		last = String(page.items[page.items.length - 1].uid);
	}
	return (userSorts.length > 0 ? sortLocally(byUid, userSorts) : byUid).slice(0, maxItems);
}

/** Paging by uid is only sound if the server sorted by uid; otherwise say so instead of returning a partial list. */
function checkUidOrder(client: BacklogClient, items: IDataObject[], itemIndex?: number, after?: string) {
	let previous = after;
	for (const task of items) {
		const uid = String(task.uid);
		if (previous !== undefined && !(uid > previous)) {
			throw new NodeOperationError(
				client.ctx.getNode(),
				'The service returned more /tasks/query results than one page, without a cursor and without sorting by uid, so the rest cannot be read reliably',
				{
					itemIndex,
					description: 'Narrow the query (add conditions) so its results fit in one page, or set a Limit.',
				},
			);
		}
		previous = uid;
	}
}

/** uids per bulk read the server accepted, per client (one run): its body limit is not documented. */
const acceptedUidsPerRead = new WeakMap<BacklogClient, number>();

/** Clients whose server cannot read tasks by `uid in [...]` (it refused that query, or ignored the condition). */
const readsOneByOne = new WeakSet<BacklogClient>();

const hasStatus = (error: unknown, ...statuses: string[]) =>
	error instanceof NodeApiError && statuses.includes(String(error.httpCode));

/**
 * The current state of the tasks with these uids, archived or not. The writes use it to keep custom fields a server
 * would otherwise replace, and Create to refuse a uid that is taken: a uid missing from it is taken to be free, so it
 * must be complete.
 *
 * One uid is read with GET /tasks/{uid}, which finds it archived or not in one request. More are read with one
 * `uid in [...]` query per UIDS_PER_READ uids, and one more for the archived ones among those not found. The spec
 * documents only `==` for /tasks/query: a server that refuses `in` (400, 422), ignores it (answers with tasks not
 * asked for) or misses tasks it has (a task the query did not return is found by GET) is read one task at a time
 * with GET /tasks/{uid} instead, for the rest of the run. Slower, never wrong: a task taken for absent would be
 * created with PUT, which replaces it on a server that reads PUT as a replace.
 */
export async function readTasksByUid(client: BacklogClient, uids: string[], itemIndex?: number): Promise<Map<string, IDataObject>> {
	const unique = [...new Set(uids)];
	if (unique.length > 1 && !readsOneByOne.has(client)) {
		const found = await readByCondition(client, unique, itemIndex);
		if (found && (await confirmedAbsent(client, unique, found, itemIndex))) return found;
		readsOneByOne.add(client);
	}
	return await readOneByOne(client, unique, itemIndex);
}

/**
 * Whether the query's "not found" holds: the last uid it did not return is looked up with GET (one request). A server
 * that answers `{items: []}` to a condition it does not apply, or applies only the start of a long list, would
 * otherwise make those writes creates.
 */
async function confirmedAbsent(client: BacklogClient, unique: string[], found: Map<string, IDataObject>, itemIndex?: number): Promise<boolean> {
	const missing = [...unique].reverse().find((uid) => !found.has(uid));
	if (missing === undefined) return true;
	return (await readOneByOne(client, [missing], itemIndex)).size === 0;
}

/** The tasks by `uid in [...]`; undefined when the server does not take that condition. */
async function readByCondition(client: BacklogClient, unique: string[], itemIndex?: number): Promise<Map<string, IDataObject> | undefined> {
	const found = new Map<string, IDataObject>();
	for (const archived of [false, true]) {
		const missing = unique.filter((uid) => !found.has(uid));
		let start = 0;
		while (start < missing.length) {
			const size = acceptedUidsPerRead.get(client) ?? UIDS_PER_READ;
			const chunk = missing.slice(start, start + size);
			const wanted = new Set(chunk);
			const condition = { field: 'uid', operator: 'in', value: chunk };
			// At most one task per uid: once as many came back as were asked for, no page can follow.
			// A task not asked for means the server ignored the condition: no need to read further.
			const notAsked = (page: IDataObject[]) => page.some((task) => !wanted.has(String(task.uid).toLowerCase()));
			const read = queryTasks(client, { body: { condition }, archived, maxItems: chunk.length, stopAfter: notAsked, itemIndex });
			// A 413 asks for fewer uids, a 400 or 422 says the query is not understood; any other failure rejects as it
			// came (returning the rejected read).
			const tasks = await read.catch((error: unknown): IDataObject[] | NodeApiError | Promise<IDataObject[]> =>
				(hasStatus(error, '413') && chunk.length > 1) || hasStatus(error, '400', '422') ? (error as NodeApiError) : read,
			);
			if (tasks instanceof NodeApiError) {
				if (!hasStatus(tasks, '413')) return undefined;
				acceptedUidsPerRead.set(client, Math.ceil(chunk.length / 2));
				continue;
			}
			for (const task of tasks) {
				const uid = String(task.uid).toLowerCase();
				if (!wanted.has(uid)) return undefined;
				found.set(uid, task);
			}
			start += chunk.length;
		}
	}
	return found;
}

/** The tasks by GET /tasks/{uid} (archived or not), a 404 meaning there is none. */
async function readOneByOne(client: BacklogClient, unique: string[], itemIndex?: number): Promise<Map<string, IDataObject>> {
	const found = new Map<string, IDataObject>();
	for (const uid of unique) {
		const read = client.request<IDataObject>({ method: 'GET', path: `/tasks/${uid}`, itemIndex });
		const task = await read.catch((error: unknown) => (hasStatus(error, '404') ? undefined : read));
		if (task && String(task.uid).toLowerCase() === uid) found.set(uid, task);
	}
	return found;
}
