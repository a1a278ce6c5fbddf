import { createHash } from 'crypto';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { countTasks, readChangedTasks } from '../../../shared/tasks/changedTasks';
import { taskQueryCondition } from '../../../shared/tasks/filters';
import { listTasks } from '../../../shared/tasks/listTasks';
import { readTasksByUid, sawTasks } from '../../../shared/tasks/send';
import type { Stamps } from '../../../shared/tasks/stamps';
import { stampsShown } from '../../../shared/tasks/stamps';
import type { BacklogClient } from '../../../shared/transport/client';
import { now } from '../../../shared/callers/registry';
import type { Source, Step, Ticket } from './syncPlan';
import { limitOption } from './syncPlan';

/**
 * What a scheduled Sync Backlog remembers between runs (issue 46 item 1), and the read of its source that uses it.
 *
 * After a complete run the node keeps, in n8n's workflow static data of the node, the open tasks of its source as the
 * run left them: per task its uid and a digest of the ticket values it holds (about 55 bytes a task in n8n's JSON;
 * at most MAX_MEMORY_TASKS tasks, beyond which nothing is kept and every run reads everything). The next run reads
 * only the tasks of the source changed on the service since shortly before the last run began (its own writes
 * included), counts the source's open tasks, and takes every other open task to be as the memory says. Everything is
 * read, as before, when the memory cannot be trusted or is missing: see FullReason.
 */

/** Full Read Every (Hours), when the option is not set, from node version 3. Version 2 reads everything every run. */
export const DEFAULT_FULL_READ_HOURS = 24;
/** Above this many open tasks of the source nothing is remembered (static data is saved with every execution). */
export const MAX_MEMORY_TASKS = 100_000;
/**
 * Changes are read from this long before the last run began: the service's clock may be behind n8n's, and a write
 * may show in a listing a little after its stamp. What was read twice is compared twice, at no other cost.
 */
export const CHANGES_LOOKBACK_MS = 5 * 60_000;

/** Sync Options › Full Read Every (Hours). */
export const fullReadOption: INodeProperties = {
	displayName: 'Full Read Every (Hours)',
	name: 'fullReadEveryHours',
	type: 'number',
	typeOptions: { minValue: 0 },
	default: DEFAULT_FULL_READ_HOURS,
	description:
		'How often a run started by a trigger or schedule reads every task of the source. In between, it reads only the tasks changed since its last run and compares the input with what that run left, which it remembers (workflow static data): the same result, far fewer requests. A manual run, the first run and a run whose service does not filter by time read everything. 0 reads everything on every run, as node version 2 does when this option is not added.',
};

/** Where in the node's static data the memory is kept, and the shape of what is kept there. */
const MEMORY_KEY = 'syncMemory';
const FORMAT = 1;

export interface SyncMemory {
	format: typeof FORMAT;
	/** Digest of what the memory holds for: the service and caller, node version, source and identity settings. */
	key: string;
	/** Milliseconds since the epoch (n8n's clock): the next run reads the tasks changed from here. */
	since: number;
	/** When everything was last read. */
	fullAt: number;
	/** How time conditions are asked of this service (stamps.ts). */
	stamps?: Stamps;
	/** When the service was found not to filter a query by time: everything is read until Full Read Every has passed. */
	unfilteredAt?: number;
	/** uid -> digest of the ticket values its task holds ('' for an open task of the source that is no ticket's). */
	open: Record<string, string>;
}

/**
 * Why a run read every task of its source: no usable memory (first run, or saved by other settings, node version,
 * credential or source), a manual run from the editor (whose static data n8n does not keep), Full Read Every set to
 * 0, the safety net (Full Read Every has passed since the last full read), or the service: it does not filter by
 * time (`unfiltered`), refused the conditions (`refused`), paged them out of uid order (`unsound`), gave no count of
 * the source's open tasks (`no count`) or a count other than the memory and the changes make (`count differs`: a
 * task deleted, or changed with a stamp older than the last run).
 */
export type FullReason =
	| 'no memory'
	| 'other settings'
	| 'manual run'
	| 'off'
	| 'safety net'
	| 'unfiltered'
	| 'refused'
	| 'unsound'
	| 'no count'
	| 'count differs';

