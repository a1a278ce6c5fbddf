/** The triggers' rules on their own, for cases the simulator cannot produce (equal stamps, microseconds, overflow). */
import type { IDataObject } from 'n8n-workflow';

import {
	baseline,
	compareInstants,
	instant,
	marker,
	MAX_SEEN,
	type PollState,
	selectChanges,
} from '../../nodes/TaskBacklogPollTrigger/changes';
import { eventsOf, valueAtPath } from '../../nodes/TaskBacklogTrigger/events';
import { parseTimestamp, verifyRequest } from '../../nodes/TaskBacklogTrigger/verify';

const NOW = Date.parse('2025-03-01T12:00:00Z');
const all = () => true;
const task = (uid: string, updated_at: string, extra: IDataObject = {}): IDataObject => ({
	uid,
	updated_at,
	created_at: '2025-01-01T00:00:00Z',
	status: 'TODO',
	...extra,
});

describe('poll trigger rules', () => {
	it('reads microsecond timestamps exactly and in any ISO zone notation', () => {
		expect(
			compareInstants(
				instant('2025-03-01T10:00:00.123400Z')!,
				instant('2025-03-01T10:00:00.123900Z')!,
			),
		).toBeLessThan(0);
		expect(
			compareInstants(
				instant('2025-03-01T10:00:00.5Z')!,
				instant('2025-03-01T11:00:00.500+01:00')!,
			),
		).toBe(0);
		expect(instant('not a date')).toBeUndefined();
	});

	it("tasks changed at the position's exact timestamp are emitted once each, in later polls too", () => {
		const at = '2025-03-01T11:59:00.000Z';
		let state: PollState = { event: 'updatedTask', position: '2025-03-01T11:58:00.000Z', seen: {} };
		const first = selectChanges(state, [task('a', at)], all, 0, NOW);
		expect(first.emit.map((t) => t.uid)).toEqual(['a']);
		state = first.next;
		expect(state.position).toBe(at);
		// b committed later with the same stamp: the next listing (from position - 1 ms) has both.
		const second = selectChanges(state, [task('a', at), task('b', at)], all, 0, NOW);
		expect(second.emit.map((t) => t.uid)).toEqual(['b']);
		const third = selectChanges(second.next, [task('a', at), task('b', at)], all, 0, NOW);
		expect(third.emit).toEqual([]);
	});

	it('a second change within the same millisecond (microsecond stamps) is a new change', () => {
		const state: PollState = {
			event: 'updatedTask',
			position: '2025-03-01T11:59:00.123400Z',
			seen: { a: '2025-03-01T11:59:00.123400Z' },
		};
		const { emit } = selectChanges(state, [task('a', '2025-03-01T11:59:00.123900Z')], all, 0, NOW);
		expect(emit.map((t) => t.updated_at)).toEqual(['2025-03-01T11:59:00.123900Z']);
	});

	it('a task listed twice in one poll (changed while paging) is emitted once, in its newest version', () => {
		const state: PollState = { event: 'updatedTask', position: '2025-03-01T11:00:00Z', seen: {} };
		const { emit } = selectChanges(
			state,
			[
				task('a', '2025-03-01T11:10:00Z'),
				task('b', '2025-03-01T11:20:00Z'),
				task('a', '2025-03-01T11:30:00Z'),
			],
			all,
			0,
			NOW,
		);
		expect(emit.map((t) => [t.uid, t.updated_at])).toEqual([
			['b', '2025-03-01T11:20:00Z'],
			['a', '2025-03-01T11:30:00Z'],
		]);
	});

	it('a stamp far in the future does not move the position past the changes still to come', () => {
		const state: PollState = { event: 'updatedTask', position: '2025-03-01T11:00:00Z', seen: {} };
		const { emit, next } = selectChanges(
			state,
			[task('a', '2099-01-01T00:00:00Z'), task('b', '2025-03-01T11:30:00Z')],
			all,
			0,
			NOW,
		);
		expect(emit.map((t) => t.uid)).toEqual(['b', 'a']);
		expect(next.position).toBe('2025-03-01T11:30:00Z');
		// The future-stamped task stays remembered, so it is not emitted again while the position catches up.
		expect(selectChanges(next, [task('a', '2099-01-01T00:00:00Z')], all, 0, NOW).emit).toEqual([]);
	});

	it('the memory of emitted changes is bounded, and what it forgets is never emitted again', () => {
		const stamps = Array.from({ length: MAX_SEEN + 50 }, (_, i) =>
			new Date(NOW - 100000 + i).toISOString(),
		);
		const tasks = stamps.map((at, i) => task(`t${i}`, at));
		const state: PollState = {
			event: 'updatedTask',
			position: new Date(NOW - 200000).toISOString(),
			seen: {},
		};
		// A long lookback keeps every change inside the window, so only the cap limits the memory.
		const { emit, next } = selectChanges(state, tasks, all, 3600_000, NOW);
		expect(emit).toHaveLength(MAX_SEEN + 50);
		expect(Object.keys(next.seen)).toHaveLength(MAX_SEEN);
		expect(next.floor).toBe(stamps[49]);
		expect(selectChanges(next, tasks, all, 3600_000, NOW).emit).toEqual([]);
	});

	it("markers: new tasks by the service's own creation time, closed tasks by done_at", () => {
		const t = task('a', '2025-03-01T11:00:00Z', {
			created_at: '2020-01-01T00:00:00Z',
			internal_created_at: '2025-03-01T10:00:00Z',
			status: 'DONE',
			done_at: '2025-03-01T10:30:00Z',
		});
		expect(marker('newTask', t)).toBe('2025-03-01T10:00:00Z');
		expect(marker('closedTask', t)).toBe('2025-03-01T10:30:00Z');
		expect(marker('closedTask', { ...t, done_at: null })).toBe('2025-03-01T11:00:00Z');
		expect(marker('closedTask', { ...t, status: 'STARTED' })).toBeUndefined();
		expect(marker('updatedTask', t)).toBe('2025-03-01T11:00:00Z');
	});

	it('the baseline remembers the tasks inside the lookback, so the next poll does not report them', () => {
		const tasks = [
			task('old', '2025-03-01T10:00:00Z'),
			task('recent', '2025-03-01T11:59:30Z'),
			task('newest', '2025-03-01T11:59:50Z'),
		];
		const state = baseline('updatedTask', tasks, 'unused', 60_000, NOW);
		expect(state.position).toBe('2025-03-01T11:59:50Z');
		expect(Object.keys(state.seen).sort()).toEqual(['newest', 'recent']);
		expect(selectChanges(state, tasks, all, 60_000, NOW).emit).toEqual([]);
	});
});

