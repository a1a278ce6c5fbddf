import type { IDataObject } from 'n8n-workflow';

import { callerState, now } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { cancelled, cancelSignal } from '../transport/client';
import type { RetryPolicy } from '../transport/errors';
import { backoffMs } from '../transport/errors';
import type { BatchSizeMemory, Planned, WriteResult } from '../tasks/send';
import type { TaskGateway } from '../tasks/writeTasks';
import {
	answeredPut,
	batchSizeMemory,
	readTasksByUid,
	UIDS_PER_READ,
	writeAll,
} from '../tasks/send';
import type { Member, Own, Pace } from './lane';
import { ARRIVING, Lane, newPace } from './lane';

/**
 * The shared gateway (TaskGateway, tasks/writeTasks.ts): group commit across the executions of one n8n process, as a Kafka producer batches the records that queue while a
 * request is in flight. The spec's usage is event-driven: one ticket per execution, many executions at once. Per
 * caller (base URL, token and the headers that say who calls: BacklogClient.callerKey) and per kind of request (bulk
 * read, PUT, PATCH), one request is under way at a time; what other executions ask for meanwhile waits and goes out
 * with the next one, as one `uid in [...]` read or as /tasks/batch requests. A lone request goes at once: nothing is
 * held back for company (see Lane.linger, lane.ts, for a stream of events).
 *
 * Each execution gets exactly its own results: its own tasks, and its own errors (a copy naming its node). Requests
 * of different callers never share a request. An execution cancelled while it waits takes its writes out.
 */

/** Batches one turn of a write lane sends at most (see Lane). */
const BATCHES_PER_TURN = 10;

/**
 * While a burst is still arriving, a write turn waits for it at most this many request spacings after the oldest
 * waiting entry arrived (3 s at 60 a minute): few large requests instead of many small ones, as a Kafka producer's
 * linger.ms.
 */
const MAX_LINGER_SPACINGS = 3;

/**
 * The same for a bulk read, which costs two requests (tasks not archived, then archived): lingering twice as long
 * keeps a burst's reads to a third of the rate, the rest left to its writes (measured on n8n 2.x, 300 events at once:
 * with 3 spacings, 9 read turns took 18 of 29 requests).
 */
const MAX_READ_LINGER_SPACINGS = 6;

/**
 * How long a write turn waits at most for the writes of reads under way (see LaneShape.feeding), in request spacings
 * after its oldest entry: one read turn's lingering and its two requests, so the part of a burst's writes that did not
 * fill a request goes with the next read's writes, not alone.
 */
const MAX_FED_LINGER_SPACINGS = MAX_READ_LINGER_SPACINGS + 2;

/**
 * A burst of bulk reads is still arriving while entries come less than this many request spacings apart (writes:
 * ARRIVING, a quarter): n8n starts the executions of a burst in bunches up to a second or two apart, and a read sent
 * in such a pause costs two requests for the few that arrived before it.
 */
const READS_ARRIVING = 1;

/** Tasks this process wrote lately, per caller: what another execution's older read does not show yet. */
interface Written {
	task: IDataObject;
	at: number;
}

/** Tasks remembered per caller at most (the oldest are forgotten first). */
const MAX_REMEMBERED = 10_000;

/**
 * How long a written task is remembered. A write needs it only while another execution's plan rests on a read older
 * than it: a write waits for a turn some request spacings at most (MAX_FED_LINGER_SPACINGS, 8 s at 60 a minute), and
 * a PATCH whose read is older than STALE_READ_MS reads its task again anyway (send.ts). Two minutes covers the
 * slowest rate a credential is likely to be set to, without keeping tasks for ever.
 */
export const WRITTEN_HORIZON_MS = 120_000;

/**
 * What one caller (BacklogClient.callerKey) shares in this process: its lanes, and the tasks it wrote lately. Lanes
 * are keyed by the settings a request depends on (settingsKey): only executions that would send the same requests
 * share one; another execution's Max Attempts or Batch Size never decides how mine are sent.
 */
interface Sharing {
	reads: Map<string, Lane<string, IDataObject | undefined>>;
	writes: Map<string, Lane<Planned, WriteResult>>;
	written: Map<string, Written>;
	/** The pace of its reads, and of its writes per method, whatever lane they take (see Lane). */
	paces: Map<string, Pace>;
	/** Entries waiting or under way in its lanes: the caller's state is then not dropped (callers/registry.ts). */
	busy(): boolean;
}

