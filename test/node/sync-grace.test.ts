// Sync Backlog closes by absence only what is really gone (issue 46, item 2): a task the service created or updated
// within the Close Grace Period before the run, or during it, may belong to a ticket newer than the input (an event's
// Create or Update by External ID, another run of the same source), so it is kept open; a later run closes it if its
// ticket is still missing. Runs on both profiles (unit, unit-strict); the tests of one stamp reading set it themselves.
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { ageTasks } from '../helpers/age';
import { runBacklog, uidOf, upsertByTicket, useSimulator, writesSent } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const MINUTE = 60_000;
const sync = (syncOptions: IDataObject = {}, extra: IDataObject = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	syncOptions,
	// Every row (one per ticket and per task closed or kept open), as versions 1 and 2 output by default.
	syncOutput: 'allRows',
	...extra,
});
/** Create or Update by External ID from an event, marking the task with the sync's source (the common setup). */
const upsertEvent = {
	...upsertByTicket,
	customFields: { field: [{ name: 'source', value: 'helpdesk' }] },
};
const tickets = (ids: number[]) => ids.map((id) => ({ id: `T-${id}`, title: `Ticket ${id}` }));
const status = (id: number) => sim.tasks.get(uidOf(`T-${id}`))?.status;
const actionOf = (json: IDataObject[], id: number) =>
	json.find((row) => row.external_id === `T-${id}`)?.action;

/** The backlog an earlier sync of T-1 ... T-5 left, `ageMs` ago. */
async function earlierSync(ageMs = 60 * MINUTE) {
	const first = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5]) });
	expect(first.error).toBeUndefined();
	ageTasks(sim, ageMs);
	sim.clearRequests();
}

