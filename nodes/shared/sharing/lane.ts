import { sleep } from 'n8n-workflow';

import { hasStatus } from '../transport/errors';
import { transient } from '../tasks/batches';
import { now } from '../clock';

/**
 * One lane of the group commit (coalesce.ts): the executions of one process that want the same kind of request of the
 * same caller wait here, and each turn sends what waits as one request (or one round of requests) for all of them.
 * What each execution gets back is its own: its results in the order it gave its entries, errors copied to name its
 * node, and nothing when it was cancelled while it waited.
 *
 * A waiting execution leaves only what the request needs here (its entries, a number, its cancel signal): its client
 * stays in its own frame (submit), which the lane wakes when it elects it to send a turn. So an execution that ends
 * leaves nothing of it in the lane, and a shared request goes through n8n's request helper of an execution still
 * waiting for it.
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
	/** n8n's cancel signal of the execution, where it has one: its entries leave the lane when it fires. */
	signal?: AbortSignal;
	/** How far apart the caller's requests leave at its rate limit (1 s at 60 a minute): see Lane.linger. */
	spacingMs: number;
}

/**
 * What an execution does with its own client: kept in its own frame (Lane.submit's arguments), never in the lane. When
 * the lane elects it to send a turn, it sends the others' entries too, through its client (n8n's request helper of an
 * execution still waiting for that request).
 */
export interface Own<E, R> {
	send: (entries: E[]) => Promise<R[]>;
	/** A result another execution's request got for this one, as its own (an error naming its node). */
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
	/** Indexes of the entries not handed to a request yet, in order. */
	queue: number[];
	/** By entry index. */
	results: R[];
	decided: number;
	/** Entries whose result came from a request another execution sent (Own.adopt). */
	byOthers: Set<number>;
	/** The error of a request that failed for this execution's entries (own: it sent it itself). */
	failure?: { error: unknown; own: boolean };
	aborted: boolean;
	/** Calls for the frame, in order, and how to wake it. */
	mail: Array<Call<E, R>>;
	wake?: () => void;
}

/** Some entries of one waiting execution, handed to a request. */
interface Piece<E, R> {
	waiting: Waiting<E, R>;
	at: number[];
}

