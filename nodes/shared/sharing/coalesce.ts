import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { callerState, now } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { cancelled, cancelSignal } from '../transport/client';
import type { RetryPolicy } from '../transport/errors';
import { backoffMs, hasStatus } from '../transport/errors';
import type { BatchSizeMemory, Planned, WriteResult } from '../tasks/send';
import {
	answeredPut,
	batchSizeMemory,
	readTasksByUid,
	splitByOwner,
	UIDS_PER_READ,
	writeAll,
} from '../tasks/send';
import type { TaskGateway } from '../tasks/writeTasks';

/**
 * The shared gateway (TaskGateway, tasks/writeTasks.ts): group commit across the executions of one n8n process, as a Kafka producer batches the records that queue while a
 * request is in flight. The spec's usage is event-driven: one ticket per execution, many executions at once. Per
 * caller (base URL, token and the headers that say who calls: BacklogClient.callerKey) and per kind of request (bulk
 * read, PUT, PATCH), one request is under way at a time; what other executions ask for meanwhile waits and goes out
 * with the next one, as one `uid in [...]` read or as /tasks/batch requests. A lone request goes at once: nothing is
 * held back for company (see Lane.linger, below, for a stream of events).
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
 * What a lane keeps of this execution while its entries wait (Member, below): a number, its cancel signal, the
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

/** What this execution does with its own client for a lane (Own, below): kept in its own frame while it waits. */
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

// One lane: its turns, its lingering for a burst, and each execution's own results.

/**
 * One lane of the group commit (above): the executions of one process that want the same kind of request of the
 * same caller wait here, and each turn sends what waits as one request (or one round of requests) for all of them.
 * What each execution gets back is its own: its results in the order it gave its entries, errors copied to name its
 * node, and nothing when it was cancelled while it waited.
 *
 * A waiting execution leaves here only what its request needs (its entries, a number, its cancel signal) and how to
 * wake it: its client stays in its own frame (submit), which sends a turn when the lane elects it, through n8n's
 * request helper of an execution still waiting for that turn. An execution cancelled while it waits leaves at once;
 * an execution that ended leaves nothing of it in the lane.
 */

/** Entries waiting in one lane at most; past it an execution sends on its own, as if no other were running. */
const MAX_WAITING = 10_000;

/** A burst is still arriving while entries come less than this share of a request spacing apart. */
export const ARRIVING = 0.25;

/**
 * For this many request spacings after a turn that carried several entries, the lane is in a burst: the first entry
 * after a pause is taken for the next part of it, not for a lone event (see linger).
 */
const BURST_SPACINGS = 10;

/** What a lane knows of an execution with entries in it: never its context, client or helpers. */
export interface Member {
	/** A number per execution: whose entries are whose, and who sent last (Pace.lastOwner). */
	id: number;
	/** n8n's cancel signal of the execution, where it has one: its waiting entries leave the lane when it fires. */
	signal?: AbortSignal;
	/** How far apart the caller's requests leave at its rate limit (1 s at 60 a minute): see Lane.linger. */
	spacingMs: number;
	/** The wait before splitting further after both halves of a split failed as an outage: its retry policy's. */
	backoffMs: (level: number) => number;
}

/**
 * What an execution does with its own client, kept in its own frame (Lane.submit's arguments), never in the lane:
 * send a request (its own entries, or a turn the lane elected it to send), and take another's answer as its own.
 */
export interface Own<E, R> {
	send: (entries: E[]) => Promise<R[]>;
	/** A result of a request another execution sent, as this one's (an error naming its node). */
	adopt: (result: R) => R;
	adoptError: (error: unknown) => unknown;
	/** The error of an execution cancelled before its entries were answered. */
	cancelled: () => unknown;
}

type Answer<R> = { results: R[] } | { error: unknown };

/** What the lane asks of a waiting execution's frame: send a request, or end its wait. */
type Call<E, R> =
	| { send: E[]; answer: (answer: Answer<R>) => void }
	| { done: true }
	| { failed: unknown; own: boolean }
	| { cancelled: true };

interface Waiting<E, R> {
	member: Member;
	entries: E[];
	/** Entries handed to a request so far; the results come back in the same order. */
	taken: number;
	results: R[];
	/** Results that came from a request another execution sent (Own.adopt), by position. */
	byOthers: boolean[];
	/** n8n cancelled the execution: it has left the lane, and what its entries get is dropped. */
	aborted: boolean;
	/** Calls for the frame, in order, and how to wake it (the resolver of the promise its frame awaits). */
	mail: Array<Call<E, R>>;
	wake?: () => void;
}

