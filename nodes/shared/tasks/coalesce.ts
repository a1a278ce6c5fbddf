import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import type { BacklogClient } from '../transport/client';
import type { Method, Planned, WriteResult } from './batches';
import { acceptedBatchSizeOf, shareAcceptedBatchSize, writeAll } from './batches';
import { readTasksByUid, UIDS_PER_READ } from './readByUid';

/**
 * Group commit across the executions of one n8n process, as a Kafka producer batches the records that queue while a
 * request is in flight. The spec's usage is event-driven: one ticket per execution, many executions at once. Per
 * caller (base URL, token and the headers that say who calls: BacklogClient.callerKey) and per kind of request (bulk
 * read, PUT, PATCH), one request is under way at a time; what other executions ask for meanwhile waits and goes out
 * with the next one, as one `uid in [...]` read or as /tasks/batch requests. A lone request goes at once: nothing is
 * held back for company (see Lane.linger for a stream of events).
 *
 * Each execution gets exactly its own results: its own tasks, and its own errors (a copy naming its node). Requests
 * of different callers never share a request. An execution cancelled while it waits takes its writes out.
 */

/** Entries waiting in one lane at most; past it an execution sends on its own, as if no other were running. */
export const MAX_WAITING = 10_000;

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

/** A burst is still arriving while entries come less than this share of a request spacing apart. */
const ARRIVING = 0.25;

/**
 * The same for a bulk read: n8n starts the executions of a burst in bunches up to a second or two apart, and a read
 * sent in such a pause costs two requests for the few that arrived before it.
 */
const READS_ARRIVING = 1;

interface Waiting<E, R> {
	owner: BacklogClient;
	entries: E[];
	/** Entries handed to a request so far; the results come back in the same order. */
	taken: number;
	results: R[];
	resolve: (results: R[]) => void;
	reject: (error: unknown) => void;
}

type Send<E, R> = (sender: BacklogClient, entries: E[]) => Promise<R[]>;

/** How a lane groups its entries into turns and how long a turn lingers for company. */
interface LaneShape<E> {
	/**
	 * How many entries one turn of the lane sends at most, given the first waiting one: a large run is sent in turns,
	 * taken round robin with the others waiting, so an event that arrives meanwhile waits one turn, not the whole run.
	 */
	groupSize: (first: E) => number;
	/**
	 * How many entries fill one request, given the first waiting one and its execution: a turn lingering for a burst
	 * goes once that many wait.
	 */
	fullSize: (first: E, owner: BacklogClient) => number;
	/**
	 * How many entries for this lane are on their way (a write lane: the uids of the same caller's reads waiting or
	 * under way, whose executions write next). While they would fill its request, or while the waiting entries are
	 * what a turn of full requests left, a turn lingers for them, up to maxFedLingerSpacings after its oldest entry,
	 * and sends only full requests meanwhile. Otherwise the entries go at once: a read lingers longer than a write
	 * would wait.
	 */
	feeding?: () => number;
	maxFedLingerSpacings?: number;
	/** How long a turn lingers for a burst at most, in request spacings after its oldest entry. */
	maxLingerSpacings: number;
	/** A burst is still arriving while entries come less than this many request spacings apart. */
	arrivingSpacings: number;
}

class Lane<E, R> {
	private readonly waiting: Array<Waiting<E, R>> = [];

	private waitingEntries = 0;

	/** Entries of the request under way. */
	private sendingEntries = 0;

	/** The waiting entries are what a turn of full requests left: a burst is under way (see linger). */
	private leftover = false;

	private busy = false;

	/** The execution whose request went last, and when: see linger. */
	private lastOwner?: BacklogClient;

	private lastSentAt = -Infinity;

	/** When the oldest waiting entry arrived (the lane's turn started waiting for it), and the newest. */
	private firstArrivalAt = Infinity;

	private lastArrivalAt = -Infinity;

	/** How long before the newest entry the one before it arrived: a lone event is not part of a burst. */
	private lastArrivalGap = Infinity;

