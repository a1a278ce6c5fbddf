import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

import { callerState, now } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { cancelled, isCancelled } from '../transport/client';
import { hasStatus, responseBody, statusOf } from '../transport/errors';
import { queryTasks, refusesCondition } from './queryTasks';

/**
 * Send: the requests a write plan needs (writeTasks.ts), sent by this execution alone (directGateway) or for several
 * at once (sharing/coalesce.ts): the current tasks of given uids read in bulk, then the planned writes in batches, each
 * answered by uid.
 */

// How a task's current values compare with what a write would set: what is ours, what is unchanged, what changed.

function sameValue(actual: unknown, wanted: unknown): boolean {
	if (typeof actual === 'string' && typeof wanted === 'string') {
		if (actual === wanted) return true;
		const [a, b] = [Date.parse(actual), Date.parse(wanted)];
		return /^\d{4}-\d\d-\d\d/.test(wanted) && !Number.isNaN(a) && a === b;
	}
	if (actual && wanted && typeof actual === 'object' && typeof wanted === 'object') {
		if (Array.isArray(actual) !== Array.isArray(wanted)) return false;
		// Every key of either side, without building their union: a write's answers are compared by the thousand.
		for (const key of Object.keys(actual))
			if (!sameValue((actual as IDataObject)[key], (wanted as IDataObject)[key])) return false;
		for (const key of Object.keys(wanted))
			if (
				!Object.hasOwn(actual, key) &&
				!sameValue((actual as IDataObject)[key], (wanted as IDataObject)[key])
			)
				return false;
		return true;
	}
	return actual === wanted || (actual == null && wanted == null);
}

/**
 * Whether the task carries the values of the body, `fields` compared key by key. With `shownOnly`, a task property
 * the task does not show is left out: `assignee_email` and `status_global` are written but are not part of a task's
 * response (spec 2.2), so no answer can show them.
 */
function carries(task: IDataObject, body: IDataObject, shownOnly: boolean): boolean {
	for (const key of Object.keys(body)) {
		const wanted = body[key];
		if (key === 'fields' && wanted && typeof wanted === 'object') {
			const fields = (task.fields ?? {}) as IDataObject;
			for (const name of Object.keys(wanted))
				if (!sameValue(fields[name], (wanted as IDataObject)[name])) return false;
		} else if (!(shownOnly && !(key in task)) && !sameValue(task[key], wanted)) return false;
	}
	return true;
}

/** Nothing to write: the task holds every value of the body (a value it does not show cannot be known, so it is sent). */
export const hasValues = (task: IDataObject, body: IDataObject): boolean =>
	carries(task, body, false);

/**
 * Our own write: every value the task shows is the one we sent. Create decides with it that a task with its uid is its
 * own earlier attempt (a retry), not someone else's; a value the answer does not echo would otherwise make it so.
 */
export const showsOurValues = (task: IDataObject, body: IDataObject): boolean =>
	carries(task, body, true);

/** The custom fields of `wanted` whose value the task does not hold already: what a write has to change. */
export function changedFields(task: IDataObject | undefined, wanted: IDataObject): IDataObject {
	const current = (task?.fields ?? {}) as IDataObject;
	const changed: IDataObject = {};
	for (const [name, value] of Object.entries(wanted)) {
		if (!(name in current) || !sameValue(current[name], value)) changed[name] = value;
	}
	return changed;
}

// Reading tasks by uid.

/**
 * uids per bulk read to start with: a `uid in [...]` body of about 400 KB, so 10,000 writes cost one read (two with
 * the archived ones). A server that refuses the body as too large (413) gets half as many, kept for the caller.
 */
export const UIDS_PER_READ = 10_000;

/**
 * What a caller learnt of the server's bulk reads (callers/registry.ts): the uids per read it accepted (its body limit
 * is not documented), and the tasks the caller has lately read or written, known to exist, newest last (probesFor).
 */
interface ReadMemory {
	uidsPerRead: number;
	known: string[];
}

/**
 * Runs (clients) whose server cannot read tasks by `uid in [...]` (it refused that query, or ignored the condition, or
 * missed a task). Per run, not per caller: a task created by someone else between a query and its check looks the
 * same as a missed one, and must not turn every later execution of the caller to one read per task.
 */
const readsOneByOne = new WeakSet<BacklogClient>();

async function readMemory(client: BacklogClient): Promise<ReadMemory> {
	return callerState(await client.callerKey()).part('reads', () => ({
		uidsPerRead: UIDS_PER_READ,
		known: [],
	}));
}

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
 *
 * Whether the query missed a task is checked at no cost when the caller knows a task that exists (see probesFor): it
 * is asked for last, and its coming back shows the server applied the whole list. Otherwise one GET checks the last
 * uid not found (confirmedAbsent), sent beside the query for the archived ones rather than after it.
 */