async function sharingOf(client: BacklogClient): Promise<Sharing> {
	return callerState(await client.callerKey()).part('sharing', () => {
		const sharing: Sharing = {
			reads: new Map(),
			writes: new Map(),
			written: new Map(),
			paces: new Map(),
			busy: () =>
				[...sharing.reads.values(), ...sharing.writes.values()].some(
					(lane) => lane.pendingEntries > 0,
				),
		};
		return sharing;
	});
}

function paceOf(caller: Sharing, kind: string): Pace {
	let pace = caller.paces.get(kind);
	if (!pace) caller.paces.set(kind, (pace = newPace()));
	return pace;
}

/** The settings a request of this execution depends on besides its entries: its retry policy. */
const settingsKey = ({ retry }: BacklogClient) =>
	`${retry.maxAttempts} ${retry.baseDelayMs} ${retry.maxDelayMs}`;

/** A number per execution's client, held weakly: what a lane knows of whose entries are whose. */
const executionNumbers = new WeakMap<BacklogClient, number>();
let executionsNumbered = 0;

/**
 * What a lane keeps of this execution while its entries wait (lane.ts Member): a number, its cancel signal, the
 * caller's request spacing and a copy of its retry policy's backoff; never its client or context.
 */
async function memberOf(client: BacklogClient): Promise<Member> {
	let id = executionNumbers.get(client);
	if (id === undefined) executionNumbers.set(client, (id = ++executionsNumbered));
	const policy: RetryPolicy = { ...client.retry };
	return {
		id,
		signal: cancelSignal(client),
		spacingMs: await client.requestSpacingMs(),
		backoffMs: (level) => backoffMs(policy, level),
	};
}

/** What this execution does with its own client for a lane (lane.ts Own): kept in its own frame while it waits. */
function ownOf<E, R>(client: BacklogClient, send: (entries: E[]) => Promise<R[]>): Own<E, R> {
	return {
		send,
		adopt: (result) => owned(client, result),
		adoptError: (error) => ownedError(client, error),
		cancelled: () => cancelled(client),
	};
}

/*
 * The lanes are made apart from any execution's frame (no client in scope): a closure a lane keeps would otherwise
 * keep the scope of the execution that made it, its client included.
 */

function readLane(caller: Sharing, key: string): Lane<string, IDataObject | undefined> {
	let lane = caller.reads.get(key);
	if (!lane) {
		lane = new Lane<string, IDataObject | undefined>(
			{
				groupSize: () => UIDS_PER_READ,
				fullSize: () => UIDS_PER_READ,
				maxLingerSpacings: MAX_READ_LINGER_SPACINGS,
				arrivingSpacings: READS_ARRIVING,
			},
			paceOf(caller, 'reads'),
		);
		caller.reads.set(key, lane);
	}
	return lane;
}

function writeLane(
	caller: Sharing,
	key: string,
	method: string,
	sizes: BatchSizeMemory,
): Lane<Planned, WriteResult> {
	let lane = caller.writes.get(key);
	if (!lane) {
		lane = new Lane<Planned, WriteResult>(
			{
				groupSize: (first) => (first.owner?.batchSize ?? 1) * BATCHES_PER_TURN,
				fullSize: (first) => Math.min(first.owner?.batchSize ?? 1, sizes.accepted),
				feeding: () =>
					[...caller.reads.values()].reduce((sum, reads) => sum + reads.pendingEntries, 0),
				maxLingerSpacings: MAX_LINGER_SPACINGS,
				maxFedLingerSpacings: MAX_FED_LINGER_SPACINGS,
				arrivingSpacings: ARRIVING,
				undecided: (result) => 'error' in result,
			},
			paceOf(caller, method),
		);
		caller.writes.set(key, lane);
	}
	return lane;
}

/** Reads in bulk the tasks of these uids (send.ts), together with the uids other executions wait to read. */
export async function readTasksShared(
	client: BacklogClient,
	uids: string[],
): Promise<Map<string, IDataObject>> {
	const lane = readLane(await sharingOf(client), settingsKey(client));
	// Not made unique here: readTasksByUid reads each uid of a turn once (a uid may come from several executions),
	// and writeTasks, the one caller, passes each once.
	const tasks = await lane.submit(
		await memberOf(client),
		uids,
		ownOf(client, async (all: string[]) => {
			const found = await readTasksByUid(client, all);
			return all.map((uid) => found.get(uid));
		}),
	);
	const found = new Map<string, IDataObject>();
	uids.forEach((uid, index) => {
		const task = tasks[index];
		if (task) found.set(uid, task);
	});
	return found;
}