	constructor(
		private readonly send: Send<E, R>,
		private readonly shape: LaneShape<E>,
	) {}

	/** Entries waiting or being sent. */
	get pendingEntries(): number {
		return this.waitingEntries + this.sendingEntries;
	}

	/** The executions with entries in the lane (those being sent included). */
	owners(): BacklogClient[] {
		return this.waiting.map((waiting) => waiting.owner);
	}

	async submit(owner: BacklogClient, entries: E[]): Promise<R[]> {
		if (entries.length === 0) return [];
		if (this.busy && this.waitingEntries + entries.length > MAX_WAITING)
			return await this.send(owner, entries);
		const done = new Promise<R[]>((resolve, reject) =>
			this.waiting.push({ owner, entries, taken: 0, results: [], resolve, reject }),
		);
		this.waitingEntries += entries.length;
		this.lastArrivalGap = Date.now() - this.lastArrivalAt;
		this.lastArrivalAt = Date.now();
		this.firstArrivalAt = Math.min(this.firstArrivalAt, this.lastArrivalAt);
		void this.pump();
		return await done;
	}

	/** One turn after another while entries wait: the oldest first, up to groupSize, as one send. */
	private async pump() {
		if (this.busy) return;
		this.busy = true;
		try {
			while (this.waiting.length > 0) {
				const fullOnly = await this.linger();
				this.leftover = fullOnly !== undefined;
				const parts: Array<{ waiting: Waiting<E, R>; count: number }> = [];
				const oldest = this.waiting[0];
				let room = Math.max(1, this.shape.groupSize(oldest.entries[oldest.taken]));
				if (fullOnly) room = Math.min(room, fullOnly);
				for (const waiting of [...this.waiting]) {
					if (room === 0) break;
					if (isCancelled(waiting.owner)) {
						this.drop(waiting, cancelled(waiting.owner));
						continue;
					}
					const count = Math.min(room, waiting.entries.length - waiting.taken);
					parts.push({ waiting, count });
					room -= count;
				}
				if (parts.length > 0) await this.sendTurn(parts);
			}
		} finally {
			this.busy = false;
		}
	}

	/**
	 * Another execution's request right after one went: events are arriving in a stream or a burst, which the spec asks
	 * callers not to send as a burst. The turn waits until one request spacing (window / rate: 1 s at 60 a minute) has
	 * passed since the last request, and what arrives meanwhile goes along. While more is on its way (entries arriving
	 * less than arrivingSpacings apart, up to maxLingerSpacings after the oldest arrived; or reads under way whose
	 * executions write next, see feeding, up to maxFedLingerSpacings) it waits for it until a request is
	 * full, and until then sends only full requests: the rest waits for what comes. A lone event (the first to arrive
	 * after a pause of arrivingSpacings) goes once a spacing has passed since the last request; the turns of one large
	 * run go at once.
	 * Returns how many entries the turn may take to send full requests only, or undefined for no such cap.
	 */
	private async linger(): Promise<number | undefined> {
		const first = this.waiting[0];
		if (first.owner === this.lastOwner || this.lastSentAt === -Infinity) return undefined;
		const spacing = await first.owner.requestSpacingMs();
		const wait = this.lastSentAt + spacing - Date.now();
		if (wait > 0) await sleep(wait);
		const until = this.firstArrivalAt + this.shape.maxLingerSpacings * spacing;
		const fedUntil = this.firstArrivalAt + (this.shape.maxFedLingerSpacings ?? 0) * spacing;
		const arriving = this.shape.arrivingSpacings * spacing;
		const full = Math.max(1, this.shape.fullSize(first.entries[first.taken], first.owner));
		const moreComing = (missing: number) => {
			const now = Date.now();
			return (
				(now < until && now - this.lastArrivalAt < arriving && this.lastArrivalGap < arriving) ||
				(now < fedUntil && this.fedEnough(missing))
			);
		};
		while (this.waitingEntries < full && moreComing(full - this.waitingEntries))
			await sleep(
				Math.min(
					Math.max(until, fedUntil) - Date.now(),
					Math.max(this.lastArrivalAt + arriving - Date.now(), ARRIVING * spacing),
				),
			);
		const rest = this.waitingEntries % full;
		return rest > 0 && moreComing(full - rest) ? this.waitingEntries - rest : undefined;
	}