export async function readTasksByUid(
	client: BacklogClient,
	uids: string[],
	itemIndex?: number,
): Promise<Map<string, IDataObject>> {
	const unique = [...new Set(uids)];
	const memory = await readMemory(client);
	if (unique.length > 1 && !readsOneByOne.has(client)) {
		let beside: Lookup | undefined;
		const readWith = (probes: string[]) =>
			readByCondition(client, memory, unique, probes, itemIndex, (missing, probed) => {
				if (!probed) beside = lookup(client, missing[missing.length - 1], itemIndex);
			});
		const probes = probesFor(memory, unique);
		// The probes are tasks the caller knows, perhaps another execution's: an execution's error must come from a
		// request that carried only what it asked for, so a read that failed with them is asked again without them.
		const read = await readWith(probes).catch((error: unknown) =>
			probes.length === 0 || hasStatus(error, 401) || isCancelled(client)
				? Promise.reject(error)
				: readWith([]),
		);
		if (read) {
			forget(memory, read.probesMissed);
			remember(memory, unarchived(read.found));
			if (read.probed || (await confirmedAbsent(client, unique, read.found, itemIndex, beside)))
				return read.found;
		}
		readsOneByOne.add(client);
	}
	const found = await readOneByOne(client, unique, itemIndex);
	remember(memory, unarchived(found));
	return found;
}

/** The uids of the tasks read that a later query for tasks not archived can return (a probe must come back). */
const unarchived = (tasks: Map<string, IDataObject>) =>
	[...tasks].filter(([, task]) => task.archived !== true).map(([uid]) => uid);

/** Known tasks kept per caller: enough that one of them usually sorts after every uid of a read (see probesFor). */
const KNOWN_PER_CALLER = 64;

function remember(memory: ReadMemory, uids: Iterable<string>) {
	const known = memory.known.concat([...uids].slice(-KNOWN_PER_CALLER));
	memory.known = [...new Set(known.reverse())].slice(0, KNOWN_PER_CALLER).reverse();
}

/** Probes that did not come back are gone or archived: the next reads ask for others. */
function forget(memory: ReadMemory, uids: string[]) {
	if (uids.length > 0) memory.known = memory.known.filter((uid) => !uids.includes(uid));
}

/**
 * Remembers that these tasks exist, as this caller wrote them (newest last): later bulk reads ask for one of them last
 * (probesFor). Once per batch written, not per task.
 */
export async function sawTasks(client: BacklogClient, uids: string[]) {
	if (uids.length > 0) remember(await readMemory(client), uids);
}

/**
 * Tasks to ask for at the end of a bulk read, besides the uids wanted; none when the caller knows no task.
 *
 * Last, the task this caller has seen most lately (the confirming probe). A server that answers with it has applied
 * the whole list (a server that ignores `uid in` or applies only the start of a long list would leave it out), so the
 * tasks not found are not there, with no GET to confirm it. It may be gone or archived since: then the read is
 * confirmed the usual way. The same list, less the tasks found, is then asked for archived: whether a server applies
 * the condition does not depend on the `archived` parameter.
 *
 * Before it, when that one does not sort after every uid wanted, the latest known task that does (if any): a query
 * without cursors is read in pages by uid until one comes back empty (queryTasks.ts), and a page that reaches the
 * greatest uid asked for is the last, with no empty page after it.
 */
function probesFor(memory: ReadMemory, unique: string[]): string[] {
	if (memory.known.length === 0) return [];
	const wanted = new Set(unique);
	const known = memory.known.filter((uid) => !wanted.has(uid)).reverse();
	if (known.length === 0) return [];
	const greatestWanted = greatestUid(unique);
	const closing = known.find((uid) => uid > greatestWanted);
	return closing === undefined || closing === known[0] ? [known[0]] : [closing, known[0]];
}

/** The uid that sorts last, as a query sorts uids (lower case). */
function greatestUid(uids: string[]): string {
	let greatest = uids[0].toLowerCase();
	for (const uid of uids) {
		const lower = uid.toLowerCase();
		if (lower > greatest) greatest = lower;
	}
	return greatest;
}

/** A GET of one uid under way: whether the task exists (archived or not). */
interface Lookup {
	uid: string;
	exists: Promise<boolean>;
}