/** The source's tasks as a run needs them, read whole or from the memory and the changes. */
export interface SourceRead {
	read: 'full' | 'changes';
	/** Why everything was read (read 'full'). */
	why?: FullReason;
	/**
	 * The source's tasks (not archived) as its listing shows them. Read from the changes, a remembered task that holds
	 * its ticket's values is stood for by `{ uid, status, archived, fields: { <source field> } }`, never written.
	 */
	existing: IDataObject[];
	/** The tasks read, by uid (undefined: read and not found): what the plan and the writes compare with. */
	known: Map<string, IDataObject | undefined>;
	/** Tickets whose task holds their values, by the memory and unchanged since: `unchanged` without a read. */
	remembered: Set<string>;
	/** now() (callers/registry.ts) before the reads (writeTasks' knownAt). */
	listedAt: number;
	/** n8n's clock before the reads: the next run reads the changes from here, less CHANGES_LOOKBACK_MS. */
	startedMs: number;
	/** What to keep after the run; absent when nothing may be kept (manual run, Full Read Every 0). */
	keep?: Omit<SyncMemory, 'open' | 'since'>;
	/**
	 * Read from the changes on `updated_at` alone, not knowing yet whether the service fills internal_updated_at: if
	 * this run's tasks show it does, the next run reads the same changes again from here, asking on both.
	 */
	rereadFrom?: number;
}

/** A digest of a ticket's values (its fields, source included), the same for the same values in any key order. */
export function digestOf(fields: IDataObject): string {
	const canonical = (value: unknown): unknown => {
		if (Array.isArray(value)) return value.map(canonical);
		if (value && typeof value === 'object')
			return Object.fromEntries(
				Object.keys(value)
					.sort()
					.map((key) => [key, canonical((value as IDataObject)[key])]),
			);
		return value;
	};
	return createHash('sha256')
		.update(JSON.stringify(canonical(fields)))
		.digest('base64url')
		.slice(0, 12);
}

/** Full Read Every (Hours): the option, else 24 from node version 3 and 0 (every run reads everything) before. */
export function fullReadHours(ctx: IExecuteFunctions, options: IDataObject): number {
	const fallback = ctx.getNode().typeVersion >= 3 ? DEFAULT_FULL_READ_HOURS : 0;
	return limitOption(
		ctx,
		options,
		'fullReadEveryHours',
		fallback,
		'Full Read Every (Hours)',
		Infinity,
	);
}

function savedMemory(ctx: IExecuteFunctions): SyncMemory | undefined {
	const saved = ctx.getWorkflowStaticData('node')[MEMORY_KEY] as SyncMemory | undefined;
	const valid =
		saved !== null &&
		typeof saved === 'object' &&
		saved.format === FORMAT &&
		typeof saved.key === 'string' &&
		typeof saved.since === 'number' &&
		typeof saved.fullAt === 'number' &&
		saved.open !== null &&
		typeof saved.open === 'object';
	return valid ? saved : undefined;
}

/** Whether the memory may stand for a full read now, or why not. */
function usableMemory(
	ctx: IExecuteFunctions,
	key: string,
	hours: number,
	startedMs: number,
): SyncMemory | FullReason {
	if (ctx.getMode() === 'manual') return 'manual run';
	if (hours <= 0) return 'off';
	const memory = savedMemory(ctx);
	if (!memory) return 'no memory';
	if (memory.key !== key) return 'other settings';
	const period = hours * 3_600_000;
	// A clock that went back counts as the period passed: the memory's times cannot be trusted.
	const passed = (at: number) => startedMs - at >= period || startedMs < at;
	if (passed(memory.fullAt)) return 'safety net';
	if (memory.unfilteredAt !== undefined && !passed(memory.unfilteredAt)) return 'unfiltered';
	return memory;
}

const ofSource = (source: Source) => (task: IDataObject) =>
	String(((task.fields ?? {}) as IDataObject)[source.field]) === source.value;
const uidOf = (task: IDataObject) => String(task.uid).toLowerCase();
const isOpen = (task: IDataObject) => task.status !== 'DONE' && task.archived !== true;

/**
 * The source's tasks for a run: from the memory and the changes when the memory is usable and the service answers
 * as it should, otherwise the whole listing (read as before: GET /tasks, or /tasks/query where it carries more).
 * Either way, each ticket's task is known (read, or remembered as holding its values), so the plan is the one a full
 * read gives.
 */
