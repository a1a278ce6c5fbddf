// Spec open points: the request body size limit and the query operator "in", which bulk reads by uid rely on
// (reading queryOperators, and scripted answers).
import { byId, runBacklog, sent, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, tickets, uidOf, upsert } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('Bulk reads by uid: the request body limit and the operator "in" are not shown', () => {
	it('a bulk read refused as too large (413) is split and the accepted size is kept for the run', async () => {
		const existing = sim.seedTasks(3, (i) => ({
			uid: uidOf(`T-${i + 1}`),
			fields: { title: `Old ${i + 1}`, owner_note: 'kept' },
		}));
		sim.failNext({
			status: 413,
			body: 'Request Entity Too Large',
			when: ({ path }) => path.endsWith('/tasks/query'),
		});
		const run = await runBacklog(sim, upsert, { items: tickets(10) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(10);
		for (const task of existing)
			expect(sim.tasks.get(task.uid)!.fields).toMatchObject({ owner_note: 'kept' });
		const reads = sent(sim, 'POST', '/tasks/query');
		expect(reads[0].status).toBe(413);
		expect(reads.filter((request) => request.status === 200).length).toBeGreaterThanOrEqual(2);
	});

	it.each([
		['ignores it (answers with a task not asked for)', { status: 200, body: 'unrelated' }],
		[
			'refuses it (422)',
			{
				status: 422,
				body: { detail: [{ loc: ['body', 'condition', 'operator'], msg: 'unsupported operator' }] },
			},
		],
	] as const)(
		'a server that %s is read one task at a time with GET /tasks/{uid}, and no write replaces a task it did not read',
		async (_, fault) => {
			const [other] = sim.seedTasks(1, () => ({
				fields: { title: 'Someone else', owner_note: 'kept' },
			}));
			const [existing] = sim.seedTasks(1, () => ({
				uid: uidOf('T-2'),
				fields: { title: 'Old 2', owner_note: 'kept' },
			}));
			const body =
				fault.body === 'unrelated' ? { items: [other], meta: { limit: 100 } } : fault.body;
			sim.failNext({
				status: fault.status,
				body,
				when: ({ path }) => path.endsWith('/tasks/query'),
			});
			const run = await runBacklog(sim, upsert, { items: tickets(3) });
			expect(run.error).toBeUndefined();
			expect(run.items.map((item) => item.json.uid)).toEqual([
				uidOf('T-1'),
				uidOf('T-2'),
				uidOf('T-3'),
			]);
			expect(sim.tasks.get(existing.uid)!.fields).toEqual({
				title: 'Ticket 2',
				ticket_id: 'T-2',
				owner_note: 'kept',
			});
			expect(sim.tasks.get(other.uid)!.fields).toEqual({
				title: 'Someone else',
				owner_note: 'kept',
			});
			expect(sent(sim, 'POST', '/tasks/query')).toHaveLength(1); // one answer is enough to know
			expect(sent(sim, 'GET', /^\/tasks\/[0-9a-f-]+$/)).toHaveLength(3);
		},
	);

	it('on a server that knows only the documented operators (queryOperators documented), Create or Update and Update keep every custom field', async () => {
		sim.configure({ readings: { queryOperators: 'documented' } });
		const [existing] = sim.seedTasks(1, () => ({
			uid: uidOf('T-1'),
			fields: { title: 'Old 1', owner_note: 'kept' },
		}));
		const upserted = await runBacklog(sim, upsert, { items: tickets(2) });
		expect(upserted.error).toBeUndefined();
		expect(sim.tasks.get(existing.uid)!.fields).toEqual({
			title: 'Ticket 1',
			ticket_id: 'T-1',
			owner_note: 'kept',
		});
		expect(sim.tasks.get(uidOf('T-2'))!.fields).toMatchObject({ title: 'Ticket 2' });
		const updated = await runBacklog(sim, {
			resource: 'task',
			operation: 'update',
			task: byId(existing.uid),
			updateFields: { title: 'New' },
		});
		expect(updated.error).toBeUndefined();
		expect(sim.tasks.get(existing.uid)!.fields).toEqual({
			title: 'New',
			ticket_id: 'T-1',
			owner_note: 'kept',
		});
	});

	it('the GET confirming that the tasks a bulk read did not find are new goes while the archived ones are read, not after', async () => {
		// Each query answers 400 ms after it arrived: a GET sent after the archived query's answer arrives 400 ms later.
		sim.configure({
			faults: { latencyMs: [400, 400], only: ({ path }) => path === '/tasks/query' },
		});
		const run = await runBacklog(sim, upsert, { items: tickets(3) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(3);
		const [notArchived, archived, ...more] = sent(sim, 'POST', '/tasks/query');
		expect(more).toHaveLength(0);
		expect(notArchived.query.archived).not.toBe('true');
		expect(archived.query.archived).toBe('true');
		const lookups = sent(sim, 'GET', /^\/tasks\/[0-9a-f-]{36}$/);
		expect(lookups.map((request) => [request.path, request.status])).toEqual([
			[`/tasks/${uidOf('T-3')}`, 404],
		]);
		expect(lookups[0].at - archived.at).toBeLessThan(300);
	});

	it("when the last ticket's task is archived, the GET sent beside the archived read finds it and the next ticket not found is looked up", async () => {
		const [archivedTask] = sim.seedTasks(1, () => ({
			uid: uidOf('T-3'),
			archived: true,
			fields: { title: 'Old 3', owner_note: 'kept' },
		}));
		const run = await runBacklog(sim, upsert, { items: tickets(3) });
		expect(run.error).toBeUndefined();
		expect(sim.tasks.size).toBe(3);
		expect(sim.tasks.get(archivedTask.uid)!.fields).toMatchObject({
			title: 'Ticket 3',
			owner_note: 'kept',
		});
		const lookups = sent(sim, 'GET', /^\/tasks\/[0-9a-f-]{36}$/);
		// The read's lookups (the strict profile's write reads the archived task again after them).
		expect(lookups.slice(0, 2).map((request) => [request.path, request.status])).toEqual([
			[`/tasks/${uidOf('T-3')}`, 200],
			[`/tasks/${uidOf('T-2')}`, 404],
		]);
	});
});