	/**
	 * Whether the entries on their way (feeding) are worth waiting for: enough to fill the request, or any at all when
	 * the waiting ones are what a turn of full requests left (a burst, whose next read carries more).
	 */
	private fedEnough(missing: number): boolean {
		const fed = this.shape.feeding?.() ?? 0;
		return fed >= missing || (this.leftover && fed > 0);
	}

	private drop(waiting: Waiting<E, R>, error: unknown) {
		this.waiting.splice(this.waiting.indexOf(waiting), 1);
		this.waitingEntries -= waiting.entries.length - waiting.taken;
		waiting.reject(error);
	}

	private async sendTurn(parts: Array<{ waiting: Waiting<E, R>; count: number }>) {
		const sender = parts[0].waiting.owner;
		this.lastOwner = sender;
		this.lastSentAt = Date.now();
		const entries = parts.flatMap(({ waiting, count }) =>
			waiting.entries.slice(waiting.taken, waiting.taken + count),
		);
		for (const { waiting, count } of parts) {
			waiting.taken += count;
			this.waitingEntries -= count;
		}
		this.sendingEntries = entries.length;
		// What arrives from now on waits for the next turn: its lingering counts from the first of it.
		this.firstArrivalAt = this.waitingEntries > 0 ? Date.now() : Infinity;
		let results: R[];
		try {
			results = await this.send(sender, entries);
		} catch (error) {
			for (const { waiting } of parts)
				this.drop(waiting, waiting.owner === sender ? error : ownedError(waiting.owner, error));
			return;
		} finally {
			this.sendingEntries = 0;
		}
		let at = 0;
		for (const { waiting, count } of parts) {
			const own = results.slice(at, at + count);
			at += count;
			waiting.results.push(
				...(waiting.owner === sender ? own : own.map((result) => owned(waiting.owner, result))),
			);
			// Done, or to the back of the queue: the next turn starts with whoever waited behind it (round robin).
			this.waiting.splice(this.waiting.indexOf(waiting), 1);
			if (waiting.taken === waiting.entries.length) waiting.resolve(waiting.results);
			else this.waiting.push(waiting);
		}
	}
}

/** Whether n8n has cancelled the owner's execution (only an execution has a cancel signal). */
function isCancelled(owner: BacklogClient): boolean {
	const { ctx } = owner;
	return 'getExecutionCancelSignal' in ctx && ctx.getExecutionCancelSignal()?.aborted === true;
}

function cancelled(owner: BacklogClient): Error {
	return new NodeOperationError(
		owner.ctx.getNode(),
		'The execution was cancelled before its requests were sent',
	);
}

/**
 * An error of a request sent for several executions, as this execution's own: the same message, description and status,
 * naming its node, with no item index yet (the router sets the item it belongs to).
 */
function ownedError(owner: BacklogClient, error: unknown): unknown {
	if (!(error instanceof Error)) return error;
	const copy = Object.create(
		Object.getPrototypeOf(error),
		Object.getOwnPropertyDescriptors(error),
	) as Error & IDataObject;
	if ('node' in copy) copy.node = owner.ctx.getNode();
	if (copy.context && typeof copy.context === 'object')
		copy.context = { ...(copy.context as IDataObject), itemIndex: undefined };
	return copy;
}

function owned<R>(owner: BacklogClient, result: R): R {
	if (result && typeof result === 'object' && 'error' in result)
		return { ...result, error: ownedError(owner, result.error) };
	return result;
}

/** Tasks this process wrote lately, per caller: what another execution's older read does not show yet. */
interface Written {
	task: IDataObject;
	at: number;
}

