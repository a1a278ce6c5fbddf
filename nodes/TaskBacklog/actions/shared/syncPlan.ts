import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { invalidParameter, parametersReadOnce, spelledNumber } from '../../../shared/parameters';
import { changedFields } from '../../../shared/tasks/send';
import { taskInputReader } from './taskInput';

/** What Sync Backlog plans: its input read as tickets, a step per ticket and per task to close, and the mass-close guard. */

/** The mass-close guard's defaults: see closeGuard and the README ("How it works"). */
export const DEFAULT_MAX_CLOSE_SHARE = 20;
export const DEFAULT_CLOSE_ALLOWANCE = 10;
/** Close Grace Period's default: the service's default polling interval (spec 1, route 3), 5 minutes. */
export const DEFAULT_CLOSE_GRACE_MINUTES = 5;

export type Action =
	| 'create'
	| 'update'
	| 'reopen'
	| 'unarchive'
	| 'unchanged'
	| 'close'
	| 'kept_open'
	| 'duplicate'
	| 'conflict';

export interface Step {
	action: Action;
	uid: string;
	externalId?: string;
	itemIndex?: number;
	body: IDataObject;
	/** For a duplicate: the later input item whose values were applied instead. */
	supersededBy?: number;
	/** For a conflict: the source the ticket's task holds (another source's task, never written), and what to say. */
	taskSource?: string;
	message?: string;
	/** For a task kept open (kept_open): the newest of its service stamps, within the grace period or after the run began. */
	touchedAt?: string;
}

export interface Ticket {
	uid: string;
	externalId: string;
	fields: IDataObject;
	itemIndex: number;
}

/**
 * Every input item read through the one task-input reader, each marked with the source. Every item must be valid,
 * even with Continue On Fail: skipping a bad one would close its task. The same external ID twice: the later item's
 * values are applied, and the earlier item's row says so.
 */
export function readTickets(
	ctx: IExecuteFunctions,
	itemIndexes: number[],
	source: Source,
	options: IDataObject,
) {
	const readTask = taskInputReader(parametersReadOnce(ctx), 'syncBacklog', options);
	const tickets = new Map<string, Ticket>();
	const duplicates: Step[] = [];
	for (const itemIndex of itemIndexes) {
		const { uid, externalId, fields } = readTask(itemIndex);
		fields[source.field] = source.value;
		const earlier = tickets.get(uid!);
		if (earlier) {
			duplicates.push({
				action: 'duplicate',
				uid: uid!,
				externalId: earlier.externalId,
				itemIndex: earlier.itemIndex,
				body: {},
				supersededBy: itemIndex,
			});
			tickets.delete(uid!);
		}
		tickets.set(uid!, { uid: uid!, externalId: externalId!, fields, itemIndex });
	}
	return { tickets, duplicates };
}

export interface Source {
	field: string;
	value: string;
}

/**
 * What a ticket's task needs: made, restored from the archive, reopened, changed, or nothing. An existing task is sent
 * only the custom fields that differ from the listing, so a key the ticket does not set, or sets to what the task
 * already holds, is not written back over an operator's edit made since.
 */
export function stepFor(ticket: Ticket, task: IDataObject | undefined): Step {
	const { uid, externalId, fields, itemIndex } = ticket;
	const changed = task ? changedFields(task, fields) : fields;
	const body: IDataObject = Object.keys(changed).length > 0 ? { fields: changed } : {};
	let action: Action = !task ? 'create' : body.fields ? 'update' : 'unchanged';
	if (task?.status === 'DONE') {
		body.status = 'TODO';
		action = 'reopen';
	}
	if (task?.archived === true) {
		// The ticket is open, so its task belongs in the backlog: an archived one is restored, not made again.
		body.archived = false;
		action = 'unarchive';
	}
	return { action, uid, externalId, itemIndex, body };
}

/**
 * The value of another source that a ticket's task holds in the Source Field, if it does. A task without one (made by
 * Create or Update, or by hand) is taken into the sync; one whose value differs, compared as the listing compares it,
 * belongs to another sync and is never written (issue 47, S6): neither an input `uid` key nor the default UID
 * Namespace shared by two sources lets one sync change, move and later close another's task.
 */
export function otherSourceOf(task: IDataObject | undefined, source: Source): string | undefined {
	if (!task) return undefined;
	const value = ((task.fields ?? {}) as IDataObject)[source.field];
	if (value === undefined || value === null || value === '') return undefined;
	const text = typeof value === 'object' ? JSON.stringify(value) : String(value as string);
	return text === source.value ? undefined : text;
}

