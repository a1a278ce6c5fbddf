import type { IDataObject } from 'n8n-workflow';

/**
 * The service's stamps of a change (spec 2.2): `updated_at`, which a caller may write, and `internal_updated_at`
 * ("date-time or null"), which it may not. Read by the Poll Trigger's windows and by Sync Backlog's read of what
 * changed since its last run.
 */

/**
 * How a time condition is asked. `internal`: a task read carried internal_updated_at, so the condition asks for tasks
 * whose updated_at or internal_updated_at is in it (a caller may write an old updated_at). `updated`: no task read had
 * it yet: updated_at alone, until one does. `refused`: the query refused a condition on internal_updated_at:
 * updated_at alone, for good. Absent: nothing read could tell yet (as `updated`).
 */
export type Stamps = 'internal' | 'updated' | 'refused';

/** [milliseconds since the epoch, digits below the millisecond as nanoseconds]: the API may send microseconds. */
export type Instant = [number, number];

export function instant(value: unknown): Instant | undefined {
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	const text = value.trim();
	const match = /^(.*T\d{2}:\d{2}:\d{2})[.,](\d+)(.*)$/.exec(text);
	if (!match) {
		const ms = Date.parse(text);
		return Number.isNaN(ms) ? undefined : [ms, 0];
	}
	const [, head, fraction, zone] = match;
	const ms = Date.parse(`${head}.${fraction.slice(0, 3).padEnd(3, '0')}${zone}`);
	if (Number.isNaN(ms)) return undefined;
	return [ms, Number(fraction.slice(3, 9).padEnd(6, '0'))];
}

export function compareInstants(a: Instant, b: Instant): number {
	return a[0] - b[0] || a[1] - b[1];
}

const text = (value: unknown): string | undefined =>
	typeof value === 'string' && value !== '' ? value : undefined;

/**
 * When a task last changed, as far as the service says: the later of updated_at and internal_updated_at. A caller may
 * write updated_at (spec 2.2), e.g. its ticket's own time, hours old, so updated_at can go back; internal_updated_at
 * is not accepted in bodies, so where the service fills it, it dates every write. Where it is null, updated_at alone.
 */
export function changedAt(task: IDataObject): string | undefined {
	const updated = text(task.updated_at);
	const internal = text(task.internal_updated_at);
	const [u, i] = [instant(updated), instant(internal)];
	if (!i) return updated;
	if (!u) return internal;
	return compareInstants(i, u) > 0 ? internal : updated;
}

/** Whether a task read shows the service filling internal_updated_at: true, false, or undefined when it cannot tell. */
export function fillsInternalStamp(task: IDataObject): boolean | undefined {
	if (instant(task.internal_updated_at)) return true;
	return instant(task.updated_at) ? false : undefined;
}

/**
 * What the tasks read show of the service's stamps (see Stamps): `internal` once one task carries
 * internal_updated_at, `updated` when every task that could tell had none; undefined when none could tell.
 */
export function stampsShown(tasks: IDataObject[]): 'internal' | 'updated' | undefined {
	let shown: 'internal' | 'updated' | undefined;
	for (const task of tasks) {
		const fills = fillsInternalStamp(task);
		if (fills === true) return 'internal';
		if (fills === false) shown = 'updated';
	}
	return shown;
}

/**
 * Tasks changed since `afterMs` (milliseconds since the epoch), as a /tasks/query condition. Where the service fills
 * internal_updated_at, a task whose caller wrote an old updated_at is still found by it.
 */
export function changedSinceCondition(afterMs: number, stamps: Stamps | undefined): IDataObject {
	const value = new Date(afterMs).toISOString();
	const byUpdatedAt = { field: 'updated_at', operator: '>=', value };
	if (stamps !== 'internal') return byUpdatedAt;
	return {
		combinator: 'or',
		conditions: [byUpdatedAt, { field: 'internal_updated_at', operator: '>=', value }],
	};
}
