import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { callerState } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { queryTasks, refusesCondition } from './queryTasks';
import { isCancelled } from '../transport/client';
import { hasStatus } from '../transport/errors';

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