/**
 * Sends planned writes of one method (send.ts), in /tasks/batch requests shared with the writes other executions
 * with the same Batch Size and retry policy wait to send.
 */
export async function sendWritesShared(
	client: BacklogClient,
	writes: Planned[],
): Promise<WriteResult[]> {
	if (writes.length === 0) return [];
	const caller = await sharingOf(client);
	const { method } = writes[0];
	const key = `${method} ${writes[0].owner?.batchSize ?? 1} ${settingsKey(client)}`;
	const lane = writeLane(caller, key, method, await batchSizeMemory(client));
	const { written } = caller;
	return await lane.submit(
		await memberOf(client),
		writes,
		ownOf(client, async (all: Planned[]) => await sendInRounds(client, all, written)),
	);
}

function remember(written: Map<string, Written>, uid: string, task: IDataObject) {
	const at = now();
	written.delete(uid);
	written.set(uid, { task, at });
	// Oldest first (a Map keeps insertion order): past the horizon or the count, forgotten.
	for (const [oldUid, { at: writtenAt }] of written) {
		if (written.size <= MAX_REMEMBERED && at - writtenAt <= WRITTEN_HORIZON_MS) break;
		written.delete(oldUid);
	}
}

/**
 * The writes of one turn. Two executions may plan a write of the same task from reads made before either wrote:
 * each write is brought up to what this process has written since its read. A PATCH is sent over the task as the
 * earlier write left it (not over what it read), so it does not undo the earlier one, and a Create or Update whose
 * values that task already holds is not sent (Planned.unlessHeld); a PUT of a task an earlier
 * write has created is answered with that task, which its execution then PATCHes (Create or Update) or refuses as
 * taken (Create), as for a task created by someone else. A batch holds a uid once, so the same uid twice in a turn
 * goes in rounds, in the order the writes arrived.
 */
async function sendInRounds(
	sender: BacklogClient,
	all: Planned[],
	written: Map<string, Written>,
): Promise<WriteResult[]> {
	const batchSize = Math.min(...all.map((write) => write.owner?.batchSize ?? Infinity));
	const size = Number.isFinite(batchSize) ? batchSize : 1;
	const rounds: number[][] = [];
	const occurrences = new Map<string, number>();
	all.forEach((write, index) => {
		const round = occurrences.get(write.uid) ?? 0;
		occurrences.set(write.uid, round + 1);
		(rounds[round] ??= []).push(index);
	});
	const results: WriteResult[] = new Array(all.length);
	for (const round of rounds) {
		const sending: Planned[] = [];
		const at: number[] = [];
		for (const index of round) {
			const write = all[index];
			const since = written.get(write.uid);
			if (since && since.at > (write.readAt ?? 0)) {
				if (write.method === 'PUT') {
					results[index] = answeredPut(write, since.task);
					continue;
				}
				sending.push({ ...write, current: since.task });
			} else sending.push(write);
			at.push(index);
		}
		const sent = await writeAll(sender, sending, size);
		sent.forEach((result, position) => {
			results[at[position]] = result;
			if ('task' in result) remember(written, sending[position].uid, result.task);
		});
	}
	return results;
}

/** The gateway (TaskGateway, tasks/writeTasks.ts) whose requests are shared with the same caller's other executions at once. */
export const sharedGateway: TaskGateway = {
	readTasks: readTasksShared,
	sendWrites: sendWritesShared,
};

/**
 * An error of a request sent for several executions, as this execution's own: the same message, description and status,
 * naming its node, with no item index yet (the router sets the item it belongs to).
 */
function ownedError(client: BacklogClient, error: unknown): unknown {
	if (!(error instanceof Error)) return error;
	const copy = Object.create(
		Object.getPrototypeOf(error),
		Object.getOwnPropertyDescriptors(error),
	) as Error & IDataObject;
	if ('node' in copy) copy.node = client.ctx.getNode();
	if (copy.context && typeof copy.context === 'object')
		copy.context = { ...(copy.context as IDataObject), itemIndex: undefined };
	return copy;
}

function owned<R>(client: BacklogClient, result: R): R {
	if (result && typeof result === 'object' && 'error' in result)
		return { ...result, error: ownedError(client, result.error) };
	return result;
}
