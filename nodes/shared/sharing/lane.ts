import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { cancelled, isCancelled } from '../transport/cancellation';
import { hasStatus } from '../transport/errors';
import { transient } from '../tasks/batches';
import type { BacklogClient } from '../transport/client';
import { now } from '../clock';

/**
 * One lane of the group commit (coalesce.ts): the executions of one process that want the same kind of request of the
 * same caller wait here, and each turn sends what waits as one request (or one round of requests) for all of them.
 * What each execution gets back is its own: its results in the order it gave its entries, errors copied to name its
 * node, and nothing when it was cancelled while it waited.
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

interface Waiting<E, R> {
	owner: BacklogClient;
	entries: E[];
	/** Entries handed to a request so far; the results come back in the same order. */
	taken: number;
	results: R[];
	resolve: (results: R[]) => void;
	reject: (error: unknown) => void;
}

export type Send<E, R> = (sender: BacklogClient, entries: E[]) => Promise<R[]>;

/** How a lane groups its entries into turns and how long a turn lingers for company. */
export interface LaneShape<E> {
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

/** When a lane's requests went, and whose: see Lane.linger. */
export interface Pace {
	/**
	 * The execution whose request went last (its number, not its client: an ended execution's context is not kept
	 * reachable by an idle lane).
	 */
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
	 * @param pace shared by the lanes of one kind of request of one caller whose settings differ (coalesce.ts): a
	 * burst's rhythm is the caller's, whichever lane its requests take.
	 */
	constructor(
		private readonly send: Send<E, R>,
		private readonly shape: LaneShape<E>,
		private readonly pace: Pace = newPace(),
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
		this.lastArrivalGap = now() - this.lastArrivalAt;
		this.lastArrivalAt = now();
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
	 * after a pause of arrivingSpacings) goes once a spacing has passed since the last request; but within
	 * BURST_SPACINGS after a turn that carried several entries the first after a pause lingers as a burst's would: n8n
	 * starts a burst's executions in bunches seconds apart, and a queue-mode worker starts its next jobs together once
	 * the last ones end, so that first one is the head of the next bunch. The turns of one large run go at once.
	 * Returns how many entries the turn may take to send full requests only, or undefined for no such cap.
	 */
	private async linger(): Promise<number | undefined> {
		const first = this.waiting[0];
		if (ownerNumber(first.owner) === this.pace.lastOwner || this.pace.lastSentAt === -Infinity)
			return undefined;
		const spacing = await first.owner.requestSpacingMs();
		const wait = this.pace.lastSentAt + spacing - now();
		if (wait > 0) await sleep(wait);
		const until = this.firstArrivalAt + this.shape.maxLingerSpacings * spacing;
		const fedUntil = this.firstArrivalAt + (this.shape.maxFedLingerSpacings ?? 0) * spacing;
		const arriving = this.shape.arrivingSpacings * spacing;
		const inBurst = now() - this.pace.lastBurstAt < BURST_SPACINGS * spacing;
		const full = Math.max(1, this.shape.fullSize(first.entries[first.taken], first.owner));
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

	private drop(waiting: Waiting<E, R>, error: unknown) {
		this.waiting.splice(this.waiting.indexOf(waiting), 1);
		this.waitingEntries -= waiting.entries.length - waiting.taken;
		waiting.reject(error);
	}

	/**
	 * The entries of a turn whose request failed because n8n cancelled the execution that sent it (its requests are
	 * aborted with it): not this execution's failure, so they wait again, at the front, and go with the next turn, sent
	 * by a live execution. Reads and writes are idempotent, so one that reached the server before the abort is not
	 * doubled.
	 */
	private putBack(parts: Array<{ waiting: Waiting<E, R>; count: number }>) {
		if (parts.length === 0) return;
		for (const { waiting, count } of parts) {
			waiting.taken -= count;
			this.waitingEntries += count;
			this.waiting.splice(this.waiting.indexOf(waiting), 1);
		}
		this.waiting.unshift(...parts.map(({ waiting }) => waiting));
		this.firstArrivalAt = Math.min(this.firstArrivalAt, now());
	}

	private async sendTurn(parts: Array<{ waiting: Waiting<E, R>; count: number }>) {
		const sender = parts[0].waiting.owner;
		this.pace.lastOwner = ownerNumber(sender);
		this.pace.lastSentAt = now();
		const entries = parts.flatMap(({ waiting, count }) =>
			waiting.entries.slice(waiting.taken, waiting.taken + count),
		);
		for (const { waiting, count } of parts) {
			waiting.taken += count;
			this.waitingEntries -= count;
		}
		this.sendingEntries = entries.length;
		if (entries.length > 1) this.pace.lastBurstAt = this.pace.lastSentAt;
		// What arrives from now on waits for the next turn: its lingering counts from the first of it.
		this.firstArrivalAt = this.waitingEntries > 0 ? now() : Infinity;
		let outcomes: Array<Outcome<R>>;
		try {
			const results = await this.send(sender, entries);
			let at = 0;
			outcomes = parts.map(({ count }) => ({ results: results.slice(at, (at += count)) }));
		} catch (error) {
			if (isCancelled(sender) || !shareable(error) || ownersIn(parts).length === 1) {
				const back = parts.filter(({ waiting }) => waiting.owner !== sender && isCancelled(sender));
				for (const { waiting } of parts)
					if (waiting.owner === sender || !isCancelled(sender))
						this.drop(waiting, waiting.owner === sender ? error : ownedError(waiting.owner, error));
				this.putBack(back);
				return;
			}
			outcomes = await this.split(parts, 1);
		} finally {
			this.sendingEntries = 0;
		}
		for (const [index, { waiting }] of parts.entries()) {
			const outcome = outcomes[index];
			if ('error' in outcome) {
				this.drop(waiting, outcome.error);
				continue;
			}
			waiting.results.push(
				...(waiting.owner === sender
					? outcome.results
					: outcome.results.map((result) => owned(waiting.owner, result))),
			);
			// Done, or to the back of the queue: the next turn starts with whoever waited behind it (round robin).
			this.waiting.splice(this.waiting.indexOf(waiting), 1);
			if (waiting.taken === waiting.entries.length) waiting.resolve(waiting.results);
			else this.waiting.push(waiting);
		}
	}

	/**
	 * A turn of several executions whose request failed: sent again in two halves of whole executions, each with the
	 * client of an execution of its half, until a part is one execution's, sent with its own client (its retries, its
	 * abort). An execution only ever gets the error of a request that carried nothing but its own entries; no message
	 * or status decides who is at fault. Both halves failing as an outage would (tasks/batches.ts transient) wait as a
	 * retry would before the next split.
	 */
	private async split(parts: Array<Part<E, R>>, level: number): Promise<Array<Outcome<R>>> {
		const owners = ownersIn(parts);
		const half = Math.ceil(owners.length / 2);
		const halves = [owners.slice(0, half), owners.slice(half)].map((group) =>
			parts.flatMap((part, index) => (group.includes(part.waiting.owner) ? [index] : [])),
		);
		const outcomes: Array<Outcome<R>> = new Array(parts.length);
		const failed: Array<{ indexes: number[]; error: unknown }> = [];
		for (const indexes of halves) {
			const sender = parts[indexes[0]].waiting.owner;
			if (isCancelled(sender)) {
				// Its own entries only when the half is one execution's; otherwise the next split sends the others.
				failed.push({ indexes, error: cancelled(sender) });
				continue;
			}
			const entries = indexes.flatMap((index) => entriesOf(parts[index]));
			try {
				const results = await this.send(sender, entries);
				let at = 0;
				for (const index of indexes)
					outcomes[index] = { results: results.slice(at, (at += parts[index].count)) };
			} catch (error) {
				failed.push({ indexes, error });
			}
		}
		const outage =
			failed.length === 2 &&
			failed.every(
				({ indexes, error }) => transient(error) && !isCancelled(parts[indexes[0]].waiting.owner),
			);
		if (outage) await sleep(parts[0].waiting.owner.backoffMs(level));
		for (const { indexes, error } of failed) {
			const some = indexes.map((index) => parts[index]);
			const again =
				ownersIn(some).length > 1 && (shareable(error) || isCancelled(some[0].waiting.owner))
					? await this.split(some, outage ? level + 1 : 1)
					: some.map(() => ({ error }));
			indexes.forEach((index, position) => (outcomes[index] = again[position]));
		}
		return outcomes;
	}
}

/** A number per execution's client, held weakly: what a lane remembers of who sent last. */
const ownerNumbers = new WeakMap<BacklogClient, number>();
let ownersNumbered = 0;
function ownerNumber(owner: BacklogClient): number {
	let number = ownerNumbers.get(owner);
	if (number === undefined) ownerNumbers.set(owner, (number = ++ownersNumbered));
	return number;
}

interface Part<E, R> {
	waiting: Waiting<E, R>;
	count: number;
}

/** What one part of a turn got: its results, or the error of a request that carried only its execution's entries. */
type Outcome<R> = { results: R[] } | { error: unknown };

/** The entries of a part, as the turn took them (Waiting.taken has moved past them). */
const entriesOf = <E, R>({ waiting, count }: Part<E, R>) =>
	waiting.entries.slice(waiting.taken - count, waiting.taken);

const ownersIn = <E, R>(parts: Array<Part<E, R>>) => [
	...new Set(parts.map(({ waiting }) => waiting.owner)),
];

/** A failure of a shared request to split by execution: not a 401 (the credential's) nor a 429 (the token's). */
const shareable = (error: unknown) => !hasStatus(error, 401, 429);

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