/** How a lane groups its entries into turns and how long a turn lingers for company. */
export interface LaneShape<E, R> {
	/**
	 * How many entries one turn of the lane sends at most, given the first waiting one: a large run is sent in turns,
	 * taken round robin with the others waiting, so an event that arrives meanwhile waits one turn, not the whole run.
	 */
	groupSize: (first: E) => number;
	/** How many entries fill one request, given the first waiting one: a turn lingering for a burst goes once that many wait. */
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
	 * For a result that says the request carrying it failed as a whole, for reasons that may not be its entry's (a
	 * shared batch refused, or aborted with its sender): the error. Such an entry is sent again (Lane.split).
	 */
	undecided?: (result: R) => unknown;
	/** The wait before splitting further after both halves of a split failed as an outage (a retry's backoff). */
	backoffMs: (level: number) => number;
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

	/** Entries in the queues of the executions waiting (not those of a request under way). */
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
	 * @param pace shared by the lanes of one kind of request of one caller whose settings differ (coalesce.ts): a
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
	 * This execution's entries, answered in order. Its frame waits here, holding its client (own); the lane wakes it to
	 * send a turn it elected it for, and when its entries are answered, failed, or it is cancelled.
	 */
	async submit(member: Member, entries: E[], own: Own<E, R>): Promise<R[]> {
		if (entries.length === 0) return [];
		if (this.busy && this.waitingEntries + entries.length > MAX_WAITING)
			return await own.send(entries);
		if (member.signal?.aborted) throw own.cancelled();
		const waiting: Waiting<E, R> = {
			member,
			entries,
			queue: entries.map((_, index) => index),
			results: new Array<R>(entries.length),
			decided: 0,
			byOthers: new Set(),
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
				if ('send' in call) call.answer(await sendOwn(waiting, call.send, own));
				else if ('cancelled' in call) throw own.cancelled();
				else if ('failed' in call) throw call.own ? call.failed : own.adoptError(call.failed);
				else
					return waiting.results.map((result, index) =>
						waiting.byOthers.has(index) ? own.adopt(result) : result,
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

	/** n8n cancelled the execution: its entries not sent yet leave, and its frame ends now (its client with it). */
	private abort(waiting: Waiting<E, R>) {
		if (waiting.aborted) return;
		waiting.aborted = true;
		this.leave(waiting);
		this.post(waiting, { cancelled: true });
	}

	private leave(waiting: Waiting<E, R>) {
		const at = this.waiting.indexOf(waiting);
		if (at < 0) return;
		this.waiting.splice(at, 1);
		this.waitingEntries -= waiting.queue.length;
	}

	/** One turn after another while entries wait: the oldest first, up to groupSize, as one send. */
	private async pump() {
		if (this.busy) return;
		this.busy = true;
		try {
			while (this.waiting.length > 0) {
				const fullOnly = await this.linger();
				if (this.waiting.length === 0) break;
				this.leftover = fullOnly !== undefined;
				const oldest = this.waiting[0];
				let room = Math.max(1, this.shape.groupSize(oldest.entries[oldest.queue[0]]));
				if (fullOnly) room = Math.min(room, fullOnly);
				const pieces: Array<Piece<E, R>> = [];
				for (const waiting of this.waiting) {
					if (room === 0) break;
					const at = waiting.queue.splice(0, room);
					if (at.length === 0) continue;
					pieces.push({ waiting, at });
					room -= at.length;
				}
				if (pieces.length > 0) await this.sendTurn(pieces);
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
		const full = Math.max(1, this.shape.fullSize(first.entries[first.queue[0]]));
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

	private async sendTurn(pieces: Array<Piece<E, R>>) {
		this.pace.lastOwner = pieces[0].waiting.member.id;
		this.pace.lastSentAt = now();
		const count = pieces.reduce((sum, { at }) => sum + at.length, 0);
		this.waitingEntries -= count;
		this.sendingEntries = count;
		if (count > 1) this.pace.lastBurstAt = this.pace.lastSentAt;
		// What arrives from now on waits for the next turn: its lingering counts from the first of it.
		this.firstArrivalAt = this.waitingEntries > 0 ? now() : Infinity;
		const back = new Set<Waiting<E, R>>();
		try {
			const failed = await this.sendOnce(pieces, back);
			if (failed) await this.split(failed.pieces, back, 1);
		} finally {
			this.sendingEntries = 0;
		}
		const front: Array<Waiting<E, R>> = [];
		for (const waiting of new Set(pieces.map((piece) => piece.waiting))) {
			if (waiting.aborted) continue;
			this.leave(waiting);
			if (waiting.failure)
				this.post(waiting, { failed: waiting.failure.error, own: waiting.failure.own });
			else if (waiting.decided === waiting.entries.length) this.post(waiting, { done: true });
			else {
				// Put back after its sender was cancelled: first in the next turn. Else to the back of the queue: the
				// next turn starts with whoever waited behind it (round robin).
				if (back.has(waiting)) front.push(waiting);
				else this.waiting.push(waiting);
				this.waitingEntries += waiting.queue.length;
			}
		}
		this.waiting.unshift(...front);
	}

	/**
	 * Sends the pieces as one request (or one round of requests) through the frame of a member still waiting for it,
	 * the oldest: its client, its retries, its abort. Records what each entry got, but for what failed as a shared
	 * request (returned, to be split by execution) and, when n8n aborted the sender, the other executions' entries that
	 * did not go through: they wait again, at the front, and go with the next turn (reads and writes are idempotent).
	 */
	private async sendOnce(
		pieces: Array<Piece<E, R>>,
		back: Set<Waiting<E, R>>,
	): Promise<{ pieces: Array<Piece<E, R>>; error: unknown } | undefined> {
		const live = pieces.filter(({ waiting }) => !waiting.aborted);
		if (live.length === 0) return undefined;
		const sender = live[0].waiting;
		const shared = new Set(live.map(({ waiting }) => waiting.member.id)).size > 1;
		const entries = live.flatMap(({ waiting, at }) => at.map((index) => waiting.entries[index]));
		const answer = await new Promise<Answer<R>>((resolve) =>
			this.post(sender, { send: entries, answer: resolve }),
		);
		const senderGone = sender.aborted;
		const failed: Array<Piece<E, R>> = [];
		let failure: unknown;
		let position = 0;
		for (const piece of live) {
			const { waiting, at } = piece;
			const own = waiting === sender;
			if ('error' in answer) {
				position += at.length;
				if (senderGone && !own) this.putBack(waiting, at, back);
				else if (!senderGone && shared && shareable(answer.error)) {
					failed.push(piece);
					failure = answer.error;
				} else waiting.failure ??= { error: answer.error, own };
				continue;
			}
			const again: number[] = [];
			for (const index of at) {
				const result = answer.results[position++];
				const error = this.shape.undecided?.(result);
				// Sent again: another's entry its cancelled sender did not get through, or any entry of a shared request.
				if (error !== undefined && (senderGone ? !own : shared)) {
					again.push(index);
					if (!senderGone) failure = error;
					continue;
				}
				waiting.results[index] = result;
				waiting.decided++;
				if (!own) waiting.byOthers.add(index);
			}
			if (again.length === 0) continue;
			if (senderGone) this.putBack(waiting, again, back);
			else failed.push({ waiting, at: again });
		}
		return failed.length > 0 ? { pieces: failed, error: failure } : undefined;
	}

	private putBack(waiting: Waiting<E, R>, at: number[], back: Set<Waiting<E, R>>) {
		if (waiting.aborted) return;
		waiting.queue = [...at, ...waiting.queue].sort((a, b) => a - b);
		back.add(waiting);
		this.firstArrivalAt = Math.min(this.firstArrivalAt, now());
	}

	/**
	 * Entries of several executions whose shared request failed: sent again in two halves of whole executions, each
	 * through the frame of a member of its half, until a part is one execution's, sent by its own frame with its own
	 * retries (Max Attempts). An execution only ever gets the error of a request that carried nothing but its own
	 * entries; no message, status or quoted value decides who is at fault. When both halves fail as an outage would
	 * (tasks/batches.ts transient), the next split waits as a retry would: one entry refused on every try among n
	 * executions costs at most 2 × ceil(log2 n) requests and its own execution's attempts. The one splitter of reads
	 * and writes.
	 */
	private async split(
		pieces: Array<Piece<E, R>>,
		back: Set<Waiting<E, R>>,
		level: number,
	): Promise<void> {
		const members = [...new Set(pieces.map(({ waiting }) => waiting.member.id))];
		const half = Math.ceil(members.length / 2);
		const halves = [members.slice(0, half), members.slice(half)]
			.map((group) => pieces.filter(({ waiting }) => group.includes(waiting.member.id)))
			.filter((part) => part.length > 0);
		const failed: Array<{ pieces: Array<Piece<E, R>>; error: unknown }> = [];
		for (const part of halves) {
			const left = await this.sendOnce(part, back);
			if (left) failed.push(left);
		}
		const outage = failed.length === 2 && failed.every(({ error }) => transient(error));
		if (outage) await sleep(this.shape.backoffMs(level));
		for (const left of failed) await this.split(left.pieces, back, outage ? level + 1 : 1);
	}
}

/** The frame's own send, for itself or for a turn the lane elected it to send: its answer, never thrown. */
async function sendOwn<E, R>(
	waiting: Waiting<E, R>,
	entries: E[],
	own: Own<E, R>,
): Promise<Answer<R>> {
	if (waiting.member.signal?.aborted) return { error: own.cancelled() };
	try {
		return { results: await own.send(entries) };
	} catch (error) {
		return { error };
	}
}

/** A failure of a shared request to split by execution: not a 401 (the credential's) nor a 429 (the token's). */
const shareable = (error: unknown) => !hasStatus(error, 401, 429);
