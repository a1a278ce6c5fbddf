import { createHash } from 'crypto';
import { sleep } from 'n8n-workflow';

import { callerState, now as clock } from '../callers/registry';
import { tokenAsSent } from './credential';
import type { RetryPolicy } from './errors';

/**
 * Multiplicative decrease: on a 429 the process's rate drops to this share of what it really sent in the last window
 * (or of its current rate, when that is lower). TCP halves; AWS's "adaptive" retry mode keeps 0.7, which loses less
 * throughput while the processes sharing a token settle.
 */
export const DECREASE = 0.7;

/**
 * Increase: after a cut the rate grows back with time, by INCREASE × limit × k³ after k windows without a 429 (at 60:
 * +3 after one window, +24 after two, the whole limit after three): slow while the processes are probing near their
 * share, fast once the others are gone, so that the last execution still running has the whole rate back within a few
 * windows rather than tens (after a cut to the floor it doubles every half window instead: see rateAt). A cubic of
 * the time since the last throttle, as AWS's adaptive retry mode and TCP CUBIC, but not centred on the rate cut from
 * as theirs are: the increase does not depend on the rate, so processes cut at the same time grow back alike, and the
 * proportional cuts make their shares converge (centred, each grows back to its own old rate and the shares drift;
 * faster, each spends a window's share early and then waits the window out). It is counted in time, not in answers,
 * so that a process paced at a low rate (or held back until the server's window has passed) is not kept low by its
 * own pacing.
 */
export const INCREASE = 0.05;

/**
 * No process drops below this share of the configured limit (and never below 1 request per window): a 429 with
 * little sent is someone else's traffic or a blip. Low, so that a process that started late in a full window is held
 * back after its first 429 or two; it then doubles back quickly. More processes than 1 / MIN_SHARE on one token need a
 * lower Requests per Minute each (README, "Scaling out").
 */
export const MIN_SHARE = 1 / 16;

/**
 * Requests that may leave back to back at the configured rate; past them requests leave one spacing (window / limit)
 * apart. The spec allows small bursts but asks callers to avoid them: a limiter that lets a whole window's requests go
 * at once spends them on whatever came first (the first events of a burst) and then holds everything that arrives
 * later for the rest of the window; spaced, the requests of the window are spread over it, and what arrives meanwhile
 * is carried by the next one (coalesce.ts). A lone event (a read and a write) still goes at once.
 */
export const BURST = 4;

/** Random share of a spacing, a wait or a window by which the limiter's times vary, so processes do not act in step. */
const JITTER = 0.1;

/**
 * Random share of a window added to the end of the pause after a cut, so that processes cut in the same window do not
 * all start again at the same instant. Small: their requests of that window already leave it at different times, and
 * each step after it is jittered; the whole of it is time in which the process sends nothing (up to 1.8 s a minute).
 */
const RESTART_SPREAD = 0.03;

/**
 * The longest single timer the limiter sets. n8n's sleep cannot be cancelled, so a wait that ends early (an answer came,
 * a pause took the reservation back) leaves its timer running: waited in steps of at most this, what it leaves behind
 * ends within a second instead of holding the process (and the limiter) for up to UNDER_WAY_MS.
 */
const TIMER_STEP_MS = 1_000;

/** One step of a wait until `until` (on the clock of callers/registry.ts now()): at most TIMER_STEP_MS, at least a millisecond. */
const stepTowards = (until: number) => sleep(Math.min(Math.max(1, until - clock()), TIMER_STEP_MS));

interface Slot {
	/**
	 * When the request leaves (reserved) or left, or, once it has finished, when it finished (the server may count it
	 * until then).
	 */
	at: number;
	/** When the request leaves (reserved) or left. */
	sentAt: number;
	/** Its caller is still waiting for the reserved time: a pause may take the reservation back (pauseUntil). */
	waiting: boolean;
	/** The bucket's state before this reservation, restored when a pause takes the reservation back. */
	paceBefore: number;
	/** The request has finished (answered or failed): the server can no longer count it later than `at`. */
	finished: boolean;
}

