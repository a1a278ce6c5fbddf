import type { IDataObject } from 'n8n-workflow';

import { callerState, now } from '../callers/registry';
import type { BacklogClient, Page } from '../transport/client';
import { QUERY_PAGE_SIZE, queryTasks, UnsoundPagingError } from './queryTasks';
import { statusOf } from '../transport/errors';

/** Page size asked of GET /tasks; a server may clamp it silently (its first page says to what). */
export const LIST_PAGE_SIZE = 100;

/**
 * After /tasks/query was found unfit for a listing (refused, paged out of uid order, or selecting other tasks than
 * GET /tasks), the caller's listings use GET /tasks alone for this long, then the query is tried again.
 */
export const QUERY_RETRY_MS = 60 * 60_000;

/**
 * What a caller learnt of the server's two listings (callers/registry.ts, part 'listing'): the tasks a /tasks/query
 * page holds (a server may clamp `limit` without saying so), whether its answers carry cursors (without them a
 * listing by uid ends with an empty page), and when the query was last found unfit for listings.
 */
interface ListingMemory {
	queryPage?: number;
	queryCursors?: boolean;
	queryUnfitAt?: number;
}

export interface TaskListing {
	/** GET /tasks parameters: custom-field equality filters (spec 4.2 rule 3), `expand`, `search`. */
	qs: IDataObject;
	/**
	 * The same selection as a /tasks/query body (a `condition`, `expand`), or absent when GET /tasks alone has the
	 * filter (a full-text search): then GET /tasks is the listing.
	 */
	query?: IDataObject;
	itemIndex?: number;
}

async function listingMemory(client: BacklogClient): Promise<ListingMemory> {
	return callerState(await client.callerKey()).part('listing', () => ({}));
}

/**
 * A refusal of the query itself: a 4xx but 401 (which ends the run), 408 and 429 (retried, then failing as they
 * came). A 400 or 422 says the server does not take a condition or operator; a 403, 404 or 405 that this caller has no
 * /tasks/query to list with.
 */
const refused = (error: unknown) => {
	const status = statusOf(error) ?? 0;
	return status >= 400 && status < 500 && ![401, 408, 429].includes(status);
};

/**
 * Every task a filter selects (not archived), through the endpoint that carries the most tasks per request.
 *
 * The first page is always a GET /tasks page (limit 100): a listing that fits it costs that one request, and it says
 * how many tasks the server puts in a page (it may clamp `limit` silently) and, in `meta.total_count`, how many the
 * filter selects. When more pages follow and a /tasks/query page holds more (100 asked; what the caller learnt of the
 * server's clamp, kept per caller), the rest is read through the query instead, paged by uid (queryTasks.ts): sorted
 * by uid, `uid > last`, or its cursors where it has them. That read stands only when it is sound:
 * - the server took the query (a 400 or 422 says it does not know a condition or operator; a 403, 404 or 405 that
 *   this caller has none to list with),
 * - it paged in uid order (a server that ignores the sort or the condition `uid > last` repeats a page or answers out
 *   of order: UnsoundPagingError), with no task twice,
 * - it selected the same tasks as GET /tasks: the same `total_count` where both give one, as many tasks as GET's
 *   count, and every task of GET's first page among them.
 * Otherwise the GET /tasks listing goes on from its first page's cursor, as it always did, and the caller uses GET
 * /tasks alone for QUERY_RETRY_MS. A query whose first page holds no more than GET's first page is no better: GET goes
 * on, and that page size is kept. Never a partial list: each way reads to its end or fails with the server's error.
 */
