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