/**
 * How long a request still under way keeps its place in every window. The transport gives up on a request after 30 s;
 * past this, a request that never settled (a lost answer, a release never called) is taken to have been counted by
 * then, so it cannot hold the process back for good.
 */
export const UNDER_WAY_MS = 120_000;

/**
 * How long a configuration (a credential's Requests per Minute and window) stays in force on its token after an
 * execution last asked for it (limiterFor, once per execution, when it starts): while in force, a tighter one holds the
 * executions of the looser ones too, since the server counts them in one window. It lapses so that a raised Requests
 * per Minute takes effect without a restart, at the next execution that asks after it.
 */
export const CONFIGURATION_KEPT_MS = 10 * 60_000;

/**
 * Until a request has finished the server may count it at any moment, so its slot holds a place in every window from
 * now on (up to UNDER_WAY_MS after it left): it sorts last and is not dropped.
 */
const countedUntil = (slot: Slot, now: number) =>
	slot.finished
		? slot.at
		: now < slot.sentAt + UNDER_WAY_MS
			? Infinity
			: slot.sentAt + UNDER_WAY_MS;

/**
 * An execution's hold on its token's limiter (limiterFor): while any is held, the registry keeps the limiter, so every
 * execution on the token gets this one. Opaque: it holds nothing of the execution.
 */
export interface LimiterHold {
	readonly limiter: RateLimiter;
	/** The execution has ended: it no longer holds the limiter. Again: nothing. */
	release(): void;
}

/**
 * Client-side rate limit for one token in one process, adaptive (AIMD).
 *
 * At most `rate` requests reach the server in any window of `windowMs`: a request counts from when it leaves until
 * `windowMs` after it has finished (the server counted it at some moment in between), so however late a request
 * reaches the server, and however long it takes, the server never sees more than `rate` in its window; no margin on
 * the window is needed (the server's window is counted as configured). No answer changes that count, a Retry-After
 * neither: it says when to come back, not how the server counts (a gateway's 429, or a window that slides, may name a
 * time before this process's own requests have left the window), so past the pause the process still sends at most
 * `rate` in any window of its own requests. One exception, beyond the transport's: a request under way for longer than
 * UNDER_WAY_MS is taken as counted by then. The rate
 * starts at the configured limit and stays there as long as the server never answers 429, so one process alone
 * behaves as a plain limiter at the configured rate.
 * Several processes on one token (n8n queue-mode workers) cannot see each other; each learns its share from the
 * server's answers instead:
 * - a 429 cuts the rate to DECREASE × what this process sent in the last window (once per window: the 429s of one
 *   congested window are one signal); the requests already sent then hold the next ones back until enough of them
 *   have left the window, i.e. until the server's window has passed; a second 429 in that window (a process that
 *   sent little there, so its cut rate does not hold it) holds it back until all it sent there has left;
 * - from the cut on, the rate grows back with time: INCREASE × limit × k³ after k windows, never above the configured
 *   limit; after a cut to the floor (MIN_SHARE), which tells the process nothing of its share, it doubles every half
 *   window instead, until the next 429;
 * - at any rate, after a burst of BURST requests, they leave one spacing (window / rate) apart: a token bucket of BURST
 *   at the current rate (GCRA), under the window's count. Below the configured limit the spacing is jittered, so that
 *   the processes sharing a window all send through it and its 429s fall on each in proportion to its rate: that is
 *   what makes the shares converge (equal increases, proportional decreases). The bucket lets a process that was held
 *   back until the server's window passed send its first few at once there, as it does at the full rate, instead of
 *   spending its cut rate's whole spacing on each of them.
 *
 * Each caller reserves a send time synchronously (JavaScript runs one callback at a time), so concurrent
 * executions in one n8n process that share a base URL and token queue up behind each other instead of racing. Only
 * when the window is full of requests still under way does a caller wait for one of them to be answered before it
 * reserves; callers waiting so are woken together, in the order they came, at each answer. A pause after a 429
 * (pauseUntil) holds every caller, those already waiting for a reserved time too: it takes their reservations back,
 * and they reserve again, in the order they came, behind the pause.
 * Every time here is on the monotonic clock of callers/registry.ts (now): a step of the system clock moves none of them.
 */
