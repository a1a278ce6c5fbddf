// Spec open point: /tasks/query paged or not, its limit in the body or the query, and its maximum (readings
// queryPaging, queryLimitFrom, queryMaxLimit).
import { runBacklog, sent, useSimulator } from '../../helpers/backlog';
import type { Simulator } from '../../../tools/simulator/simulator';
import { PROFILE_READINGS, uidOf, upsert } from './common';

let sim: Simulator;

useSimulator((started) => (sim = started), PROFILE_READINGS);

describe('/tasks/query paging: not documented (facts: no cursor); limit in body or query; its maximum', () => {
	it.each([
		['a cursor', { queryPaging: 'cursor' as const }],
		[
			'no cursor, limit in the body only, at most 50',
			{ queryPaging: 'none' as const, queryLimitFrom: 'body' as const, queryMaxLimit: 50 },
		],
	])('Query with Return All returns 130 of 130 (%s)', async (_, readings) => {
		sim.configure({ readings });
		sim.seedTasks(130, (i) => ({ fields: { title: `T ${i}`, batch: 'q' } }));
		sim.seedTasks(5, () => ({ fields: { title: 'other', batch: 'x' } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			conditions: { condition: [{ field: 'fields.batch', operator: 'equals', value: 'q' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(new Set(run.json.map((json) => json.uid)).size).toBe(130);
	});

	it('Query with a sort and Return All returns every match in the sort order', async () => {
		sim.seedTasks(70, (i) => ({ fields: { title: `T ${i}`, rank: (i * 37) % 70 } }));
		const run = await runBacklog(sim, {
			resource: 'task',
			operation: 'query',
			sorts: { sort: [{ field: 'fields.rank', direction: 'descending' }] },
			returnAll: true,
		});
		expect(run.error).toBeUndefined();
		expect(run.json.map((json) => (json.fields as { rank: number }).rank)).toEqual(
			Array.from({ length: 70 }, (_, i) => 69 - i),
		);
	});
});

describe('Bulk reads by uid on a server without query cursors: paged by uid until an empty page, or the greatest uid asked', () => {
	const noCursors = { queryPaging: 'none', queryLimitFrom: 'body', queryMaxLimit: 50 } as const;
	const ticketsOf = (ids: string[]) => ids.map((id) => ({ id, title: `Title of ${id}` }));

	/** Tickets (by id) whose uids sort before / after every uid of these known ones. */
	function newTickets(known: string[], before: number, after: number): string[] {
		const greatest = known.map(uidOf).sort().at(-1)!;
		const candidates = Array.from({ length: 400 }, (_, i) => `NEW-${i + 1}`);
		return [
			...candidates.filter((id) => uidOf(id) < greatest).slice(0, before),
			...candidates.filter((id) => uidOf(id) > greatest).slice(0, after),
		];
	}

	async function storeThenRead(before: number, after: number) {
		sim.configure({ readings: noCursors });
		const known = Array.from({ length: 20 }, (_, i) => `KNOWN-${i + 1}`);
		expect((await runBacklog(sim, upsert, { items: ticketsOf(known) })).error).toBeUndefined();
		const fresh = newTickets(known, before, after);
		sim.clearRequests();
		const run = await runBacklog(sim, upsert, { items: ticketsOf(fresh) });
		expect(run.error).toBeUndefined();
		for (const id of fresh) expect(sim.tasks.get(uidOf(id))?.fields?.title).toBe(`Title of ${id}`);
		expect(sim.tasks.size).toBe(known.length + fresh.length);
		return {
			queries: sent(sim, 'POST', '/tasks/query').length,
			gets: sent(sim, 'GET', /^\/tasks\/[0-9a-f-]{36}$/).length,
		};
	}

	it('new tickets sorting before a task the node knows cost two queries (not archived, archived) and no empty page', async () => {
		expect(await storeThenRead(5, 0)).toEqual({ queries: 2, gets: 0 });
	});

	it('a new ticket sorting after every task the node knows costs the empty page, and every task is stored', async () => {
		expect(await storeThenRead(4, 1)).toEqual({ queries: 3, gets: 0 });
	});
});