describe('webhook trigger rules', () => {
	it('reads event kinds by dot path, a dotted key whole first', () => {
		expect(valueAtPath({ data: { event: { kind: 'x' } } }, 'data.event.kind')).toBe('x');
		expect(valueAtPath({ 'event.kind': 'y' }, 'event.kind')).toBe('y');
		expect(valueAtPath({ type: 'z' }, 'missing.path')).toBeUndefined();
	});

	it('takes a JSON array body as a batch of events and wraps non-object values', () => {
		expect(eventsOf([{ type: 'a' }, { type: 'b' }], undefined)).toEqual([
			{ type: 'a' },
			{ type: 'b' },
		]);
		expect(eventsOf({}, Buffer.from('{"type":"raw"}'))).toEqual([{ type: 'raw' }]);
		expect(eventsOf('not json', undefined)).toEqual([{ body: 'not json' }]);
		expect(eventsOf([1], undefined)).toEqual([{ body: 1 }]);
	});

	it('reads timestamps in seconds, milliseconds or ISO form', () => {
		expect(parseTimestamp('1740830400')).toBe(1740830400000);
		expect(parseTimestamp('1740830400123')).toBe(1740830400123);
		expect(parseTimestamp('2025-03-01T12:00:00Z')).toBe(NOW);
		expect(parseTimestamp('soon')).toBeUndefined();
	});

	it('a replay window of 0 turns the age check off, but the timestamp is still signed', () => {
		const settings = {
			method: 'hmacSha256' as const,
			secret: 's',
			secretHeader: 'x-backlog-secret',
			signatureHeader: 'x-backlog-signature',
			signaturePrefix: 'sha256=',
			timestampHeader: 'x-backlog-timestamp',
			replayWindowSeconds: 0,
			signatureCoversTimestamp: true,
		};
		const { createHmac } = jest.requireActual<typeof import('crypto')>('crypto');
		const body = Buffer.from('{}');
		const ts = '1000';
		const signature = `sha256=${createHmac('sha256', 's').update(`${ts}.{}`).digest('hex')}`;
		const headers = { 'x-backlog-timestamp': ts, 'x-backlog-signature': signature };
		expect(verifyRequest(settings, headers, body, NOW)).toMatchObject({ ok: true });
		expect(
			verifyRequest(settings, { ...headers, 'x-backlog-timestamp': '1001' }, body, NOW).ok,
		).toBe(false);
		expect(verifyRequest({ ...settings, replayWindowSeconds: 300 }, headers, body, NOW)).toEqual({
			ok: false,
			reason: 'timestamp outside the replay window',
		});
	});
});