export class RateLimiter {
	private readonly slots: Slot[] = [];

	private blockedUntil = 0;

	/** Held back after a second 429 in one window, until this process's requests of that window have left it. */
	private heldUntil = 0;

	private limit = 0;

	/** The server's window as configured. */
	private windowMs = 1;

	/** The rate the last 429 cut to (requests per window); it grows back from there (see rateAt). */
	private cutRate = 0;

	private lastCutAt = -Infinity;

	/** The configurations asked for, by limit and window, with when each was last asked for (see configure). */
	private readonly configurations = new Map<
		string,
		{ limit: number; windowMs: number; askedAt: number }
	>();

	/** Resolves at the next answer of any request: what callers waiting for room wait on. One for all of them. */
	private nextAnswer: Promise<void> | undefined;

	private answered = () => {};

	/** Resolves when a pause takes the reservations back: what callers waiting for their reserved time also wait on. */
	private reservationsTaken: Promise<void> | undefined;

	private takeReservations = () => {};

	/** The last cut went to the floor: the rate grows back by doubling (see rateAt). */
	private fromFloor = false;

	/**
	 * The holds of the executions using the limiter (hold), weakly: the execution's client keeps its hold, and one
	 * never released (a caller that does not say when its execution ends) lapses once nothing can reach it, when
	 * nothing can send through it either.
	 */
	private readonly holds = new Set<WeakRef<LimiterHold>>();

	/** When the bucket of `burst` requests is full again (GCRA's theoretical arrival time). */
	private paceAt = -Infinity;

	/** @param burst requests that may leave back to back at any rate (BURST; the limit: none spaced). */
	constructor(
		limit: number,
		windowMs: number,
		private readonly burst = BURST,
	) {
		this.configure(limit, windowMs);
	}

	/**
	 * A configuration asked for (a credential's limit and window, see limiterFor). The one in force is the tightest
	 * asked for within CONFIGURATION_KEPT_MS: the lowest rate (on a tie, the smaller limit: the smaller bursts). The
	 * server counts the token's requests in one window whichever credential sends them, so what its 429s taught
	 * stays when the configuration in force changes: the rate cut to is carried over, per unit of time, to the new
	 * window, and grows back from there up to the new limit.
	 */
	configure(limit: number, windowMs: number) {
		const asked = { limit: Math.max(1, Math.floor(limit)), windowMs: Math.max(1, windowMs) };
		const now = clock();
		this.configurations.set(`${asked.limit}/${asked.windowMs}`, { ...asked, askedAt: now });
		let tightest = asked;
		for (const [key, configuration] of this.configurations) {
			if (now - configuration.askedAt > CONFIGURATION_KEPT_MS) this.configurations.delete(key);
			else if (
				configuration.limit * tightest.windowMs < tightest.limit * configuration.windowMs ||
				(configuration.limit * tightest.windowMs === tightest.limit * configuration.windowMs &&
					configuration.limit < tightest.limit)
			)
				tightest = configuration;
		}
		if (tightest.limit === this.limit && tightest.windowMs === this.windowMs) return;
		this.cutRate = (this.cutRate * tightest.windowMs) / this.windowMs;
		this.limit = tightest.limit;
		this.windowMs = tightest.windowMs;
	}

	/**
	 * Requests per window this process allows itself at `now` (on the clock of callers/registry.ts now(), as every time here): the
	 * configured limit, or less since a 429.
	 */
	rateAt(now = clock()): number {
		if (this.lastCutAt === -Infinity) return this.limit;
		const windows = Math.min(100, Math.max(0, (now - this.lastCutAt) / this.windowMs));
		// Cut to the floor, the process has learnt nothing of its share (it came late into a window others had filled,
		// or sends little): it doubles every half window until its next 429, as TCP's slow start after a timeout.
		if (this.fromFloor) return Math.min(this.limit, this.cutRate * 4 ** Math.min(windows, 20));
		return Math.min(this.limit, this.cutRate + INCREASE * this.limit * windows ** 3);
	}