function lookup(client: BacklogClient, uid: string, itemIndex?: number): Lookup {
	const exists = readOneByOne(client, [uid], itemIndex).then((found) => found.size > 0);
	// Awaited where its answer is needed; a read that ends otherwise (it failed, or fell back) leaves it unheard.
	exists.catch(() => undefined);
	return { uid, exists };
}

/**
 * Whether the query's "not found" holds: the last uid it did not return is looked up with GET (one request). A server
 * that answers `{items: []}` to a condition it does not apply, or applies only the start of a long list, would
 * otherwise make those writes creates. `beside`: that GET, sent while the archived ones were read, for the last uid
 * the query for tasks not archived did not return; when that one was archived, the next uid not found is looked up.
 */
async function confirmedAbsent(
	client: BacklogClient,
	unique: string[],
	found: Map<string, IDataObject>,
	itemIndex?: number,
	beside?: Lookup,
): Promise<boolean> {
	let missing: string | undefined;
	for (let index = unique.length - 1; index >= 0 && missing === undefined; index--)
		if (!found.has(unique[index])) missing = unique[index];
	if (beside !== undefined && beside.uid === missing) return !(await beside.exists);
	// Its answer is not needed, but it is not left under way either.
	await beside?.exists.catch(() => undefined);
	if (missing === undefined) return true;
	return !(await lookup(client, missing, itemIndex).exists);
}

/**
 * The tasks by `uid in [...]`, whether every query for tasks not archived returned the confirming probe, and the
 * probes that did not come back (see probesFor); undefined when the server does not take that condition.
 * `archivedNext` is told, before the archived ones are read, which uids were not found and whether the probe came back.
 */
async function readByCondition(
	client: BacklogClient,
	memory: ReadMemory,
	unique: string[],
	probes: string[],
	itemIndex: number | undefined,
	archivedNext: (missing: string[], probed: boolean) => void,
): Promise<
	{ found: Map<string, IDataObject>; probed: boolean; probesMissed: string[] } | undefined
> {
	const found = new Map<string, IDataObject>();
	const confirming = probes.at(-1);
	let probed = confirming !== undefined;
	const probesMissed = new Set<string>();
	for (const archived of [false, true]) {
		const missing = unique.filter((uid) => !found.has(uid));
		if (archived && missing.length > 0) archivedNext(missing, probed);
		let start = 0;
		while (start < missing.length) {
			const size = memory.uidsPerRead;
			const chunk = missing.slice(start, start + size);
			if (!archived) chunk.push(...probes);
			// Built when the first task comes back: a read that finds nothing (first contact) needs none.
			let wantedSet: Set<string> | undefined;
			const wanted = () => (wantedSet ??= new Set(chunk));
			const condition = { field: 'uid', operator: 'in', value: chunk };
			// At most one task per uid: once as many came back as were asked for, no page can follow.
			// A task not asked for means the server ignored the condition: no need to read further.
			const notAsked = (page: IDataObject[]) =>
				page.some((task) => !wanted().has(String(task.uid).toLowerCase()));
			const read = queryTasks(client, {
				body: { condition },
				archived,
				maxItems: chunk.length,
				lastUid: () => greatestUid(chunk),
				stopAfter: notAsked,
				itemIndex,
			});
			// A 413 asks for fewer uids, a 400 or 422 says the query is not understood; any other failure rejects as it
			// came (returning the rejected read).
			const tasks = await read.catch(
				(error: unknown): IDataObject[] | NodeApiError | Promise<IDataObject[]> =>
					(hasStatus(error, 413) && chunk.length > 1) || refusesCondition(error)
						? (error as NodeApiError)
						: read,
			);
			if (tasks instanceof NodeApiError) {
				if (!hasStatus(tasks, 413)) return undefined;
				memory.uidsPerRead = Math.ceil(chunk.length / 2);
				continue;
			}
			const returned = new Set<string>();
			for (const task of tasks) {
				const uid = String(task.uid).toLowerCase();
				if (!wanted().has(uid)) return undefined;
				returned.add(uid);
				if (!probes.includes(uid)) found.set(uid, task);
			}
			if (!archived) {
				for (const probe of probes) if (!returned.has(probe)) probesMissed.add(probe);
				if (confirming !== undefined && !returned.has(confirming)) probed = false;
			}
			start += size;
		}
	}
	return { found, probed, probesMissed: [...probesMissed] };
}

/** The tasks by GET /tasks/{uid} (archived or not), a 404 meaning there is none. */
async function readOneByOne(
	client: BacklogClient,
	unique: string[],
	itemIndex?: number,
): Promise<Map<string, IDataObject>> {
	const found = new Map<string, IDataObject>();
	for (const uid of unique) {
		const read = client.request<IDataObject>({ method: 'GET', path: `/tasks/${uid}`, itemIndex });
		const task = await read.catch((error: unknown) => (hasStatus(error, 404) ? undefined : read));
		if (task && String(task.uid).toLowerCase() === uid) found.set(uid, task);
	}
	return found;
}