export async function readSource(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	source: Source,
	tickets: Map<string, Ticket>,
	options: IDataObject,
	identity: { externalIdField: string; namespace: string },
): Promise<SourceRead> {
	const startedMs = Date.now();
	const listedAt = now();
	const hours = fullReadHours(ctx, options);
	const key = createHash('sha256')
		.update(
			JSON.stringify([
				await client.callerKey(),
				ctx.getNode().typeVersion,
				source.field,
				source.value,
				identity.externalIdField,
				identity.namespace,
			]),
		)
		.digest('base64url')
		.slice(0, 22);
	const bySource = taskQueryCondition(
		ctx.getNode(),
		{ customFields: { field: [{ name: source.field, value: source.value }] } },
		[],
	);
	const usable = usableMemory(ctx, key, hours, startedMs);
	const keeps = usable !== 'manual run' && usable !== 'off';
	// What was learnt of the service is kept across full reads: how to ask for time, and that it does not filter by it.
	const saved = savedMemory(ctx);
	let stamps = saved?.key === key ? saved.stamps : undefined;
	let unfilteredAt = usable === 'unfiltered' ? saved?.unfilteredAt : undefined;
	let why: FullReason;
	if (typeof usable === 'string') why = usable;
	else {
		const fromChanges = await readChanges(client, usable, source, tickets, bySource);
		stamps = fromChanges.stamps;
		if (fromChanges.read === 'changes')
			return {
				...fromChanges,
				listedAt,
				startedMs,
				keep: { format: FORMAT, key, fullAt: usable.fullAt, stamps },
				rereadFrom:
					usable.stamps === undefined || usable.stamps === 'updated' ? usable.since : undefined,
			};
		why = fromChanges.read;
		if (why === 'unfiltered') unfilteredAt = startedMs;
	}

	// Everything: the listing filters by custom field (spec 4.2 rule 3; as a query condition when /tasks/query carries
	// more tasks per request); checking again here keeps a lax server from widening the sync.
	const existing = (
		await listTasks(client, {
			qs: { [source.field]: source.value },
			query: { condition: bySource },
		})
	).filter(ofSource(source));
	const known = new Map<string, IDataObject | undefined>(
		existing.map((task) => [uidOf(task), task]),
	);
	// A ticket whose task is not listed may still have one: archived (the listing hides those), or without this source.
	const unlisted = [...tickets.keys()].filter((uid) => !known.has(uid));
	if (unlisted.length > 0) {
		const found = await readTasksByUid(client, unlisted, tickets.get(unlisted[0])?.itemIndex);
		// Read and not found: the write creates it without reading again.
		for (const uid of unlisted) known.set(uid, found.get(uid));
	}
	if (stamps !== 'refused') stamps = stampsShown(existing) ?? stamps;
	return {
		read: 'full',
		why,
		existing,
		known,
		remembered: new Set(),
		listedAt,
		startedMs,
		keep: keeps ? { format: FORMAT, key, fullAt: startedMs, stamps, unfilteredAt } : undefined,
	};
}

type ChangesRead =
	| ({ read: 'changes'; stamps?: Stamps } & Pick<SourceRead, 'existing' | 'known' | 'remembered'>)
	| { read: FullReason; stamps?: Stamps };