	/** How far apart requests would leave if spread evenly over the window at the current rate. */
	get spacingMs(): number {
		return this.windowMs / Math.max(1, this.rateAt());
	}

	/**
	 * Whether the limiter is in use: an execution holds it (from when it was handed over, before its first request, to
	 * the execution's end), or it still has anything the server may count or asked for: a request in the window (or under
	 * way), or a pause. Until then it is not forgotten (callers/registry.ts), whatever the registry's cap and however
	 * long ago it was handed over: a new one would send a second window's worth.
	 */
	busy(): boolean {
		const at = clock();
		return (
			this.held() ||
			at < Math.max(this.blockedUntil, this.heldUntil) ||
			this.slots.some((slot) => countedUntil(slot, at) > at - this.windowMs)
		);
	}

	/** A hold for one execution (see holds): it keeps the limiter until released. */
	hold(): LimiterHold {
		const holds = this.holds;
		const hold: LimiterHold = {
			limiter: this,
			release() {
				for (const ref of holds) if (ref.deref() === hold) holds.delete(ref);
			},
		};
		holds.add(new WeakRef(hold));
		return hold;
	}

	private held(): boolean {
		for (const ref of this.holds) if (ref.deref() === undefined) this.holds.delete(ref);
		return this.holds.size > 0;
	}

	/** Requests per window this process sends at most now (the configured limit until the server answers 429). */
	get allowance(): number {
		return Math.max(1, Math.floor(this.rateAt()));
	}

	/**
	 * Resolves when the caller may send; the slot is already counted. Call the returned function when the request has
	 * finished, with the response's status (and its Retry-After, if any) when there is one: the server may have counted
	 * the request at any moment until then, so its slot moves to the finish time, and a 429 adapts the rate.
	 */
	async acquire(): Promise<(status?: number, retryAfterMs?: number) => void> {
		let slot = await this.reserve();
		// A pause that begins while the caller waits for its time takes the reservation back: it reserves again, in
		// the order the callers came, behind the pause and at the rate the 429 left.
		while (!(await this.sendTime(slot))) slot = await this.reserve();
		return (status?: number, retryAfterMs?: number) => {
			if (slot.finished) return;
			slot.at = Math.max(slot.at, clock());
			slot.finished = true;
			this.answered();
			if (status === 429) this.throttled(slot.sentAt, retryAfterMs !== undefined);
		};
	}

	/** Reserves a send time, counted from now on (see acquire). */
	private async reserve(): Promise<Slot> {
		let now = clock();
		let rate = this.rateAt(now);
		let freeAt = this.freeAt(now, rate);
		// The request that frees the slot has not finished: how long the server may still count it is not known yet.
		while (freeAt instanceof Promise) {
			await freeAt;
			now = clock();
			rate = this.rateAt(now);
			freeAt = this.freeAt(now, rate);
		}
		let at = Math.max(now, freeAt, this.blockedUntil, this.heldUntil);
		// A token bucket of `burst` at the current rate (GCRA): after a pause the first few leave together, the rest one
		// spacing apart. Below the configured rate (the server has answered 429) each step is jittered, so processes
		// that share a window all send through it and the 429s at its end fall on each in proportion to its rate. The
		// bucket's depth is counted in plain spacings: jittered too, it would move each send by up to burst - 1 jitters.
		const spacing = this.windowMs / rate;
		const step = rate >= this.limit ? spacing : spacing * (1 - JITTER + Math.random() * 2 * JITTER);
		at = Math.max(at, this.paceAt - (Math.min(this.burst, rate) - 1) * spacing);
		const slot: Slot = {
			at,
			sentAt: at,
			waiting: true,
			paceBefore: this.paceAt,
			finished: false,
		};
		this.paceAt = Math.max(this.paceAt, at) + step;
		this.slots.push(slot);
		return slot;
	}