// Sending planned writes in batches: /tasks/batch (or /tasks/{uid} for one), the batch size a server accepts learnt
// per caller, a 422 split to the items it names, and the answer read by uid.

/**
 * What a write got: the task as the service answered, or an error. `existed`: the answer to a PUT does not show the
 * values sent, so the task was there already (created meanwhile by someone else) and the server kept its values.
 */
export type WriteResult = { task: IDataObject; existed?: true } | { error: Error };

export type Method = 'PUT' | 'PATCH';

/** One request's worth of work: the values to write for a uid, and the write (input item) it answers. */
export interface Planned {
	method: Method;
	uid: string;
	/** What the write sets; a PATCH sends it over the task's `current` custom fields (see sentBody). */
	body: IDataObject;
	/** The task as last read, for a PATCH: its custom fields are sent along, so none is lost where PATCH replaces. */
	current?: IDataObject;
	/** When the read the plan rests on was sent (now(), callers/registry.ts): a write of the same task by another execution since is newer. */
	readAt?: number;
	itemIndex: number;
	/** For a PUT: what to do when the answer shows the task existed after all (created meanwhile by someone else). */
	ifExisted?: 'patch' | 'fail';
	/**
	 * For a PATCH of Create or Update: not sent, and answered with the task, when the task already holds the values as
	 * last read or written. Decided when its batch is sent, not when it was planned, so that a write of the same task by
	 * an execution that came first (sharing/coalesce.ts) is seen: skipped at planning, a write that sets the values back would
	 * be lost behind that one.
	 */
	unlessHeld?: boolean;
	/**
	 * For a PATCH: its task is read again just before its batch is sent, and sent over what that read shows (Sync
	 * Backlog, whose listing may be minutes old): a key set meanwhile by someone else is kept even where PATCH replaces
	 * `fields`.
	 */
	reread?: boolean;
	/** The run that asked for the write: writes of several runs may share a batch (see sharing/coalesce.ts). */
	owner?: WriteOwner;
}

/**
 * One run's say over its writes in a shared batch: its batch size, and whether it sends nothing more after a failure.
 * Never its client or context: a shared batch is sent by the run the lane elected to send it (sharing/coalesce.ts, Lane).
 */
export interface WriteOwner {
	batchSize: number;
	stopOnError: boolean;
	failed?: boolean;
	/**
	 * n8n's cancel signal of the run: once it fires, its writes not yet sent are taken out of the batches still to go
	 * (a turn of the shared lanes carries several).
	 */
	signal?: AbortSignal;
}

/**
 * A PUT answered with `task` (see WriteResult.existed). Decided as each batch is answered, while the next one waits for
 * its turn at the rate limit, rather than for every write after the last answer.
 */
export const answeredPut = (write: Planned, task: IDataObject): WriteResult =>
	showsOurValues(task, write.body) ? { task } : { task, existed: true };

/** The body of a PATCH that keeps every custom field it was not asked to change, whether the server merges or replaces. */
function sentBody({ body, current }: Planned): IDataObject {
	if (!body.fields || !current) return body;
	return {
		...body,
		fields: { ...((current.fields ?? {}) as IDataObject), ...(body.fields as IDataObject) },
	};
}

const NOT_SENT = 'Not sent: an earlier item of this node failed';

/** The answer of a write held back because another of its run failed first (without Continue On Fail). */
export const notSent = () => new Error(NOT_SENT);

/** Whether an error only says the write was held back after another failed (see notSent): it is not the cause. */
export const isNotSent = (error: Error) => error.message === NOT_SENT;

/** The batch size the server accepted for a caller, if it refused a longer batch: a server may cap batches without documenting it. */
export interface BatchSizeMemory {
	accepted: number;
}

/**
 * What this caller learnt of the server's batch size (callers/registry.ts): learnt once for the caller's executions,
 * not again by each with a refused batch of its own.
 */
export async function batchSizeMemory(client: BacklogClient): Promise<BatchSizeMemory> {
	return callerState(await client.callerKey()).part('batchSize', () => ({ accepted: Infinity }));
}

/**
 * Whether an error says the batch was too long, and the size to try next: a 413, or a 422 about the `items` list
 * itself ("ensure this value has at most 50 items", a `loc` ending at `items`), never one item's message ("fields.title:
 * value too long"), which names the item that fails, not the batch.
 */