/** How a lane groups its entries into turns and how long a turn lingers for company. */
export interface LaneShape<E, R> {
	/**
	 * How many entries one turn of the lane sends at most, given the first waiting one: a large run is sent in turns,
	 * taken round robin with the others waiting, so an event that arrives meanwhile waits one turn, not the whole run.
	 */
	groupSize: (first: E) => number;
	/**
	 * How many entries fill one request, given the first waiting one: a turn lingering for a burst goes once that many
	 * wait.
	 */
	fullSize: (first: E) => number;
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
	/**
	 * Whether a result may owe its failure to n8n aborting the execution that sent the request (a write sent after
	 * it, or in the batch it aborted): another execution's such entry, once that sender is cancelled, waits again.
	 */
	undecided?: (result: R) => boolean;
}

/** When a lane's requests went, and whose: see Lane.linger. */
export interface Pace {
	/** The execution whose request went last (Member.id). */
	lastOwner?: number;
	lastSentAt: number;
	/** When the last turn that carried several entries went. */
	lastBurstAt: number;
}

export const newPace = (): Pace => ({ lastSentAt: -Infinity, lastBurstAt: -Infinity });

export class Lane<E, R> {
	private readonly waiting: Array<Waiting<E, R>> = [];

	private waitingEntries = 0;

	/** Entries of the request under way. */
	private sendingEntries = 0;

	/** The waiting entries are what a turn of full requests left: a burst is under way (see linger). */
	private leftover = false;

	private busy = false;

	/** When the oldest waiting entry arrived (the lane's turn started waiting for it), and the newest. */
	private firstArrivalAt = Infinity;

	private lastArrivalAt = -Infinity;

	/** How long before the newest entry the one before it arrived: a lone event is not part of a burst. */
	private lastArrivalGap = Infinity;

	/**
	 * @param pace shared by the lanes of one kind of request of one caller whose settings differ (paceOf): a
	 * burst's rhythm is the caller's, whichever lane its requests take.
	 */
	constructor(
		private readonly shape: LaneShape<E, R>,
		private readonly pace: Pace = newPace(),
	) {}

	/** Entries waiting or being sent. */
	get pendingEntries(): number {
		return this.waitingEntries + this.sendingEntries;
	}

	/**
	 * This execution's entries, answered in order. Its frame waits here, holding its client (own); the lane wakes it
	 * to send a turn it elected it for, and once its entries are answered or failed, or n8n cancelled it.
	 */
	async submit(member: Member, entries: E[], own: Own<E, R>): Promise<R[]> {
		if (entries.length === 0) return [];
		if (this.busy && this.waitingEntries + entries.length > MAX_WAITING)
			return await own.send(entries);
		if (member.signal?.aborted) throw own.cancelled();
		const waiting: Waiting<E, R> = {
			member,
			entries,
			taken: 0,
			results: [],
			byOthers: [],
			aborted: false,
			mail: [],
		};
		this.waiting.push(waiting);
		this.waitingEntries += entries.length;
		this.lastArrivalGap = now() - this.lastArrivalAt;
		this.lastArrivalAt = now();
		this.firstArrivalAt = Math.min(this.firstArrivalAt, this.lastArrivalAt);
		const onAbort = () => this.abort(waiting);
		member.signal?.addEventListener('abort', onAbort);
		void this.pump();
		try {
			for (;;) {
				const call = await this.next(waiting);
				if ('send' in call) call.answer(await sendOwn(call.send, own));
				else if ('cancelled' in call) throw own.cancelled();
				else if ('failed' in call) throw call.own ? call.failed : own.adoptError(call.failed);
				else
					return waiting.results.map((result, index) =>
						waiting.byOthers[index] ? own.adopt(result) : result,
					);
			}
		} finally {
			member.signal?.removeEventListener('abort', onAbort);
		}
	}

	private async next(waiting: Waiting<E, R>): Promise<Call<E, R>> {
		while (waiting.mail.length === 0)
			await new Promise<void>((resolve) => (waiting.wake = resolve));
		waiting.wake = undefined;
		return waiting.mail.shift()!;
	}

	private post(waiting: Waiting<E, R>, call: Call<E, R>) {
		waiting.mail.push(call);
		waiting.wake?.();
	}

	/**
	 * n8n cancelled the execution: its entries not sent yet leave, and its frame ends now (its client with it). A turn
	 * it sends meanwhile is answered once n8n has aborted its request; the others' entries of it wait again (sendTurn).
	 */
	private abort(waiting: Waiting<E, R>) {
		if (waiting.aborted) return;
		waiting.aborted = true;
		const at = this.waiting.indexOf(waiting);
		if (at >= 0) {
			this.waiting.splice(at, 1);
			this.waitingEntries -= waiting.entries.length - waiting.taken;
		}
		this.post(waiting, { cancelled: true });
	}