	/**
	 * Waits for the slot's time; false when a pause took the reservation back meanwhile. The slot then counts from
	 * when the request really leaves.
	 */
	private async sendTime(slot: Slot): Promise<boolean> {
		// A timer may fire a millisecond before the clock reads its time: the window is counted to the millisecond.
		for (let left = slot.at - clock(); left > 0 && slot.waiting; left = slot.at - clock()) {
			await Promise.race([
				stepTowards(slot.at),
				(this.reservationsTaken ??= new Promise((resolve) => (this.takeReservations = resolve))),
			]);
		}
		if (!slot.waiting) return false;
		slot.waiting = false;
		slot.at = slot.sentAt = Math.max(slot.at, clock());
		return true;
	}

	/**
	 * When the window has room for one more request at `rate`: when the request `allowance` places earlier (by the time
	 * the server may count it until) leaves the window; or, when that one is still under way, the next answer.
	 */
	private freeAt(now: number, rate: number): number | Promise<void> {
		for (let index = this.slots.length - 1; index >= 0; index--) {
			if (countedUntil(this.slots[index], now) <= now - this.windowMs) this.slots.splice(index, 1);
		}
		const allowance = Math.max(1, Math.floor(rate));
		if (this.slots.length < allowance) return now;
		const until = this.slots.map((slot) => countedUntil(slot, now)).sort((a, b) => a - b);
		const frees = until[until.length - allowance];
		if (frees !== Infinity) return frees + this.windowMs;
		return (this.nextAnswer ??= this.answerOrGiveUp(now));
	}

	/**
	 * The next answer, or at the latest the next request under way reaching UNDER_WAY_MS (then it counts as finished,
	 * and the window may have room): one wait for all callers. `now`: the time freeAt found a request under way holding
	 * the window, so there is one.
	 */
	private answerOrGiveUp(now: number): Promise<void> {
		const giveUpAt =
			Math.min(
				...this.slots
					.filter((slot) => countedUntil(slot, now) === Infinity)
					.map((slot) => slot.sentAt),
			) + UNDER_WAY_MS;
		return new Promise<void>((resolve) => {
			const wake = () => {
				if (this.answered !== wake) return;
				this.nextAnswer = undefined;
				this.answered = () => {};
				resolve();
			};
			this.answered = wake;
			// In steps (TIMER_STEP_MS) that stop once an answer has woken the callers; never at once, so the wait is set
			// as the one under way (nextAnswer) before it ends.
			const giveUp = async () => {
				do await stepTowards(giveUpAt);
				while (this.answered === wake && clock() < giveUpAt);
				wake();
			};
			void giveUp();
		});
	}

	/**
	 * A 429: multiplicative decrease, at most once per window. With a Retry-After (`serverSaid`) the server says when to
	 * come back (pauseUntil), and that is all it changes: a cut would hold requests back after the pause (one early
	 * 429 cut to the floor, which takes windows to grow back, held the tenth of ten one-request executions 50 s for a
	 * Retry-After of 1 s); processes sharing the token each wait for the window the server names instead of finding
	 * their shares. A Retry-After too long to wait for holds nobody.
	 */
	private throttled(sentAt: number, serverSaid: boolean) {
		if (serverSaid) return;
		const now = clock();
		const inWindow = this.slots.filter((slot) => !slot.waiting && slot.at > now - this.windowMs);
		if (sentAt <= this.lastCutAt || now - this.lastCutAt < this.windowMs) {
			// A second 429 in the window of the last cut: the rate is already cut, but the window is full for longer than
			// a retry delay (this process came late into a window others had filled). Hold every request back until what
			// this process sent in the window has left it: the server's window, which began before, has ended by then.
			// The answered request itself counts (its slot may be gone: a request under way past UNDER_WAY_MS).
			const earliest = Math.min(sentAt, ...inWindow.map((slot) => slot.sentAt));
			this.heldUntil = Math.max(
				this.heldUntil,
				earliest + this.windowMs * (1 + Math.random() * JITTER),
			);
			return;
		}
		const sentInWindow = inWindow.length;
		const floor = Math.min(this.limit, Math.max(1, this.limit * MIN_SHARE));
		const cut = Math.min(this.rateAt(now), sentInWindow) * DECREASE;
		this.fromFloor = cut < floor;
		this.cutRate = Math.max(floor, cut);
		this.lastCutAt = now;
		// The requests sent in this window now hold the next ones back until they leave it, and a little more (RESTART_SPREAD).
		const shift = Math.random() * RESTART_SPREAD * this.windowMs;
		for (const slot of this.slots) {
			if (!slot.waiting && slot.at > now - this.windowMs) slot.at += shift;
		}
	}