function tooLarge(error: unknown, count: number): number | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	const body = responseBody(error);
	const text = `${error.message} ${typeof body === 'string' ? body : JSON.stringify(body ?? '')}`;
	if (
		!hasStatus(error, 413) &&
		!(hasStatus(error, 422) && aboutTheList(body, text) && failingItems(error, count).size === 0)
	) {
		return undefined;
	}
	const stated = Number(/at most (\d+)/i.exec(text)?.[1]);
	const next =
		Number.isInteger(stated) && stated >= 1 && stated < count ? stated : smallerSize(count);
	return Math.max(1, next);
}

/**
 * The batch size to try after `count` was refused without a number: the largest round size (1, 2, 2.5 or 5 × a power
 * of ten: limits are set as 25, 50, 100 …) from half of `count` up, else half. Halving alone learns a limit of 50 as
 * 33 from a refused 66 (the shared turns of a burst are of any length), and sends every later batch a third short.
 */
function smallerSize(count: number): number {
	const half = Math.floor(count / 2);
	for (let power = 10 ** Math.floor(Math.log10(count)); power >= 1; power /= 10)
		for (const step of [5, 2.5, 2, 1]) {
			const size = step * power;
			if (Number.isInteger(size) && size < count && size >= half) return size;
		}
	return half;
}

/** A 422 about the length of the `items` list: a detail located at `items` itself, or a message counting items. */
function aboutTheList(body: unknown, text: string): boolean {
	const detail =
		body && typeof body === 'object' && Array.isArray((body as IDataObject).detail)
			? ((body as IDataObject).detail as IDataObject[])
			: [];
	const located = detail.some(
		(entry) => Array.isArray(entry?.loc) && entry.loc[entry.loc.length - 1] === 'items',
	);
	// Linear in the message's length: nothing before the number can match the same spaces two ways (a 422 quotes what
	// it refused, and a quoted title of "max" and 100,000 spaces must not hold n8n's main loop).
	const counted =
		/(?:at most|no more than|up to|maximum(?: of)?|max\.?|limit(?: is| of)?)\s*(?::\s*)?\d+\s*(?:items|tasks|entries)|too many (?:items|tasks|entries)|batch (?:is )?too (?:large|long|big)|batch size/i;
	return located || counted.test(text);
}

async function sendOne(client: BacklogClient, write: Planned): Promise<IDataObject> {
	const path = `/tasks/${write.uid}`;
	const body = write.method === 'PUT' ? { ...write.body, uid: write.uid } : sentBody(write);
	return await client.request<IDataObject>({
		method: write.method,
		path,
		body,
		itemIndex: write.itemIndex,
	});
}

/** Indexes of the batch items a 422 names, e.g. `loc: ["body", "items", 3, "fields", "title"]`. */
function failingItems(error: Error, count: number): Map<number, string> {
	const failing = new Map<number, string>();
	const body = (responseBody(error) ?? {}) as IDataObject;
	const detail = Array.isArray(body.detail) ? (body.detail as IDataObject[]) : [];
	for (const entry of detail) {
		const loc = Array.isArray(entry?.loc) ? entry.loc : [];
		const at = loc.findIndex((part) => part === 'items');
		const index = Number(loc[at + 1]);
		if (at < 0 || !Number.isInteger(index) || index < 0 || index >= count) continue;
		const field = loc.slice(at + 2).join('.');
		const text = `${field ? `${field}: ` : ''}${String(entry.msg ?? entry.message ?? 'invalid')}`;
		failing.set(index, failing.has(index) ? `${failing.get(index)}; ${text}` : text);
	}
	return failing;
}

function notInAnswer(client: BacklogClient, write: Planned): Error {
	return new NodeOperationError(
		client.ctx.getNode(),
		`Item ${write.itemIndex}: the service's answer to the batch did not include task ${write.uid}, so whether it was written is not known`,
		{
			itemIndex: write.itemIndex,
			description:
				'Run the node again: the write is idempotent (same uid), so a task already written is not written twice.',
		},
	);
}

/** How many runs (WriteOwner) these writes belong to; writes without an owner count as one. */
const ownersOf = (writes: Planned[]) => new Set(writes.map((write) => write.owner)).size;

/** One request's outcome: an answer for every write, or the error of the request as a whole. */
type Attempt = { results: WriteResult[] } | { error: unknown };

/** What a batch's writes got, and the batch size learnt on the way (see sizeDown). */
interface BatchOutcome {
	results: WriteResult[];
	/** Set when the batch was refused for its length and every write then went in batches of at most this size. */
	acceptedSize?: number;
}