	/** One turn after another while entries wait: the oldest first, up to groupSize, as one send. */
	private async pump() {
		if (this.busy) return;
		this.busy = true;
		try {
			while (this.waiting.length > 0) {
				const fullOnly = await this.linger();
				// Those that waited may all have been cancelled meanwhile.
				if (this.waiting.length === 0) break;
				this.leftover = fullOnly !== undefined;
				const parts: Array<{ waiting: Waiting<E, R>; count: number }> = [];
				const oldest = this.waiting[0];
				let room = Math.max(1, this.shape.groupSize(oldest.entries[oldest.taken]));
				if (fullOnly) room = Math.min(room, fullOnly);
				for (const waiting of this.waiting) {
					if (room === 0) break;
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
	 * after a pause of arrivingSpacings) goes once a spacing has passed since the last request; but within
	 * BURST_SPACINGS after a turn that carried several entries the first after a pause lingers as a burst's would: n8n
	 * starts a burst's executions in bunches seconds apart, and a queue-mode worker starts its next jobs together once
	 * the last ones end, so that first one is the head of the next bunch. The turns of one large run go at once.
	 * Returns how many entries the turn may take to send full requests only, or undefined for no such cap.
	 */
	private async linger(): Promise<number | undefined> {
		const first = this.waiting[0];
		if (first.member.id === this.pace.lastOwner || this.pace.lastSentAt === -Infinity)
			return undefined;
		const spacing = first.member.spacingMs;
		// At least one turn of the event loop: the executions that started with this one (a bunch n8n starts at once)
		// arrive meanwhile, and the gap between arrivals says whether a burst is arriving (moreComing).
		await sleep(Math.max(0, this.pace.lastSentAt + spacing - now()));
		const until = this.firstArrivalAt + this.shape.maxLingerSpacings * spacing;
		const fedUntil = this.firstArrivalAt + (this.shape.maxFedLingerSpacings ?? 0) * spacing;
		const arriving = this.shape.arrivingSpacings * spacing;
		const inBurst = now() - this.pace.lastBurstAt < BURST_SPACINGS * spacing;
		const full = Math.max(1, this.shape.fullSize(first.entries[first.taken]));
		const moreComing = (missing: number) => {
			const at = now();
			return (
				(at < until &&
					at - this.lastArrivalAt < arriving &&
					(this.lastArrivalGap < arriving || inBurst)) ||
				(at < fedUntil && this.fedEnough(missing))
			);
		};
		while (this.waitingEntries < full && moreComing(full - this.waitingEntries))
			await sleep(
				Math.min(
					Math.max(until, fedUntil) - now(),
					Math.max(this.lastArrivalAt + arriving - now(), ARRIVING * spacing),
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

	/** The execution's entries not answered yet leave the lane, and its frame ends with the error. */
	private fail(waiting: Waiting<E, R>, error: unknown, own: boolean) {
		const at = this.waiting.indexOf(waiting);
		if (at >= 0) this.waiting.splice(at, 1);
		this.waitingEntries -= waiting.entries.length - waiting.taken;
		this.post(waiting, { failed: error, own });
	}

	/**
	 * The entries of a turn whose request failed because n8n cancelled the execution that sent it (its requests are
	 * aborted with it): not this execution's failure, so they wait again, at the front, and go with the next turn, sent
	 * by a live execution. Reads and writes are idempotent, so one that reached the server before the abort is not
	 * doubled.
	 */
	private putBack(parts: Array<Part<E, R>>) {
		if (parts.length === 0) return;
		for (const { waiting, count } of parts) {
			waiting.taken -= count;
			this.waitingEntries += count;
			this.waiting.splice(this.waiting.indexOf(waiting), 1);
		}
		this.waiting.unshift(...parts.map(({ waiting }) => waiting));
		this.firstArrivalAt = Math.min(this.firstArrivalAt, now());
	}

	private async sendTurn(parts: Array<Part<E, R>>) {
		this.pace.lastOwner = parts[0].waiting.member.id;
		this.pace.lastSentAt = now();
		let count = 0;
		for (const part of parts) {
			part.waiting.taken += part.count;
			count += part.count;
		}
		this.waitingEntries -= count;
		this.sendingEntries = count;
		if (count > 1) this.pace.lastBurstAt = this.pace.lastSentAt;
		// What arrives from now on waits for the next turn: its lingering counts from the first of it.
		this.firstArrivalAt = this.waitingEntries > 0 ? now() : Infinity;
		let outcomes: Array<Outcome<R>>;
		try {
			const sent = await this.request(parts);
			outcomes =
				sent.failure !== undefined && shareable(sent.failure) && ownersIn(parts).length > 1
					? await this.split(parts, 1)
					: sent.outcomes;
		} finally {
			this.sendingEntries = 0;
		}
		const back: Array<Part<E, R>> = [];
		for (const [index, part] of parts.entries()) {
			const { waiting } = part;
			const outcome = outcomes[index];
			// Cancelled meanwhile: it left the lane, and what its entries got goes nowhere.
			if (waiting.aborted) continue;
			if ('back' in outcome) {
				back.push(part);
				continue;
			}
			if ('error' in outcome) {
				this.fail(waiting, outcome.error, outcome.from === waiting);
				continue;
			}
			waiting.results.push(...outcome.results);
			waiting.byOthers.push(...outcome.results.map(() => outcome.from !== waiting));
			// Done, or to the back of the queue: the next turn starts with whoever waited behind it (round robin).
			this.waiting.splice(this.waiting.indexOf(waiting), 1);
			if (waiting.taken === waiting.entries.length) this.post(waiting, { done: true });
			else this.waiting.push(waiting);
		}
		this.putBack(back);
	}

	/**
	 * Sends the parts' entries as one request (or one round of requests) through the frame of the first execution of
	 * them still waiting for it (the lane elects it and wakes it: its client, its retries, its abort). What each part
	 * got, and the error of the request as a whole when its sender was still waiting (a failure to split). When n8n
	 * aborted the sender, the others' entries that did not go through wait again (back).
	 */
	private async request(
		parts: Array<Part<E, R>>,
	): Promise<{ outcomes: Array<Outcome<R>>; failure?: unknown }> {
		const sender = parts.find(({ waiting }) => !waiting.aborted)?.waiting;
		if (!sender) return { outcomes: parts.map(() => ({ back: true })) };
		const entries = parts.flatMap(entriesOf);
		const answer = await new Promise<Answer<R>>((resolve) =>
			this.post(sender, { send: entries, answer: resolve }),
		);
		const gone = sender.aborted;
		const theirs = ({ waiting }: Part<E, R>) => waiting !== sender;
		if ('error' in answer) {
			const error = { error: answer.error, from: sender };
			return gone
				? { outcomes: parts.map((part) => (theirs(part) ? { back: true } : error)) }
				: { outcomes: parts.map(() => error), failure: answer.error };
		}
		let at = 0;
		const outcomes = parts.map((part): Outcome<R> => {
			const results = answer.results.slice(at, (at += part.count));
			const undecided = results.some((result) => this.shape.undecided?.(result) === true);
			return gone && theirs(part) && undecided ? { back: true } : { results, from: sender };
		});
		return { outcomes };
	}

	/**
	 * A turn of several executions whose request failed, split by execution (splitByOwner, tasks/send.ts): each half
	 * through the frame of an execution of its half (its client, its retries, its abort), until a part is one
	 * execution's. An execution only ever gets the error of a request that carried nothing but its own entries; a 401
	 * or a 429, every execution's alike, is not split further.
	 */
	private async split(parts: Array<Part<E, R>>, level: number): Promise<Array<Outcome<R>>> {
		return await splitByOwner<Part<E, R>, Outcome<R>>(
			parts,
			{
				ownerOf: ({ waiting }) => waiting.member.id,
				send: async (half) => await this.request(half),
				again: async (half, failure, next) =>
					ownersIn(half).length < 2 || !shareable(failure)
						? undefined
						: await this.split(half, next),
				backoffMs: (next) => parts[0].waiting.member.backoffMs(next),
			},
			level,
		);
	}
}

/** The frame's own send, for itself or for a turn the lane elected it to send: its answer, never thrown. */
async function sendOwn<E, R>(entries: E[], own: Own<E, R>): Promise<Answer<R>> {
	try {
		return { results: await own.send(entries) };
	} catch (error) {
		return { error };
	}
}

interface Part<E, R> {
	waiting: Waiting<E, R>;
	count: number;
}

/**
 * What one part of a turn got: its results, or the error of a request that carried only its execution's entries (or
 * that every execution has alike), with the execution whose frame sent it; or back: to wait again.
 */
type Outcome<R> =
	{ results: R[]; from: unknown } | { error: unknown; from: unknown } | { back: true };

/** The entries of a part, as the turn took them (Waiting.taken has moved past them). */
const entriesOf = <E, R>({ waiting, count }: Part<E, R>) =>
	waiting.entries.slice(waiting.taken - count, waiting.taken);

const ownersIn = <E, R>(parts: Array<Part<E, R>>) => [
	...new Set(parts.map(({ waiting }) => waiting.member.id)),
];

/** A failure of a shared request to split by execution: not a 401 (the credential's) nor a 429 (the token's). */
const shareable = (error: unknown) => !hasStatus(error, 401, 429);
