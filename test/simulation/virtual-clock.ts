/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// The seeded simulation's controlled clock (issue 44, item 2): virtual time for everything in the process that reads
// or waits on time: Date, setTimeout / setInterval / setImmediate (n8n-workflow's sleep, the rate limiter, the lanes,
// n8n-core, the simulator's latency and its rate window), performance.now (now() in nodes/shared/callers/registry.ts). Time stands still
// while anything can still run: the clock jumps to the next timer only once every execution is waiting, that is when
// the microtask queue is empty (one macrotask of the real event loop has passed: Node runs every microtask and
// nextTick first). Timers that fall due at once fire one by one, in the order they were set, each followed by the
// microtasks it causes, as Node runs them. Math.random is a PRNG seeded by the seed (the client's backoff jitter), so
// that one seed replays exactly: the same workload, the same interleaving, the same requests in the same order.
// jest's own fake timers (jest installs them), not a package of this project.
import { withGlobal, type Clock } from '@sinonjs/fake-timers';

import { mulberry32 } from './workload';

/** Where every seed's virtual clock starts: 2030-01-01T00:00:00Z. */
export const VIRTUAL_EPOCH_MS = Date.UTC(2030, 0, 1);

/** The real event loop's setImmediate, taken before any clock is installed. */
const realSetImmediate = globalThis.setImmediate;
const realRandom = Math.random;
const realDateNow = Date.now;

/** The real time (ms since the epoch), whatever clock is installed. */
export const realNow = (): number => realDateNow();

/** Resolves once every microtask (and nextTick) queued so far, and those they queue, has run. */
const drained = () => new Promise<void>((resolve) => realSetImmediate(resolve));

/** Why virtual time could not reach the end: the limit, nothing left to wait for, or timers set at one instant forever. */
export type Stuck = 'timeout' | 'deadlock' | 'spin';

export type Driven<T> = { value: T } | { stuck: Stuck; atMs: number };

/** Timers fired at one virtual instant before the clock calls it a spin (a loop of zero-delay timers). */
const SPIN_STEPS = 200_000;

/**
 * A delay as Node's timers take it: below 1 ms (0, a fraction, NaN) or past 2^31 - 1, 1 ms; a fraction rounded up (a
 * timer fires at least its delay later). Fake timers would fire a delay under 1 ms at once, so a loop that sleeps
 * until a time a fraction of a millisecond away would never see time move.
 */
const nodeDelay = (delay: unknown): number => {
	const ms = Number(delay);
	return ms >= 1 && ms <= 2 ** 31 - 1 ? Math.ceil(ms) : 1;
};

function withNodeDelays<
	F extends (callback: () => void, delay?: number, ...args: unknown[]) => unknown,
>(fake: F): F {
	const wrapped = (callback: () => void, delay?: number, ...args: unknown[]) =>
		fake(callback, nodeDelay(delay), ...args);
	return Object.assign(wrapped, fake) as unknown as F;
}

export class VirtualClock {
	private readonly clock: Clock;

	constructor(seed: number) {
		this.clock = withGlobal(globalThis).install({
			now: VIRTUAL_EPOCH_MS,
			toFake: [
				'setTimeout',
				'clearTimeout',
				'setInterval',
				'clearInterval',
				'setImmediate',
				'clearImmediate',
				'Date',
				'performance',
			],
			shouldClearNativeTimers: false,
		});
		// Put back by uninstall(), which restores the real timers whatever stands in their place.
		globalThis.setTimeout = withNodeDelays(globalThis.setTimeout);
		globalThis.setInterval = withNodeDelays(globalThis.setInterval);
		Math.random = mulberry32(seed ^ 0x2545f491);
	}

	/** Virtual milliseconds since the epoch (Date.now() while installed). */
	get now(): number {
		return this.clock.now;
	}

	/** Virtual milliseconds since the clock was installed. */
	get elapsedMs(): number {
		return this.clock.now - VIRTUAL_EPOCH_MS;
	}

	/**
	 * Runs virtual time until `work` settles, jumping from timer to timer once nothing else can run. Gives up when the
	 * virtual time reaches `limitMs` after now (`timeout`), or when nothing is left to wait for and `work` has not settled
	 * (`deadlock`: a promise nobody will resolve).
	 */
	async run<T>(work: Promise<T>, limitMs: number): Promise<Driven<T>> {
		let settled: { value: T } | { error: unknown } | undefined;
		work.then(
			(value) => (settled = { value }),
			(error: unknown) => (settled = { error }),
		);
		const stuck = await this.runWhile(() => settled === undefined, limitMs);
		if (settled === undefined) return { stuck: stuck ?? 'deadlock', atMs: this.elapsedMs };
		if ('error' in settled) throw settled.error;
		return settled;
	}

	/**
	 * Runs virtual time while `going()` holds (asked whenever nothing else can run), `limitMs` at most. Undefined when
	 * `going()` stopped holding, else why it stopped early.
	 */
	async runWhile(going: () => boolean, limitMs: number): Promise<Stuck | undefined> {
		const until = this.clock.now + limitMs;
		let instant = this.clock.now;
		let steps = 0;
		for (;;) {
			await drained();
			if (!going()) return undefined;
			if (this.clock.countTimers() === 0) return 'deadlock';
			if (this.clock.now >= until) return 'timeout';
			this.clock.next();
			if (this.clock.now !== instant) [instant, steps] = [this.clock.now, 0];
			else if (++steps > SPIN_STEPS) return 'spin';
		}
	}

	/** Real timers, Date and Math.random again; the timers still set are dropped (they never fire). */
	uninstall(): void {
		this.clock.uninstall();
		Math.random = realRandom;
	}
}
