// What the process remembers between executions lives in one bounded place per caller (nodes/shared/callers).
import {
	callerCount,
	callerState,
	IDLE_MS,
	MAX_CALLERS,
	resetCallers,
} from '../../nodes/shared/callers/registry';
import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, uidOf, upsertByTicket, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

beforeEach(() => resetCallers());
afterEach(() => jest.useRealTimers());

describe('Per-caller state is bounded', () => {
	it('a process serving more callers than MAX_CALLERS keeps MAX_CALLERS, the least recently used dropped first', () => {
		for (let i = 0; i < MAX_CALLERS + 5; i++) callerState(`caller-${i}`).part('x', () => ({ i }));
		expect(callerCount()).toBe(MAX_CALLERS);
		// The first five are gone: asked for again, each starts afresh.
		expect(callerState('caller-0').part('x', () => ({ i: -1 }))).toEqual({ i: -1 });
		expect(callerState(`caller-${MAX_CALLERS + 4}`).part('x', () => ({ i: -1 }))).toEqual({
			i: MAX_CALLERS + 4,
		});
	});

	it('a caller used again moves to the back: it outlives callers used after it was first', () => {
		callerState('kept').part('x', () => 'first');
		for (let i = 0; i < MAX_CALLERS - 1; i++) callerState(`caller-${i}`);
		callerState('kept');
		for (let i = MAX_CALLERS; i < MAX_CALLERS + 5; i++) callerState(`caller-${i}`);
		expect(callerState('kept').part('x', () => 'again')).toBe('first');
	});

	it('a caller unused for IDLE_MS is forgotten at the next access', () => {
		jest.useFakeTimers();
		callerState('idle').part('x', () => 'first');
		jest.advanceTimersByTime(IDLE_MS + 1);
		callerState('other');
		expect(callerCount()).toBe(1);
		expect(callerState('idle').part('x', () => 'again')).toBe('again');
	});

	it('a busy caller (a request under way, entries in a lane) is never dropped, past the cap or idle', () => {
		jest.useFakeTimers();
		let busy = true;
		callerState('busy').part('lane', () => ({ busy: () => busy, tag: 'first' }));
		jest.advanceTimersByTime(IDLE_MS + 1);
		for (let i = 0; i < MAX_CALLERS + 5; i++) callerState(`caller-${i}`);
		expect(callerState('busy').part('lane', () => ({ busy: () => false, tag: 'again' })).tag).toBe(
			'first',
		);
		busy = false;
		jest.advanceTimersByTime(IDLE_MS + 1);
		callerState('other');
		expect(callerState('busy').part('lane', () => ({ busy: () => false, tag: 'again' })).tag).toBe(
			'again',
		);
	});

	it('past the cap with every caller busy, the caller just added keeps its state: one limiter for its token, not two', () => {
		for (let i = 0; i <= MAX_CALLERS; i++)
			callerState(`busy-${i}`).part('lane', () => ({ busy: () => true }));
		// Enough new callers that some are added by a touch that walks the registry (it does not on every touch).
		const kept = Array.from({ length: 3 * MAX_CALLERS }, (_, i) => {
			const limiter = callerState(`new-${i}`).part('limiter', () => ({ tag: 'first' }));
			return callerState(`new-${i}`).part('limiter', () => ({ tag: 'second' })) === limiter;
		});
		expect(kept.every(Boolean)).toBe(true);
		// The last busy one too was kept past the cap: its part was made after its touch, as the limiter's.
		expect(
			callerState('busy-1000')
				.part('lane', () => ({ busy: () => false }))
				.busy(),
		).toBe(true);
	});

	it('past the cap with every caller busy, a touch does not ask every caller again whether it is busy', () => {
		let asked = 0;
		const busy = () => {
			asked++;
			return true;
		};
		for (let i = 0; i <= MAX_CALLERS; i++) callerState(`busy-${i}`).part('lane', () => ({ busy }));
		asked = 0;
		const touches = 3 * MAX_CALLERS;
		for (let i = 0; i < touches; i++) callerState(`new-${i}`);
		// One walk past the busy ones per as many touches: about one question a touch, not MAX_CALLERS.
		expect(asked).toBeLessThanOrEqual(2 * touches);
		// The idle ones are still dropped, a walk later: the busy ones and at most as many more.
		expect(callerCount()).toBeLessThanOrEqual(2 * (MAX_CALLERS + 1) + 1);
	});

	it('past the cap, callers that were busy and are idle now are dropped by the next touch a second later, however many touches the last walk rested', () => {
		jest.useFakeTimers();
		let busy = true;
		for (let i = 0; i <= 2 * MAX_CALLERS; i++)
			callerState(`busy-${i}`).part('limiter', () => ({ busy: () => busy }));
		expect(callerCount()).toBeGreaterThan(2 * MAX_CALLERS);
		// Their windows pass (a limiter is busy a window after its last request); a second later, one touch.
		busy = false;
		jest.advanceTimersByTime(1001);
		callerState('next');
		expect(callerCount()).toBeLessThanOrEqual(MAX_CALLERS);
	});

	it('executions on many tokens leave at most MAX_CALLERS callers, and each still writes its ticket', async () => {
		const tokens = Array.from({ length: 40 }, (_, i) => `token-${i}`);
		sim.configure({ tokens });
		for (let i = 0; i < MAX_CALLERS; i++) callerState(`filler-${i}`);
		for (const [i, token] of tokens.entries()) {
			const run = await runBacklog(sim, upsertByTicket, {
				items: [{ id: `K-${i}`, title: `Ticket ${i}` }],
				credentials: { token },
			});
			expect(run.error).toBeUndefined();
			expect(sim.tasks.has(uidOf(`K-${i}`))).toBe(true);
		}
		expect(callerCount()).toBeLessThanOrEqual(MAX_CALLERS);
	}, 30_000);
});