/**
 * Sends the writes as one request (/tasks/batch, or /tasks/{uid} for one); the error is the request's, as it came.
 * Writes of several runs go once, without retries (ApiRequest.shared): a failure is split by run (splitByOwner).
 */
async function attempt(client: BacklogClient, writes: Planned[]): Promise<Attempt> {
	const shared = ownersOf(writes) > 1;
	try {
		if (writes.length === 1) return { results: [{ task: await sendOne(client, writes[0]) }] };
		const response = await client.request<{ items?: IDataObject[] }>({
			method: writes[0].method,
			path: '/tasks/batch',
			body: { items: writes.map((write) => ({ ...sentBody(write), uid: write.uid })) },
			itemIndex: writes[0].itemIndex,
			shared,
		});
		const returned = Array.isArray(response?.items) ? response.items : [];
		const byUid = new Map(returned.map((task) => [String(task.uid).toLowerCase(), task]));
		// By uid only: a task at the same position may be another one, and its values would be taken for this item's.
		return {
			results: writes.map((write) => {
				const task = byUid.get(write.uid);
				return task ? { task } : { error: notInAnswer(client, write) };
			}),
		};
	} catch (error) {
		return { error };
	}
}

/**
 * Sends one batch. A batch is written whole or not at all, so when the service refuses it the batch is taken apart
 * until each write gets its own answer: a refusal of the batch's length sends it again in smaller batches (sizeDown);
 * a 422 naming items fails those and sends the others again; the writes of several runs are split by run
 * (splitByOwner), whatever the status and message, so that a run only ever gets the error of a request that carried
 * nothing but its own writes; one run's 422 naming no item is halved. Anything else fails every write of the batch
 * (one run's own): none is reported as done.
 */
async function writeBatch(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const first = await attempt(client, writes);
	if ('results' in first) return first;
	return await settle(client, writes, first.error);
}

/**
 * The answers of writes whose request failed with `error` (see writeBatch); `level`: how many splits by run in a row
 * failed as an outage would (splitByOwner).
 */
async function settle(
	client: BacklogClient,
	writes: Planned[],
	error: unknown,
	level = 1,
): Promise<BatchOutcome> {
	const fail = (reason: unknown) => ({ results: writes.map(() => ({ error: reason as Error })) });
	// n8n aborted the sender's requests: the other runs' writes go again with a live run's client (writeAll).
	if (writes.length === 1 || isCancelled(client)) return fail(error);
	const smaller = tooLarge(error, writes.length);
	if (smaller !== undefined) return await sizeDown(client, writes, smaller);
	if (hasStatus(error, 422) && failingItems(error, writes.length).size > 0)
		return await splitInvalid(client, writes, error);
	// A 401 is the credential's, and a 429 that outlasted the attempts is the token's: every run of it has it alike.
	if (hasStatus(error, 401, 429)) return fail(error);
	if (ownersOf(writes) > 1) return await splitWrites(client, writes, level);
	if (hasStatus(error, 422)) return await inHalves(client, writes);
	return fail(error);
}

/** Writes in halves: each half gets its own answer, whatever the other got. */
async function inHalves(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const half = Math.ceil(writes.length / 2);
	const outcomes = [
		await writeBatch(client, writes.slice(0, half)),
		await writeBatch(client, writes.slice(half)),
	];
	return { results: outcomes.flatMap((outcome) => outcome.results) };
}

/** A failure that may pass by itself: a 5xx the spec calls transient, or no answer at all (a network error). */
export const transient = (error: unknown) =>
	statusOf(error) === undefined || hasStatus(error, 500, 502, 503, 504);

/** How splitByOwner sends the parts of a failed request of several executions (runs). */
export interface OwnerSplit<P, O> {
	/** Whose a part is: an execution (a lane's member) or a run (a write's owner). */
	ownerOf: (part: P) => unknown;
	/** Sends one half once: what each of its parts got, and the failure of the half's request as a whole, if any. */
	send: (half: P[]) => Promise<{ outcomes: O[]; failure?: unknown }>;
	/** What a half whose request failed gets next (split further at `level`), or undefined to keep what send gave. */
	again: (half: P[], failure: unknown, level: number) => Promise<O[] | undefined>;
	/** The wait before going further after both halves failed as an outage would: a retry's at `level`. */
	backoffMs: (level: number) => number;
}

