// Cursor pagination: keyset cursors that carry the sort key of the last item returned.
import { compareValues, sortable } from './query';
import { httpError, isPlainObject } from './helpers';
import type { Page } from './types';

export interface Ordering<T> {
	/** Identifies the ordering, so a cursor taken under another ordering is refused instead of silently misapplied. */
	sig: string;
	key: (item: T) => unknown[];
	dirs: number[];
}

export function cmpKeys(a: unknown[], b: unknown[], dirs: number[]): number {
	for (let i = 0; i < a.length; i++) {
		const an = a[i] === null || a[i] === undefined;
		const bn = b[i] === null || b[i] === undefined;
		if (an !== bn) return an ? 1 : -1; // nulls last in both directions
		const d = compareValues(a[i], b[i]) * (dirs[i] ?? 1);
		if (d !== 0) return d;
	}
	return 0;
}

interface CursorData {
	v: 1;
	s: string;
	o: number;
	k?: unknown[];
}

function encodeCursor(c: CursorData): string {
	return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

function decodeCursor(raw: string, sig: string): CursorData {
	let c: unknown;
	try {
		c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
	} catch {
		throw httpError(400, 'Invalid cursor');
	}
	if (
		!isPlainObject(c) ||
		c.v !== 1 ||
		typeof c.s !== 'string' ||
		!Number.isInteger(c.o) ||
		(c.o as number) < 0 ||
		(c.k !== undefined && !Array.isArray(c.k))
	) {
		throw httpError(400, 'Invalid cursor');
	}
	if (c.s !== sig) throw httpError(400, 'Invalid cursor: it was issued for another ordering');
	return c as unknown as CursorData;
}

/**
 * Sorts and cuts one page. The cursor carries the sort key of the last item already returned (keyset), so inserts
 * and deletes between pages neither repeat nor skip items; the offset is only a fallback for the first page.
 */
/**
 * The first page without sorting everything: the `limit` smallest keys, kept in order as they are met. A listing paged
 * by a condition (uid > the last uid read) asks for a first page every time: a full sort per page made a 50,000-task
 * listing cost the simulator over a minute. Keys end with the uid, so no two are equal and the page is the sorted one.
 */
function firstPage<T>(
	keyed: Array<{ item: T; key: unknown[]; sk: unknown[] }>,
	ordering: Ordering<T>,
	limit: number,
): Page<T> {
	const best: typeof keyed = [];
	for (const entry of keyed) {
		if (best.length === limit && cmpKeys(entry.sk, best[limit - 1].sk, ordering.dirs) >= 0)
			continue;
		let lo = 0;
		let hi = best.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (cmpKeys(best[mid].sk, entry.sk, ordering.dirs) > 0) hi = mid;
			else lo = mid + 1;
		}
		best.splice(lo, 0, entry);
		if (best.length > limit) best.pop();
	}
	return {
		items: best.map((entry) => entry.item),
		meta: {
			limit,
			self_cursor: encodeCursor({ v: 1, s: ordering.sig, o: 0 }),
			prev_cursor: '',
			next_cursor: encodeCursor({ v: 1, s: ordering.sig, o: limit, k: best[limit - 1].key }),
			total_count: keyed.length,
		},
	};
}

export function paginate<T>(
	all: T[],
	ordering: Ordering<T>,
	limit: number,
	cursor: string | undefined,
): Page<T> {
	const keyed = all.map((item) => {
		const key = ordering.key(item).map((v) => (v === undefined ? null : v));
		return { item, key, sk: key.map(sortable) };
	});
	if (!cursor && limit > 0 && limit < keyed.length) return firstPage(keyed, ordering, limit);
	keyed.sort((a, b) => cmpKeys(a.sk, b.sk, ordering.dirs));
	let start = 0;
	if (cursor) {
		const c = decodeCursor(cursor, ordering.sig);
		if (c.k) {
			const ck = c.k.map(sortable);
			let lo = 0;
			let hi = keyed.length;
			while (lo < hi) {
				const mid = (lo + hi) >>> 1;
				if (cmpKeys(keyed[mid].sk, ck, ordering.dirs) > 0) hi = mid;
				else lo = mid + 1;
			}
			start = lo;
		} else {
			start = Math.min(c.o, keyed.length);
		}
	}
	const at = (i: number): string =>
		encodeCursor(
			i === 0
				? { v: 1, s: ordering.sig, o: 0 }
				: { v: 1, s: ordering.sig, o: i, k: keyed[i - 1].key },
		);
	const end = Math.min(start + limit, keyed.length);
	return {
		items: keyed.slice(start, end).map((k) => k.item),
		meta: {
			limit,
			self_cursor: at(start),
			prev_cursor: start > 0 ? at(Math.max(0, start - limit)) : '',
			next_cursor: end < keyed.length ? at(end) : '',
			total_count: keyed.length,
		},
	};
}