export async function listTasks(
	client: BacklogClient,
	listing: TaskListing,
): Promise<IDataObject[]> {
	let meta: Page['meta'];
	const pages = client.pages(
		{ method: 'GET', path: '/tasks', qs: listing.qs, itemIndex: listing.itemIndex },
		LIST_PAGE_SIZE,
		Infinity,
		(pageMeta) => (meta = pageMeta),
	);
	const first = await pages.next();
	const listed: IDataObject[] = first.done === true ? [] : [...first.value];
	const more = listed.length > 0 && Boolean(meta?.self_cursor) && Boolean(meta?.next_cursor);
	if (!more) return listed;
	const total = typeof meta?.total_count === 'number' ? meta.total_count : undefined;
	const memory = await listingMemory(client);
	if (listing.query && queryPays(memory, listed.length, total)) {
		const viaQuery = await listByQuery(client, memory, listing, listed, total);
		if (viaQuery) return viaQuery;
	}
	for await (const page of pages) listed.push(...page);
	return listed;
}

/** Whether reading the rest through /tasks/query costs fewer requests than GET /tasks pages of `listPage` tasks. */
function queryPays(memory: ListingMemory, listPage: number, total?: number): boolean {
	if (memory.queryUnfitAt !== undefined && now() - memory.queryUnfitAt < QUERY_RETRY_MS)
		return false;
	const queryPage = memory.queryPage ?? QUERY_PAGE_SIZE;
	if (queryPage <= listPage) return false;
	if (total === undefined) return true;
	const listRequests = Math.ceil(Math.max(0, total - listPage) / listPage);
	// Without cursors the query's last page is an empty one (a short page proves nothing where limit is clamped).
	const queryRequests = Math.ceil(total / queryPage) + (memory.queryCursors === true ? 0 : 1);
	return queryRequests < listRequests;
}

/** The listing through /tasks/query, or undefined when it is no better or not sound (see listTasks). */
async function listByQuery(
	client: BacklogClient,
	memory: ListingMemory,
	listing: TaskListing,
	firstListed: IDataObject[],
	listTotal?: number,
): Promise<IDataObject[] | undefined> {
	const sizes: number[] = [];
	let cursors = false;
	let queryTotal: number | undefined;
	let verdict: 'no better' | 'unfit' | undefined;
	const unfit = () => {
		memory.queryUnfitAt = now();
		return undefined;
	};
	const read = queryTasks(client, {
		body: listing.query ?? {},
		itemIndex: listing.itemIndex,
		onMeta: (pageMeta) => {
			if (sizes.length > 0) return;
			cursors = Boolean(pageMeta?.self_cursor);
			if (typeof pageMeta?.total_count === 'number') queryTotal = pageMeta.total_count;
		},
		stopAfter: (page) => {
			sizes.push(page.length);
			if (sizes.length > 1) return false;
			// GET's first page had a next one, so the filter selects more than it held.
			if (listTotal !== undefined && queryTotal !== undefined && listTotal !== queryTotal)
				verdict = 'unfit';
			else if (page.length === 0) verdict = 'unfit';
			else if (page.length <= firstListed.length) verdict = 'no better';
			return verdict !== undefined;
		},
	});
	const tasks = await read.catch((error: unknown): IDataObject[] | Promise<IDataObject[]> =>
		error instanceof UnsoundPagingError || refused(error) ? [] : read,
	);
	if (verdict === 'no better') {
		memory.queryPage = sizes[0];
		return undefined;
	}
	if (verdict === 'unfit' || tasks.length === 0) return unfit();
	const uids = new Set(tasks.map((task) => String(task.uid).toLowerCase()));
	if (uids.size !== tasks.length) return unfit();
	if (listTotal !== undefined && tasks.length !== listTotal) return unfit();
	if (firstListed.some((task) => !uids.has(String(task.uid).toLowerCase()))) return unfit();
	// A page followed by one with tasks was full: the server's page size for the query.
	const full = sizes.filter((size, index) => (sizes[index + 1] ?? 0) > 0);
	if (full.length > 0) memory.queryPage = Math.max(...full);
	memory.queryCursors = cursors;
	memory.queryUnfitAt = undefined;
	return tasks;
}