/**
 * The one splitter of a failed request that carried the entries of several executions (a shared turn of a lane,
 * sharing/coalesce.ts, or a shared batch, writeBatch): sent again in two halves of whole executions, in order, each
 * half once, until a part holds one execution's entries, which is then sent by that execution's own way (its client,
 * its retries). No message, status or quoted value decides who is at fault: one write refused on every try among 50
 * runs costs 2 × ceil(log2 50) requests and its run's attempts. When both halves fail with a transient status (an
 * outage, not one write), the split waits as a retry would before going further (`level`: how many such splits in a
 * row).
 */
export async function splitByOwner<P, O>(
	parts: P[],
	split: OwnerSplit<P, O>,
	level: number,
): Promise<O[]> {
	const owners = [...new Set(parts.map(split.ownerOf))];
	const half = Math.ceil(owners.length / 2);
	const halves = [owners.slice(0, half), owners.slice(half)].map((group) =>
		parts.flatMap((part, index) => (group.includes(split.ownerOf(part)) ? [index] : [])),
	);
	const outcomes: O[] = new Array(parts.length);
	const failed: Array<{ indexes: number[]; failure: unknown }> = [];
	for (const indexes of halves) {
		const sent = await split.send(indexes.map((index) => parts[index]));
		indexes.forEach((index, position) => (outcomes[index] = sent.outcomes[position]));
		if (sent.failure !== undefined) failed.push({ indexes, failure: sent.failure });
	}
	const outage = failed.length === 2 && failed.every(({ failure }) => transient(failure));
	if (outage) await sleep(split.backoffMs(level));
	for (const { indexes, failure } of failed) {
		const again = await split.again(
			indexes.map((index) => parts[index]),
			failure,
			outage ? level + 1 : 1,
		);
		if (again) indexes.forEach((index, position) => (outcomes[index] = again[position]));
	}
	return outcomes;
}

/**
 * The writes of several runs, whose request failed (splitByOwner): a half that holds one run's writes is sent with the
 * sender's client and retried under its policy (writeBatch; a lane's executions share their retry policy,
 * sharing/coalesce.ts), a half of several runs once, and a half that failed is settled again.
 */
async function splitWrites(
	client: BacklogClient,
	writes: Planned[],
	level: number,
): Promise<BatchOutcome> {
	const results = await splitByOwner<Planned, WriteResult>(
		writes,
		{
			ownerOf: (write) => write.owner,
			send: async (half) => {
				if (ownersOf(half) === 1) return { outcomes: (await writeBatch(client, half)).results };
				const tried = await attempt(client, half);
				return 'results' in tried
					? { outcomes: tried.results }
					: { outcomes: [], failure: tried.error };
			},
			again: async (half, failure, next) => (await settle(client, half, failure, next)).results,
			backoffMs: (next) => client.backoffMs(next),
		},
		level,
	);
	return { results };
}

/**
 * A batch refused for its length, sent again in batches of `size`. The size is learnt (acceptedSize) only when every
 * write then went through: a 413 that persists down to one write is about that write (too large a value), which
 * fails alone, and says nothing of the batch size.
 */
async function sizeDown(
	client: BacklogClient,
	writes: Planned[],
	size: number,
): Promise<BatchOutcome> {
	const outcomes: BatchOutcome[] = [];
	for (let start = 0; start < writes.length; start += size)
		outcomes.push(await writeBatch(client, writes.slice(start, start + size)));
	const results = outcomes.flatMap((outcome) => outcome.results);
	if (results.some((result) => 'error' in result)) return { results };
	const learnt = outcomes.map((outcome) => outcome.acceptedSize ?? size);
	return { results, acceptedSize: Math.min(...learnt) };
}

/** A 422: the items it names fail with its reason, the others are sent again; naming none, the batch is halved. */
async function splitInvalid(
	client: BacklogClient,
	writes: Planned[],
	error: NodeApiError,
): Promise<BatchOutcome> {
	const failing = failingItems(error, writes.length);
	if (failing.size === 0) return await inHalves(client, writes);
	const rest = writes.filter((_, index) => !failing.has(index));
	const restResults = rest.length > 0 ? (await writeBatch(client, rest)).results : [];
	let next = 0;
	return {
		results: writes.map((write, index) => {
			const reason = failing.get(index);
			if (reason === undefined) return restResults[next++];
			const itemError = new NodeApiError(
				error.node,
				{ status: 422, message: reason },
				{
					message: `The service rejected task ${write.uid} (422 Unprocessable Entity): ${reason}`,
					description: 'Correct the field named in the message in this input item.',
					httpCode: '422',
					itemIndex: write.itemIndex,
				},
			);
			return { error: itemError };
		}),
	};
}