/** What Sync Backlog says of a ticket whose task belongs to another source, and how to fix it. */
function conflictMessage(ticket: Ticket, taskSource: string, source: Source): string {
	const shown = taskSource.length > 100 ? `${taskSource.slice(0, 100)}…` : taskSource;
	return (
		`Item ${ticket.itemIndex}: the task of ticket ${ticket.externalId} (UID ${ticket.uid}) belongs to source ` +
		`"${shown}", not "${source.value}" (its custom field "${source.field}"); Sync Backlog never writes a task ` +
		'of another source, so it was left as it is'
	);
}

export const CONFLICT_HINT =
	'Two systems whose ticket IDs coincide share a task UID under the same UID Namespace: give each source its own (Sync Options › UID Namespace, any UUID, the same on every run; change it on the source that has no tasks yet, since a new namespace gives every ticket a new task). With Map Automatically, an input item\'s "uid" key names the task directly: drop that key, or add "uid" to Mapping Options › Keys to Ignore.';

/** A ticket whose task belongs to another source: reported, never written. */
export function conflictStep(ticket: Ticket, taskSource: string, source: Source): Step {
	const { uid, externalId, itemIndex } = ticket;
	const message = conflictMessage(ticket, taskSource, source);
	return { action: 'conflict', uid, externalId, itemIndex, body: {}, taskSource, message };
}

/**
 * The stamps the service keeps on a task, on its own clock (spec 2.2): `updated_at` and `created_at` are always
 * there, the internal ones may be null (facts and docs/spec-open-points.md: a server may keep a caller's `updated_at`
 * as written, hours old, and leave the internal stamps null). The newest of those present dates the last change; the
 * node itself never writes `created_at` or `updated_at`, so a task it created or changed carries the service's time
 * in them under every reading.
 */
export const SERVICE_STAMPS = [
	'updated_at',
	'internal_updated_at',
	'created_at',
	'internal_created_at',
] as const;

/** The newest service stamp of a task (milliseconds since the epoch and as the service wrote it), if any is a date. */
export function lastTouched(task: IDataObject): { ms: number; text: string } | undefined {
	let newest: { ms: number; text: string } | undefined;
	for (const name of SERVICE_STAMPS) {
		const value = task[name];
		if (typeof value !== 'string') continue;
		const ms = Date.parse(value);
		if (Number.isFinite(ms) && (newest === undefined || ms > newest.ms))
			newest = { ms, text: value };
	}
	return newest;
}

/**
 * The open tasks of the source whose tickets are not in the input: each is closed (status DONE, never deleted), unless
 * the service created or updated it at or after `keepTouchedSince` (the run's start less the grace period): such a task
 * may belong to a ticket newer than the input (an event's Create or Update by External ID after the upstream node read
 * its tickets, or another run of the same source that created it), so it is kept open (`kept_open`), and a later run
 * closes it if its ticket is still missing.
 */
export function closesFor(
	open: IDataObject[],
	tickets: Map<string, Ticket>,
	externalIdField: string,
	keepTouchedSince = Infinity,
): Step[] {
	return open
		.filter((task) => !tickets.has(String(task.uid).toLowerCase()))
		.map((task) => {
			const externalId = ((task.fields ?? {}) as IDataObject)[externalIdField] as
				string | undefined;
			const uid = String(task.uid).toLowerCase();
			const touched = lastTouched(task);
			if (touched !== undefined && touched.ms >= keepTouchedSince)
				return { action: 'kept_open', uid, externalId, body: {}, touchedAt: touched.text };
			return { action: 'close', uid, externalId, body: { status: 'DONE' } };
		});
}

/**
 * Close Grace Period (Minutes), in milliseconds: 0 keeps only the tasks changed after the run began (those cannot be
 * in an input read before it). Read once, from item 0, before any request.
 */
export function closeGraceMs(ctx: IExecuteFunctions, options: IDataObject): number {
	const minutes = limitOption(
		ctx,
		options,
		'closeGraceMinutes',
		DEFAULT_CLOSE_GRACE_MINUTES,
		'Close Grace Period (Minutes)',
		Infinity,
	);
	return minutes * 60_000;
}

/**
 * The mass-close guard (as rsync's and rclone's --max-delete): a run that would close more than the allowed share of
 * the source's open tasks is most likely a short input (a key typo, an input cut to its first page, a filter gone
 * wrong), which looks exactly like many closed tickets. Always Allow Closing Up To lets a run close that many whatever
 * their share, except that at the default or below it stops at half of the source's open tasks (its only one may be
 * closed): so a small source is never closed entirely, nor mostly, by a short input without a setting. A value above
 * the default keeps its meaning (that many, whatever their share, even all). Max Share to Close 100 turns the guard
 * off. The message says how many, which, and what setting allows it.
 */