/** The source from the memory and what changed since it (see readSource), or why everything must be read. */
async function readChanges(
	client: BacklogClient,
	memory: SyncMemory,
	source: Source,
	tickets: Map<string, Ticket>,
	bySource: IDataObject,
): Promise<ChangesRead> {
	const itemIndex = tickets.values().next().value?.itemIndex;
	const changed = await readChangedTasks(client, {
		condition: bySource,
		sinceMs: memory.since,
		stamps: memory.stamps,
		itemIndex,
	});
	if (changed.read !== 'changes') return changed;
	let stamps = changed.stamps;
	if (stamps !== 'refused') stamps = stampsShown(changed.tasks) ?? stamps;
	const known = new Map<string, IDataObject | undefined>();
	for (const task of changed.tasks) known.set(uidOf(task), task);
	const listed = [...known.values()].filter(
		(task): task is IDataObject =>
			task !== undefined && task.archived !== true && ofSource(source)(task),
	);
	// Every other task the memory holds is open, of the source and as it was: the service's count must agree. (Read
	// once: n8n hands static data through a proxy, which each access to a nested object goes through.)
	const open: Record<string, string> = { ...memory.open };
	const kept = Object.keys(open).filter((uid) => !known.has(uid));
	const count = await countTasks(
		client,
		{
			combinator: 'and',
			conditions: [bySource, { field: 'status', operator: 'in', value: ['TODO', 'STARTED'] }],
		},
		itemIndex,
	);
	if (count === undefined) return { read: 'no count', stamps };
	if (count !== listed.filter(isOpen).length + kept.length)
		return { read: 'count differs', stamps };

	// Read by uid, as the full read does for a ticket its listing does not show: a ticket the memory does not hold,
	// or whose values changed (its task's current values decide what is written), and a remembered task that is no
	// ticket's any more (it is closed as it stands now).
	const remembered = new Set<string>();
	const toRead: string[] = [];
	for (const ticket of tickets.values()) {
		if (known.has(ticket.uid)) continue;
		if (open[ticket.uid] === digestOf(ticket.fields)) remembered.add(ticket.uid);
		else toRead.push(ticket.uid);
	}
	for (const uid of kept) if (!tickets.has(uid)) toRead.push(uid);
	if (toRead.length > 0) {
		// A remembered task, open by the count and unchanged since, is asked for last: its coming back shows the server
		// applied the whole list, so no GET confirms that a new ticket has no task (tasks/send.ts probesFor). The greatest
		// uid, so that it also closes a query read in pages by uid. Missing, it is confirmed the usual way.
		let probe: string | undefined;
		for (const uid of remembered) if (probe === undefined || uid > probe) probe = uid;
		if (probe !== undefined) await sawTasks(client, [probe]);
		const found = await readTasksByUid(client, toRead, itemIndex);
		for (const uid of toRead) known.set(uid, found.get(uid));
	}
	const existing = [...listed];
	for (const uid of kept) {
		if (remembered.has(uid)) {
			const fields = { [source.field]: source.value };
			existing.push({ uid, status: 'TODO', archived: false, fields });
			continue;
		}
		const task = known.get(uid);
		if (task && task.archived !== true && ofSource(source)(task)) existing.push(task);
	}
	return { read: 'changes', stamps, existing, known, remembered };
}

/** A ticket whose task holds its values, by the memory: nothing to write. */
export const rememberedStep = (ticket: Ticket): Step => ({
	action: 'unchanged',
	uid: ticket.uid,
	externalId: ticket.externalId,
	itemIndex: ticket.itemIndex,
	body: {},
});

/**
 * After a run that wrote what it planned: the source's open tasks as it leaves them, for the next run. Nothing is kept
 * after a Dry Run (the service was not changed), a run where a write failed (Continue On Fail: what the task holds
 * is not known), a manual run or Full Read Every 0 (the memory is dropped), or more than MAX_MEMORY_TASKS tasks.
 */
export function rememberRun(
	ctx: IExecuteFunctions,
	read: SourceRead,
	tickets: Map<string, Ticket>,
	steps: Step[],
	written: Map<string, IDataObject | Error>,
	dryRun: boolean,
): void {
	if (dryRun || ctx.getMode() === 'manual') return;
	const data = ctx.getWorkflowStaticData('node');
	const failed = [...written.values()].some((result) => result instanceof Error);
	if (!read.keep || failed) {
		if (MEMORY_KEY in data) delete data[MEMORY_KEY];
		return;
	}
	const open: Record<string, string> = {};
	for (const task of read.existing) if (isOpen(task)) open[uidOf(task)] = '';
	for (const step of steps) {
		const ticket = tickets.get(step.uid);
		if (step.action === 'close') delete open[step.uid];
		else if (
			ticket &&
			['create', 'update', 'reopen', 'unarchive', 'unchanged'].includes(step.action)
		)
			open[step.uid] = digestOf(ticket.fields);
	}
	if (Object.keys(open).length > MAX_MEMORY_TASKS) {
		delete data[MEMORY_KEY];
		return;
	}
	// A source read empty tells nothing of the service's stamps: the tasks this run wrote and read do.
	const seen = [...written.values(), ...read.known.values()].filter(
		(task): task is IDataObject => task !== undefined && !(task instanceof Error),
	);
	const stamps = read.keep.stamps ?? stampsShown(seen);
	let since = read.startedMs - CHANGES_LOOKBACK_MS;
	if (stamps === 'internal' && read.rereadFrom !== undefined) since = read.rereadFrom;
	const memory: SyncMemory = { ...read.keep, stamps, since, open };
	data[MEMORY_KEY] = memory as unknown as IDataObject;
}
