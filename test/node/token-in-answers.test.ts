/**
 * The token never reaches the node's output through the service's successful answers, on both simulator profiles
 * (their listings, batches and error bodies differ): here the token is saved with a trailing newline, as a token read
 * from a file is, and tasks hold it in their fields (a title pasted from a log). Redaction covers success answers as
 * well as errors (issue 47, S1 and S3).
 */
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../tools/simulator/simulator';
import { byId, runBacklog, TOKEN, uidOf, upsertByTicket, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

const saved = { token: `${TOKEN}\n` };
const pasted = (id: number) => `Ticket ${id}: curl -H "Authorization: Bearer ${TOKEN}"`;

/** The run's items hold the token nowhere, and show where it was as ***. */
function expectRedacted(run: { json: IDataObject[]; error?: Error }) {
	expect(run.error).toBeUndefined();
	const text = JSON.stringify(run.json);
	expect(text).not.toContain(TOKEN);
	expect(text).toContain('Bearer ***');
}

it('a token saved with a trailing newline never appears in the output of Create or Update, Get and Get Many when the tasks hold it', async () => {
	const tickets = [1, 2, 3].map((id) => ({ id: String(id), title: pasted(id) }));
	const upserted = await runBacklog(sim, upsertByTicket, { items: tickets, credentials: saved });
	expectRedacted(upserted);
	expect(upserted.json).toHaveLength(3);
	// The service holds what the items said: only what comes back out is redacted.
	expect(sim.tasks.get(uidOf('1'))?.fields.title).toBe(pasted(1));

	const got = await runBacklog(
		sim,
		{ resource: 'task', operation: 'get', task: byId(uidOf('2')), simplify: false },
		{ credentials: saved },
	);
	expectRedacted(got);

	const listed = await runBacklog(
		sim,
		{ resource: 'task', operation: 'getAll', returnAll: true, simplify: false },
		{ credentials: saved },
	);
	expectRedacted(listed);
	expect(listed.json).toHaveLength(3);
});

it('only the output is redacted: a task holding the token is created without a false "already exists", and a later write keeps its other fields as the service holds them', async () => {
	const uid = uidOf('7');
	const created = await runBacklog(
		sim,
		{ resource: 'task', operation: 'create', title: pasted(7), additionalFields: { uid } },
		{ credentials: saved },
	);
	expectRedacted(created);
	sim.seedTasks(1, () => ({
		uid: uidOf('8'),
		fields: { title: 'Ticket 8', note: pasted(8), ticket_id: '8' },
	}));
	const updated = await runBacklog(sim, upsertByTicket, {
		items: [{ id: '8', title: 'Ticket 8, renamed' }],
		credentials: saved,
	});
	expect(updated.error).toBeUndefined();
	expect(JSON.stringify(updated.json)).not.toContain(TOKEN);
	expect(sim.tasks.get(uidOf('8'))?.fields).toMatchObject({
		title: 'Ticket 8, renamed',
		note: pasted(8),
	});
	expect(sim.tasks.get(uid)?.fields.title).toBe(pasted(7));
});

it('a token saved with a trailing newline never appears in the rows of Sync Backlog when the tasks hold it', async () => {
	const tickets = [1, 2].map((id) => ({ id: String(id), title: pasted(id) }));
	const run = await runBacklog(
		sim,
		{
			resource: 'task',
			operation: 'syncBacklog',
			externalId: '={{ $json.id }}',
			title: '={{ $json.title }}',
			sourceValue: 'helpdesk',
		},
		{ items: tickets, credentials: saved },
	);
	expect(run.error).toBeUndefined();
	expect(JSON.stringify(run.json)).not.toContain(TOKEN);
});

it('a token saved with a trailing newline never appears in a Continue On Fail error item, whatever shape the error body has', async () => {
	sim.failNext(
		{ status: 500, body: `upstream said: Authorization: Bearer ${TOKEN}` },
		{ status: 422, body: { detail: [{ loc: ['header', 'authorization'], msg: `bad ${TOKEN}` }] } },
		{ status: 403, body: { error: { message: `token ${TOKEN} may not` } } },
	);
	const run = await runBacklog(
		sim,
		{
			resource: 'task',
			operation: 'get',
			task: byId(uidOf('9')),
			requestOptions: { maxAttempts: 1 },
		},
		{ items: [{}, {}, {}], continueOnFail: true, credentials: saved },
	);
	expect(run.json.map((item) => item.httpCode)).toEqual(['500', '422', '403']);
	expect(JSON.stringify(run.json)).not.toContain(TOKEN);
	expect(JSON.stringify(run.json)).toContain('***');
});
