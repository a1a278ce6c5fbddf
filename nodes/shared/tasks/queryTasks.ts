import type { IDataObject, NodeApiError } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient, Page } from '../transport/client';
import { hasStatus } from '../transport/errors';

/** Page size asked of POST /tasks/query; a server may clamp it silently, which the paging below copes with. */
export const QUERY_PAGE_SIZE = 100;

export interface TaskQuery {
	/** The query body (spec 4.3) without `limit`, which the paging sets. */
	body: IDataObject;
	/** Query parameter `archived` (spec 4.2): false (the default) hides archived tasks, true shows only them. */
	archived?: boolean;
	/** At most this many tasks; Infinity for every match. */
	maxItems?: number;
	/** Stop after the page for which this returns true (its tasks are returned): the caller has seen enough. */
	stopAfter?: (page: IDataObject[]) => boolean;
	/**
	 * The greatest uid the query can match (a `uid in [...]` list): read by uid, a page that reaches it is the last.
	 * Asked for only once a page has come back (a long list's is not worked out before the first request).
	 */
	lastUid?: () => string;
	/** Sees each page's `meta` (cursors, total_count) before `stopAfter` sees its tasks. */
	onMeta?: (meta: Page['meta']) => void;
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
	if (current === undefined && !path.includes('.'))
		return ((task.fields ?? {}) as IDataObject)[path];
	return current;
}

function compare(a: unknown, b: unknown): number {
	if (a === b) return 0;
	if (a === undefined || a === null) return -1;
	if (b === undefined || b === null) return 1;
	if (typeof a === 'number' && typeof b === 'number') return a - b;
	const [x, y] = [
		typeof a === 'object' ? JSON.stringify(a) : String(a),
		typeof b === 'object' ? JSON.stringify(b) : String(b),
	];
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
 * page comes back empty, or reaches the greatest uid the query can match (`lastUid`). An answer shorter than asked
 * proves nothing there, since the server may clamp `limit` without saying so. With sorts of its own, a query that
 * needs more than its first page is read in uid order and sorted here.
 */
export async function queryTasks(client: BacklogClient, query: TaskQuery): Promise<IDataObject[]> {
	const maxItems = query.maxItems ?? Infinity;
	const body: IDataObject = { ...query.body };
	delete body.limit;
	const userSorts = (Array.isArray(body.sorts) ? body.sorts : []) as Sort[];
	const qsBase: IDataObject = { archived: query.archived === true };
	let stopped = false;
	const send = async (
		pageBody: IDataObject,
		cursor?: string,
		limit = Math.min(QUERY_PAGE_SIZE, maxItems),
	) => {
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
		query.onMeta?.(page?.meta);
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
	let greatest: string | undefined;
	const pastLastUid = () =>
		query.lastUid !== undefined &&
		last !== undefined &&
		last.toLowerCase() >= (greatest ??= query.lastUid());
	while (!stopped && !pastLastUid() && (userSorts.length > 0 || byUid.length < maxItems)) {
		const condition =
			last === undefined
				? (body.condition as IDataObject | undefined)
				: and(body.condition as IDataObject, { field: 'uid', operator: '>', value: last });
		const page = await send(
			{ ...body, condition, sorts: BY_UID },
			undefined,
			userSorts.length > 0 ? QUERY_PAGE_SIZE : undefined,
		);
		if (page.items.length === 0) break;
		checkUidOrder(client, page.items, query.itemIndex, last);
		byUid.push(...page.items);
		last = String(page.items[page.items.length - 1].uid);
	}
	return (userSorts.length > 0 ? sortLocally(byUid, userSorts) : byUid).slice(0, maxItems);
}

/**
 * The server answered pages by uid out of uid order (it ignores the sort, or the condition `uid > last`, repeating a
 * page): what follows cannot be read reliably that way. A NodeOperationError, so a caller that has no other way fails
 * with it; the listing (listTasks.ts) catches it and reads through GET /tasks instead.
 */
export class UnsoundPagingError extends NodeOperationError {}

/** Paging by uid is only sound if the server sorted by uid; otherwise say so instead of returning a partial list. */
function checkUidOrder(
	client: BacklogClient,
	items: IDataObject[],
	itemIndex?: number,
	after?: string,
) {
	let previous = after;
	for (const task of items) {
		const uid = String(task.uid);
		if (previous !== undefined && !(uid > previous)) {
			throw new UnsoundPagingError(
				client.ctx.getNode(),
				'The service returned more /tasks/query results than one page, without a cursor and without sorting by uid, so the rest cannot be read reliably',
				{
					itemIndex,
					description:
						'Narrow the query (add conditions) so its results fit in one page, or set a Limit.',
				},
			);
		}
		previous = uid;
	}
}

/** A 400 or 422 to a query: the service does not take one of its conditions (a field, operator or combinator). */
export const refusesCondition = (error: unknown): error is NodeApiError =>
	hasStatus(error, 400, 422);