	/**
	 * After a 429 the server's view wins: no request (from any caller) leaves before `until`, not even one whose send
	 * time was reserved before: the reservations still waiting are taken back (the bucket with them), and their callers
	 * reserve again, in the order they came, behind the pause and at the rate the 429 left, so they neither reach the
	 * server during the pause nor fill the window after it ahead of a request reserved at once after the 429 (the one
	 * retried). With `serverSaid` (the wait came from its Retry-After), a hold after a second 429 (heldUntil) ends with
	 * the pause too; the requests sent so far still count as always (see the class), so a Retry-After shorter than the
	 * server's window never lets this process send more than `rate` in a window of its own requests. `until` is on the
	 * clock of callers/registry.ts (now).
	 */
	pauseUntil(until: number, serverSaid = false) {
		this.blockedUntil = Math.max(this.blockedUntil, until);
		const taken = this.slots.filter((slot) => slot.waiting);
		if (taken.length > 0) {
			for (const slot of taken) {
				slot.waiting = false;
				this.slots.splice(this.slots.indexOf(slot), 1);
			}
			this.paceAt = Math.min(this.paceAt, ...taken.map((slot) => slot.paceBefore));
			this.reservationsTaken = undefined;
			this.takeReservations();
		}
		if (serverSaid) this.heldUntil = Math.min(this.heldUntil, until);
	}

	/**
	 * The longest Retry-After worth waiting for after a 429: the retry policy's longest wait, or a whole window (and
	 * its jitter) when that is longer, since a 429 means "after this window", which a wait must be able to reach.
	 */
	longestWaitMs(maxDelayMs: number): number {
		return Math.max(maxDelayMs, Math.ceil(this.windowMs * (1 + JITTER)));
	}

	/**
	 * How long to wait after the `attempt`-th answer of a request was a 429 without Retry-After: the retry policy's
	 * exponential backoff (jittered), capped at a window rather than at the policy's longest wait; and before the last
	 * attempt at least a whole window, so that the waits of one request always span the server's window. The waits
	 * between the attempts of one request add up to at most (maxAttempts - 1) windows (plus jitter); before each
	 * attempt, acquire() holds it at most about a window more (besides its place behind other callers, and the answers
	 * of requests still under way when the window is full of them).
	 */
	throttleDelayMs(attempt: number, budget: RetryPolicy): number {
		const cap = Math.max(budget.maxDelayMs, this.windowMs);
		const backoff =
			Math.min(cap, budget.baseDelayMs * 2 ** (attempt - 1)) *
			(1 - JITTER + Math.random() * 2 * JITTER);
		if (attempt < budget.maxAttempts - 1) return backoff;
		return Math.max(backoff, this.windowMs * (1 + Math.random() * JITTER));
	}
}

/**
 * The token's limiter, held for one execution until its hold is released (at the execution's end). One per token as it
 * is sent (tokenAsSent: trimmed, as every per-token key), whatever the Base URL, limit and window: the server counts
 * the token's requests in one window, and two limiters on it would send twice the rate; one service may be reached by
 * several names (127.0.0.1, LocalHost). Credentials that differ only in those share the limiter, at the tightest of
 * them (RateLimiter.configure). Kept with the rest of what the process remembers per caller (callers/registry.ts),
 * under a hash of the token (the token itself is never kept). Made and held at once: no other caller's touch comes
 * between.
 */
export function limiterFor(token: string, limit: number, windowMs: number): LimiterHold {
	const key = createHash('sha256')
		.update(`limiter\n${tokenAsSent(token)}`)
		.digest('hex');
	let made = false;
	const limiter = callerState(key).part('limiter', () => {
		made = true;
		return new RateLimiter(limit, windowMs);
	});
	if (!made) limiter.configure(limit, windowMs);
	return limiter.hold();
}