export function closeGuard(
	ctx: IExecuteFunctions,
	options: IDataObject,
	closes: Step[],
	open: number,
	source: Source,
): string | undefined {
	const allowance = closeAllowance(ctx, options);
	const maxShare = maxCloseShare(ctx, options);
	if (maxShare >= 100) return undefined;
	const count = closes.length;
	const byShare = Math.floor((open * maxShare) / 100);
	const half = Math.max(1, Math.floor(open / 2));
	const byAllowance = allowance > DEFAULT_CLOSE_ALLOWANCE ? allowance : Math.min(allowance, half);
	if (count <= Math.max(byAllowance, byShare)) return undefined;

	const share = Math.round((count / Math.max(open, 1)) * 100);
	const some = closes
		.slice(0, 5)
		.map((step) =>
			step.externalId !== undefined ? `external ID ${String(step.externalId)}` : `task ${step.uid}`,
		)
		.join(', ');
	const why =
		count <= allowance
			? `${count === open ? 'every one of them' : 'more than half of them'}; Always Allow Closing Up To ` +
				`(${allowance}) allows at most half of a source's open tasks (${byAllowance} here) unless set above ` +
				`${DEFAULT_CLOSE_ALLOWANCE}, and Max Share to Close (${maxShare}%) allows ${byShare}`
			: `more than the ${maxShare}% allowed (Max Share to Close) and more than ${allowance} (Always Allow Closing Up To)`;
	// What allows it: the least Max Share to Close that covers it, and the least Always Allow Closing Up To.
	const needShare = Math.ceil((count * 100) / Math.max(open, 1));
	const shareFix =
		needShare >= 100
			? 'to 100 (which turns the guard off)'
			: `to ${needShare} or more (100 turns the guard off)`;
	const needAllowance = count > half ? Math.max(count, DEFAULT_CLOSE_ALLOWANCE + 1) : count;
	const allowanceFix =
		needAllowance > DEFAULT_CLOSE_ALLOWANCE
			? ` (a value above ${DEFAULT_CLOSE_ALLOWANCE} allows closing that many whatever their share, even every open task)`
			: '';
	return (
		`Sync Backlog would close ${count} of the ${open} open tasks of source "${source.value}" (${share}%), ${why}; ` +
		`nothing was written. Some of them: ${some}${count > 5 ? ` and ${count - 5} more` : ''}. To allow it for ` +
		`this run, set Sync Options › Max Share to Close (%) ${shareFix}, or Always Allow Closing Up To to ` +
		`${needAllowance} or more${allowanceFix}.`
	);
}

function maxCloseShare(ctx: IExecuteFunctions, options: IDataObject): number {
	return limitOption(
		ctx,
		options,
		'maxCloseShare',
		DEFAULT_MAX_CLOSE_SHARE,
		'Max Share to Close (%)',
		100,
	);
}

/** Checks the guard's two settings before any request (closeGuard reads them again once the closes are known). */
export function checkGuardOptions(ctx: IExecuteFunctions, options: IDataObject): void {
	closeAllowance(ctx, options);
	maxCloseShare(ctx, options);
}

function closeAllowance(ctx: IExecuteFunctions, options: IDataObject): number {
	return limitOption(
		ctx,
		options,
		'closeAllowance',
		DEFAULT_CLOSE_ALLOWANCE,
		'Always Allow Closing Up To',
		Infinity,
	);
}

/** Whether Max Share to Close is 100, which turns the mass-close guard off. */
export function guardOff(ctx: IExecuteFunctions, options: IDataObject): boolean {
	return maxCloseShare(ctx, options) >= 100;
}

export const GUARD_HINT =
	'Usually the input is short: an External ID expression that finds nothing, an upstream node that returned only its first page, a filter gone wrong. Check the input with Dry Run. If these tickets really are closed, allow it for this run as the message says: Sync Options › Max Share to Close (%) (100 turns the guard off) or Always Allow Closing Up To.';

/**
 * A number option of Sync Options, read once (item 0) before any request. Not added (absent from the collection): its
 * default. Added, it must spell a number in range: an expression that resolves to nothing (undefined, null, '' or
 * blanks, e.g. a key typo) is refused, never taken for the default or for 0, since the two may close different tasks.
 */
export function limitOption(
	ctx: IExecuteFunctions,
	options: IDataObject,
	key: string,
	fallback: number,
	name: string,
	max: number,
): number {
	if (!(key in options)) return fallback;
	const value = options[key];
	const number = spelledNumber(value);
	if (Number.isFinite(number) && number >= 0 && number <= max) return number;
	const range = `a number from 0${max === Infinity ? '' : ` to ${max}`}`;
	const nothing = value === undefined || value === null || String(value).trim() === '';
	throw invalidParameter(
		ctx,
		0,
		name,
		nothing
			? `is empty: its expression resolved to ${value === undefined ? 'undefined' : JSON.stringify(value)}; it must be ${range}`
			: `must be ${range}, got ${JSON.stringify(value)}`,
		`Nothing was sent. Make the expression give ${range}, or remove the option from Sync Options to use its default (${fallback}).`,
	);
}