/** Tasks remembered per caller at most (the oldest are forgotten first). */
const MAX_REMEMBERED = 10_000;

/** What one caller (BacklogClient.callerKey) shares in this process: its lanes, and the tasks it wrote lately. */
interface Caller {
	reads?: Lane<string, IDataObject | undefined>;
	writes: Map<Method, Lane<Planned, WriteResult>>;
	written: Map<string, Written>;
}

const callers = new Map<string, Caller>();

async function callerOf(client: BacklogClient): Promise<Caller> {
	const key = await client.callerKey();
	let caller = callers.get(key);
	if (!caller) callers.set(key, (caller = { writes: new Map(), written: new Map() }));
	return caller;
}

/** The executions of a caller with entries in any of its lanes. */
function companyOf(caller: Caller): BacklogClient[] {
	const lanes = [caller.reads, ...caller.writes.values()];
	return [...new Set(lanes.flatMap((lane) => lane?.owners() ?? []))];
}

/** Reads in bulk the tasks of these uids (readByUid.ts), together with the uids other executions wait to read. */
export async function readTasksShared(
	client: BacklogClient,
	uids: string[],
): Promise<Map<string, IDataObject>> {
	const caller = await callerOf(client);
	caller.reads ??= new Lane(
		async (sender, all) => {
			const found = await readTasksByUid(sender, all);
			return all.map((uid) => found.get(uid));
		},
		{
			groupSize: () => UIDS_PER_READ,
			fullSize: () => UIDS_PER_READ,
			maxLingerSpacings: MAX_READ_LINGER_SPACINGS,
			arrivingSpacings: READS_ARRIVING,
		},
	);
	const unique = [...new Set(uids)];
	const tasks = await caller.reads.submit(client, unique);
	const found = new Map<string, IDataObject>();
	unique.forEach((uid, index) => {
		const task = tasks[index];
		if (task) found.set(uid, task);
	});
	return found;
}

/**
 * Sends planned writes of one method (batches.ts), in /tasks/batch requests shared with the writes other executions
 * wait to send. The batch size is the smallest of the waiting executions' Batch Size.
 */
export async function sendWritesShared(
	client: BacklogClient,
	writes: Planned[],
): Promise<WriteResult[]> {
	if (writes.length === 0) return [];
	const caller = await callerOf(client);
	const { method } = writes[0];
	let lane = caller.writes.get(method);
	if (!lane) {
		lane = new Lane(
			async (sender, all) => {
				// The batch size the server accepts (learnt from a refused batch) is learnt once for the executions of the
				// caller under way, not again by each with a refused batch of its own.
				for (const owner of companyOf(caller)) shareAcceptedBatchSize(owner, [sender]);
				const results = await sendInRounds(sender, all, caller.written);
				shareAcceptedBatchSize(sender, companyOf(caller));
				return results;
			},
			{
				groupSize: (first) => (first.owner?.batchSize ?? 1) * BATCHES_PER_TURN,
				fullSize: (first, owner) =>
					Math.min(first.owner?.batchSize ?? 1, acceptedBatchSizeOf(owner)),
				feeding: () => caller.reads?.pendingEntries ?? 0,
				maxLingerSpacings: MAX_LINGER_SPACINGS,
				maxFedLingerSpacings: MAX_FED_LINGER_SPACINGS,
				arrivingSpacings: ARRIVING,
			},
		);
		caller.writes.set(method, lane);
	}
	return await lane.submit(client, writes);
}

function remember(written: Map<string, Written>, uid: string, task: IDataObject) {
	written.delete(uid);
	written.set(uid, { task, at: Date.now() });
	if (written.size > MAX_REMEMBERED) written.delete(written.keys().next().value as string);
}

/**
 * The writes of one turn. Two executions may plan a write of the same task from reads made before either wrote:
 * each write is brought up to what this process has written since its read. A PATCH is sent over the task as the
 * earlier write left it (not over what it read), so it does not undo the earlier one; a PUT of a task an earlier
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
					results[index] = { task: since.task };
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