/**
 * How old the read a PATCH rests on may be when its batch goes. A PATCH sends the task's custom fields along
 * (sentBody): read longer ago (it waited for a shared turn, or behind the run's earlier batches), a field someone set
 * meanwhile would be sent back to its old value, whether the server merges `fields` or replaces it. Such a task is
 * read again first (one bulk read for the batch).
 */
export const STALE_READ_MS = 1000;

/** Whether a write's task is read again just before its batch is sent (Planned.reread, or a stale read). */
const needsReread = (write: Planned, at: number) =>
	write.method === 'PATCH' &&
	write.body.fields !== undefined &&
	(write.reread === true || (write.readAt !== undefined && at - write.readAt > STALE_READ_MS));

/** Reads again, just before their batch is sent, the tasks whose custom fields a PATCH sends along (needsReread). */
async function reread(client: BacklogClient, batch: Planned[]): Promise<Planned[]> {
	const at = now();
	const uids = batch.filter((write) => needsReread(write, at)).map((write) => write.uid);
	if (uids.length === 0) return batch;
	const fresh = await readTasksByUid(client, uids, batch[0].itemIndex);
	return batch.map((write) => ({ ...write, current: fresh.get(write.uid) ?? write.current }));
}

/**
 * Sends the planned writes of one method in batches of at most `batchSize` (or the smaller size the server
 * accepted, learnt for the caller: batchSizeMemory), each write answered in order. A write whose owner stops on error and
 * already had one is not sent. The tasks of the writes marked `reread` are read again just before their batch is sent.
 *
 * The writes may be several runs' (a shared turn, sharing/coalesce.ts), sent with one run's client. When n8n cancels that run
 * its requests are aborted, and the writes not yet answered are answered as cancelled: the shared lane sends the other
 * runs' writes again with a live run (sharing/coalesce.ts, Lane; PUT and PATCH with the same values are idempotent, so a write
 * that landed before the abort is not doubled).
 */
export async function writeAll(
	client: BacklogClient,
	writes: Planned[],
	batchSize: number,
): Promise<WriteResult[]> {
	const results: WriteResult[] = new Array(writes.length);
	let pending = writes.map((_, index) => index);
	const sizes = await batchSizeMemory(client);
	while (pending.length > 0) {
		if (isCancelled(client)) {
			for (const at of pending) results[at] = { error: cancelled(client) };
			break;
		}
		const size = Math.max(1, Math.min(Math.floor(batchSize), sizes.accepted));
		const slice = pending.slice(0, size);
		pending = pending.slice(size);
		const sending = slice.filter((at) => {
			const { owner } = writes[at];
			if (owner?.signal?.aborted === true) results[at] = { error: cancelled(client) };
			else if (owner?.stopOnError && owner.failed) results[at] = { error: notSent() };
			else return true;
			return false;
		});
		const answers = await sendBatch(
			client,
			sending.map((at) => writes[at]),
			sizes,
		);
		const written: string[] = [];
		for (const [index, at] of sending.entries()) {
			const answer = answers[index];
			const result =
				writes[at].method === 'PUT' && 'task' in answer
					? answeredPut(writes[at], answer.task)
					: answer;
			results[at] = result;
			const { owner } = writes[at];
			// Aborted with its sender: not the run's failure (the lane sends the others' writes again).
			if ('error' in result && owner && !isCancelled(client)) owner.failed = true;
			else if ('task' in result) written.push(writes[at].uid);
		}
		await sawTasks(client, written);
	}
	return results;
}

/**
 * One batch of writes, its tasks read again first where asked (Planned.reread), and those that already hold their
 * values answered without a request (Planned.unlessHeld).
 */
async function sendBatch(
	sender: BacklogClient,
	writes: Planned[],
	sizes: BatchSizeMemory,
): Promise<WriteResult[]> {
	let batch = writes;
	const at = now();
	if (batch.some((write) => needsReread(write, at))) {
		try {
			batch = await reread(sender, batch);
		} catch (error) {
			// Not read, not written: the batch's items fail with the read's error.
			return writes.map(() => ({ error: error as Error }));
		}
	}
	// Create or Update of a task that already holds the values, as last read or written: nothing to send.
	const held = batch.map(
		(write) =>
			write.unlessHeld === true &&
			write.current !== undefined &&
			hasValues(write.current, write.body),
	);
	const toSend = batch.filter((_, index) => !held[index]);
	const outcome = toSend.length > 0 ? await writeBatch(sender, toSend) : { results: [] };
	if (outcome.acceptedSize !== undefined)
		sizes.accepted = Math.min(sizes.accepted, outcome.acceptedSize);
	let next = 0;
	return batch.map((write, index) =>
		held[index] ? { task: write.current! } : outcome.results[next++],
	);
}
