import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { ageTasks } from '../helpers/age';
import { runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;

useSimulator((started) => (sim = started), { maxPageSize: 10 });

const sync = (extra: Record<string, unknown> = {}) => ({
	resource: 'task',
	operation: 'syncBacklog',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
	sourceValue: 'helpdesk',
	// Every row (one per ticket and per task closed, with its task), as versions 1 and 2 output by default.
	syncOutput: 'allRows',
	...extra,
});
const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
const ticketsFrom = (ids: number[], title = (id: number) => `Ticket ${id}`) =>
	ids.map((id) => ({ id: String(id), title: title(id) }));

async function seedFirstSync() {
	const first = await runBacklog(sim, sync(), { items: ticketsFrom([1, 2, 3, 4, 5]) });
	expect(first.error).toBeUndefined();
	// That sync ran an hour ago: past the Close Grace Period, its tasks are closed when their tickets go missing.
	ageTasks(sim);
	// A task of another source, open: never closed by this sync.
	sim.seedTasks(1, () => ({ fields: { title: 'Other', source: 'crm' } }));
	sim.clearRequests();
}

describe('Task > Sync Backlog', () => {
	it('the first sync creates a task per ticket, marked with its external id and source', async () => {
		const run = await runBacklog(sim, sync(), { items: ticketsFrom([1, 2, 3]) });
		expect(run.json.map((json) => json.action)).toEqual(['create', 'create', 'create']);
		expect(sim.tasks.get(uidOf('2'))!.fields).toEqual({
			title: 'Ticket 2',
			ticket_id: '2',
			source: 'helpdesk',
		});
		expect(run.items.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
	});

	it('closes exactly the open tasks of the source whose tickets are missing, updates the changed, leaves the rest', async () => {
		await seedFirstSync();
		const run = await runBacklog(sim, sync(), {
			items: ticketsFrom([1, 2, 4, 6], (id) => (id === 4 ? 'Ticket 4 (renamed)' : `Ticket ${id}`)),
		});
		expect(run.error).toBeUndefined();
		const actions = Object.fromEntries(run.json.map((json) => [json.external_id, json.action]));
		expect(actions).toEqual({
			'1': 'unchanged',
			'2': 'unchanged',
			'4': 'update',
			'6': 'create',
			'3': 'close',
			'5': 'close',
		});
		const status = (id: string) => sim.tasks.get(uidOf(id))!.status;
		expect(['1', '2', '4', '6'].map(status)).toEqual(['TODO', 'TODO', 'TODO', 'TODO']);
		expect(['3', '5'].map(status)).toEqual(['DONE', 'DONE']);
		expect(sim.tasks.get(uidOf('4'))!.fields.title).toBe('Ticket 4 (renamed)');
		expect([...sim.tasks.values()].find((task) => task.fields.source === 'crm')!.status).toBe(
			'TODO',
		);
		// One read of the source (a page of 10 covers it); the new ticket's uid read (GET finds it archived or not)
		// before it is created; the updated task read again just before its batch (its custom fields are sent along);
		// the update and the closes in one PATCH batch (an existing task is never PUT).
		expect(sent(sim).map((request) => `${request.method} ${request.path}`)).toEqual([
			'GET /tasks',
			`GET /tasks/${uidOf('6')}`,
			`PUT /tasks/${uidOf('6')}`,
			`GET /tasks/${uidOf('4')}`,
			'PATCH /tasks/batch',
		]);
	});

	it('a ticket that comes back reopens its closed task', async () => {
		await seedFirstSync();
		await runBacklog(sim, sync(), { items: ticketsFrom([1, 2, 3, 4]) });
		const run = await runBacklog(sim, sync(), { items: ticketsFrom([1, 2, 3, 4, 5]) });
		expect(run.json.find((json) => json.external_id === '5')!.action).toBe('reopen');
		expect(sim.tasks.get(uidOf('5'))!.status).toBe('TODO');
	});

	it('Dry Run outputs the plan and writes nothing', async () => {
		await seedFirstSync();
		const before = JSON.stringify([...sim.tasks.values()]);
		const run = await runBacklog(sim, sync({ dryRun: true }), { items: ticketsFrom([1, 7]) });
		// Tickets in input order, then the closes (in the order the server listed them).
		const rows = run.json.map((json) => [json.external_id, json.action, json.dry_run]);
		expect(rows.slice(0, 2)).toEqual([
			['1', 'unchanged', true],
			['7', 'create', true],
		]);
		expect(rows.slice(2).sort()).toEqual([
			['2', 'close', true],
			['3', 'close', true],
			['4', 'close', true],
			['5', 'close', true],
		]);
		// Reads only: the listing, and the uid read of the ticket not listed (an archived task is found that way).
		expect(
			sent(sim).every((request) => request.method === 'GET' || request.path === '/tasks/query'),
		).toBe(true);
		expect(JSON.stringify([...sim.tasks.values()])).toBe(before);
	});

	it('pages through a source larger than one page', async () => {
		const ids = Array.from({ length: 35 }, (_, i) => i + 1);
		await runBacklog(sim, sync(), { items: ticketsFrom(ids) });
		ageTasks(sim);
		sim.clearRequests();
		const run = await runBacklog(sim, sync(), { items: ticketsFrom(ids.slice(0, 30)) });
		expect(run.json.filter((json) => json.action === 'close')).toHaveLength(5);
		expect(sent(sim, 'GET', '/tasks')).toHaveLength(4);
	});

	it('refuses to run with a bad ticket, even with Continue On Fail, since skipping it would close its task', async () => {
		await seedFirstSync();
		const items = ticketsFrom([1, 2, 3, 4, 5]);
		items[2].title = '';
		const run = await runBacklog(sim, sync(), { items, continueOnFail: true });
		expect(run.error?.message).toMatch(/Item 2: "Title" is empty/);
		expect(sim.requests).toHaveLength(0);
		expect(sim.tasks.get(uidOf('3'))!.status).toBe('TODO');
	});
});