describe('Sync Backlog: Close Grace Period (a task changed on the service within it is not closed by absence)', () => {
	it('an event-driven Create or Update by External ID after the sync input was read: the new task is kept open, not closed', async () => {
		await earlierSync();
		// The upstream node has read tickets T-1 ... T-5; then ticket T-6 is opened and its event creates the task.
		const input = tickets([1, 2, 3, 4, 5]);
		const event = await runBacklog(sim, upsertEvent, { items: tickets([6]) });
		expect(event.error).toBeUndefined();
		expect(sim.tasks.get(uidOf('T-6'))!.fields.source).toBe('helpdesk');
		sim.clearRequests();

		const run = await runBacklog(sim, sync(), { items: input });
		expect(run.error).toBeUndefined();
		expect(status(6)).toBe('TODO');
		const row = run.json.find((json) => json.external_id === 'T-6')!;
		expect(row.action).toBe('kept_open');
		expect(row.note).toMatch(/within the Close Grace Period \(5 min\)/);
		expect(Date.parse(String(row.touched_at))).toBeGreaterThan(Date.now() - MINUTE);
		// Nothing else was due: no write at all.
		expect(writesSent(sim)).toEqual([]);
		// The next run with T-6 in its input finds the task up to date: it never flapped DONE -> TODO.
		const next = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5, 6]) });
		expect(actionOf(next.json, 6)).toBe('unchanged');
	});

	it('an event-driven Create or Update by External ID running while the Sync runs: the task is never closed', async () => {
		await earlierSync();
		const [run, event] = await Promise.all([
			runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5]) }),
			runBacklog(sim, upsertEvent, { items: tickets([6]) }),
		]);
		expect(run.error).toBeUndefined();
		expect(event.error).toBeUndefined();
		expect(status(6)).toBe('TODO');
		// Listed after the event (kept open) or before it (not seen): never closed.
		expect(['kept_open', undefined]).toContain(actionOf(run.json, 6));
	});

	it('an event-driven Update by External ID of a task whose ticket is missing from the input: it is kept open', async () => {
		await earlierSync();
		// T-3 was resolved when the upstream node read its tickets, then reopened and updated by an event.
		const event = await runBacklog(sim, upsertEvent, {
			items: [{ id: 'T-3', title: 'Ticket 3 (reopened)' }],
		});
		expect(event.error).toBeUndefined();
		const run = await runBacklog(sim, sync(), { items: tickets([1, 2, 4, 5]) });
		expect(run.error).toBeUndefined();
		expect(actionOf(run.json, 3)).toBe('kept_open');
		expect(status(3)).toBe('TODO');
		expect(sim.tasks.get(uidOf('T-3'))!.fields.title).toBe('Ticket 3 (reopened)');
	});

	it('a task older than the grace period and missing from the input is closed; one inside it is kept', async () => {
		await earlierSync();
		// T-4 changed 4 minutes ago (inside the default 5), T-5 6 minutes ago (outside), T-1 ... T-3 an hour ago.
		const shift = (id: number, ms: number) => {
			const uid = uidOf(`T-${id}`);
			ageTasks(sim, -(60 * MINUTE - ms), (task) => task.uid === uid);
		};
		shift(4, 4 * MINUTE);
		shift(5, 6 * MINUTE);
		const run = await runBacklog(sim, sync(), { items: tickets([1, 2]) });
		expect(run.error).toBeUndefined();
		expect([3, 4, 5].map((id) => actionOf(run.json, id))).toEqual(['close', 'kept_open', 'close']);
		expect([3, 4, 5].map(status)).toEqual(['DONE', 'TODO', 'DONE']);
		// The next run, past the grace period, closes it: the ticket is still missing.
		ageTasks(sim, 2 * MINUTE);
		const later = await runBacklog(sim, sync(), { items: tickets([1, 2]) });
		expect(actionOf(later.json, 4)).toBe('close');
		expect(status(4)).toBe('DONE');
	});

	it('Close Grace Period 10 keeps a task changed 6 minutes ago; 0 closes one changed a minute ago', async () => {
		await earlierSync(6 * MINUTE);
		const ten = await runBacklog(sim, sync({ closeGraceMinutes: 10 }), {
			items: tickets([1, 2, 3, 4]),
		});
		expect(ten.error).toBeUndefined();
		expect(actionOf(ten.json, 5)).toBe('kept_open');
		expect(status(5)).toBe('TODO');
		ageTasks(sim, -5 * MINUTE);
		const zero = await runBacklog(sim, sync({ closeGraceMinutes: 0 }), {
			items: tickets([1, 2, 3, 4]),
		});
		expect(zero.error).toBeUndefined();
		expect(actionOf(zero.json, 5)).toBe('close');
		expect(status(5)).toBe('DONE');
	});

	it('a Close Grace Period that is not a number of minutes from 0 is refused before any request, naming the item and the field', async () => {
		await earlierSync();
		for (const bad of [-1, 'soon', true]) {
			const run = await runBacklog(sim, sync({ closeGraceMinutes: bad }), { items: tickets([1]) });
			expect(run.error?.message).toMatch(
				/^Item 0: "Close Grace Period \(Minutes\)" must be a number from 0, got /,
			);
			expect(sim.requests).toEqual([]);
		}
	});

	it.each([
		['Close Grace Period (Minutes)', 'closeGraceMinutes'],
		['Full Read Every (Hours)', 'fullReadEveryHours'],
	])(
		'%s given by an expression that resolves to undefined, null, blanks or "" is bad input: refused before any request, naming item 0 and the field, never read as its default or 0',
		async (label, key) => {
			await earlierSync();
			const cases: Array<[string, string]> = [
				['={{ $json.graceTypo }}', 'undefined'],
				['={{ null }}', 'null'],
				["={{ '' }}", '""'],
				["={{ '  ' }}", '"  "'],
			];
			for (const [expression, shown] of cases) {
				for (const typeVersion of [2, 3]) {
					const run = await runBacklog(sim, sync({ [key]: expression }), {
						items: tickets([1, 2]),
						typeVersion,
					});
					expect(run.error?.message).toBe(
						`Item 0: "${label}" is empty: its expression resolved to ${shown}; it must be a number from 0`,
					);
					expect((run.error as { description?: string } | undefined)?.description).toMatch(
						/^Nothing was sent\./,
					);
					expect(sim.requests).toEqual([]);
				}
			}
			// Not added to Sync Options: the default, and the run goes on (T-5, synced an hour ago, is closed).
			const run = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4]) });
			expect(run.error).toBeUndefined();
			expect(status(5)).toBe('DONE');
		},
	);

	it('Dry Run reports the kept task and writes nothing', async () => {
		await earlierSync();
		await runBacklog(sim, upsertEvent, { items: tickets([6]) });
		sim.clearRequests();
		const run = await runBacklog(sim, sync({}, { dryRun: true }), { items: tickets([1, 2, 3, 4]) });
		expect(run.error).toBeUndefined();
		expect([5, 6].map((id) => actionOf(run.json, id))).toEqual(['close', 'kept_open']);
		expect(writesSent(sim)).toEqual([]);
	});
});

describe('Sync Backlog: the Close Grace Period under each reading of the service stamps', () => {
	it.each([
		[
			'server stamps updated_at, internal stamps filled',
			{ updatedAtFrom: 'server', internalStamps: 'filled' },
		],
		[
			'a caller-written updated_at is kept, internal stamps null',
			{ updatedAtFrom: 'body', internalStamps: 'null' },
		],
	] as const)(
		"a task another caller created just now with its ticket's hours-old updated_at is kept open (%s): its created_at is the service's",
		async (_, readings) => {
			sim.configure({ readings });
			await earlierSync();
			const hoursAgo = new Date(Date.now() - 5 * 60 * MINUTE).toISOString();
			sim.seedTasks(1, () => ({
				uid: uidOf('T-7'),
				updated_at: hoursAgo,
				fields: { title: 'Ticket 7', ticket_id: 'T-7', source: 'helpdesk' },
			}));
			const run = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5]) });
			expect(run.error).toBeUndefined();
			expect(actionOf(run.json, 7)).toBe('kept_open');
			expect(status(7)).toBe('TODO');
		},
	);

	it("an operator's recent change dated only by internal_updated_at (updated_at kept as a caller wrote it) keeps the task open", async () => {
		sim.configure({ readings: { updatedAtFrom: 'body', internalStamps: 'filled' } });
		await earlierSync();
		const task = sim.tasks.get(uidOf('T-5'))!;
		task.internal_updated_at = new Date(Date.now() - MINUTE).toISOString();
		const run = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4]) });
		expect(run.error).toBeUndefined();
		expect(actionOf(run.json, 5)).toBe('kept_open');
		expect(status(5)).toBe('TODO');
	});
});

describe("Sync Backlog: two runs of one source at once never close each other's new tasks", () => {
	it('a run whose input was read before the other run created T-6 and T-7 keeps them open', async () => {
		await earlierSync();
		// Run B has the newer input (T-6, T-7 opened); run A's input was read before them and runs after B wrote.
		const older = tickets([1, 2, 3, 4, 5]);
		const b = await runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, 5, 6, 7]) });
		expect(b.error).toBeUndefined();
		const a = await runBacklog(sim, sync(), { items: older });
		expect(a.error).toBeUndefined();
		expect([6, 7].map((id) => actionOf(a.json, id))).toEqual(['kept_open', 'kept_open']);
		expect([6, 7].map(status)).toEqual(['TODO', 'TODO']);
	});

	it('two runs started together, one with the new tickets: every new task stays open, every gone one is closed', async () => {
		await earlierSync();
		for (let round = 0; round < 3; round++) {
			const fresh = [10 + 2 * round, 11 + 2 * round];
			const [a, b] = await Promise.all([
				runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4]) }),
				runBacklog(sim, sync(), { items: tickets([1, 2, 3, 4, ...fresh]) }),
			]);
			expect(a.error).toBeUndefined();
			expect(b.error).toBeUndefined();
			expect(fresh.map(status)).toEqual(['TODO', 'TODO']);
			for (const id of fresh) expect(['kept_open', undefined]).toContain(actionOf(a.json, id));
		}
		// T-5, missing from both inputs and an hour old, is closed.
		expect(status(5)).toBe('DONE');
	});
});

describe('Sync Backlog: the mass-close guard still judges the whole source with the grace period', () => {
	it('tasks kept open count among the open tasks, not among the closes: a short input of old tasks is still refused', async () => {
		// 30 open tasks: T-1 ... T-15 an hour old, T-16 ... T-30 changed a minute ago. The input holds T-1 and T-2 only.
		sim.seedTasks(30, (i) => ({
			uid: uidOf(`T-${i + 1}`),
			fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
		}));
		const old = new Set(Array.from({ length: 15 }, (_, i) => uidOf(`T-${i + 1}`)));
		ageTasks(sim, 60 * MINUTE, (task) => old.has(task.uid));
		ageTasks(sim, MINUTE, (task) => !old.has(task.uid));
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: tickets([1, 2]) });
		expect(run.error?.message).toMatch(
			/^Sync Backlog would close 13 of the 30 open tasks of source "helpdesk" \(43%\)/,
		);
		expect(writesSent(sim)).toEqual([]);
	});

	it('many tasks kept open do not trip the guard: 15 new tasks from events and 2 gone tickets of 30', async () => {
		sim.seedTasks(15, (i) => ({
			uid: uidOf(`T-${i + 1}`),
			fields: { title: `Ticket ${i + 1}`, ticket_id: `T-${i + 1}`, source: 'helpdesk' },
		}));
		ageTasks(sim);
		await runBacklog(sim, upsertEvent, {
			items: Array.from({ length: 15 }, (_, i) => ({
				id: `T-${i + 16}`,
				title: `Ticket ${i + 16}`,
			})),
		});
		const run = await runBacklog(sim, sync(), {
			items: tickets(Array.from({ length: 13 }, (_, i) => i + 1)),
		});
		expect(run.error).toBeUndefined();
		const count = (action: string) => run.json.filter((json) => json.action === action).length;
		expect([count('close'), count('kept_open'), count('unchanged')]).toEqual([2, 15, 13]);
		expect([14, 15, 16, 30].map(status)).toEqual(['DONE', 'DONE', 'TODO', 'TODO']);
	});
});
