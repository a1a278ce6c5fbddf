/**
 * External ID, UID, Title and URL accept text and finite numbers only. An expression that returns an object, an
 * array, a boolean or NaN used to become "[object Object]" (the same uid for every item, so Sync Backlog closed
 * every real task of the source); now it is an error for that item, naming the field, before any request.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import { runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;

useSimulator((started) => (sim = started));

const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);

/** Values an expression can return that are not text. */
const NOT_TEXT: Array<[string, IDataObject[string], RegExp]> = [
	['an object', { id: 1042 }, /an object/],
	['an array', ['1042', '1043'], /an array/],
	['a boolean', true, /a boolean \(true\)/],
	['NaN', Number.NaN, /NaN/],
];

const upsert = {
	resource: 'task',
	operation: 'upsert',
	identifyBy: 'externalId',
	externalId: '={{ $json.value }}',
	title: 'A ticket',
};

describe('External ID', () => {
	it.each(NOT_TEXT)(
		'Upsert: an External ID expression returning %s is an error naming the item and the field, and nothing is sent',
		async (_, value, kind) => {
			const run = await runBacklog(sim, upsert, { items: [{ value }] });
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 0: "External ID" must be text or a number/);
			expect(run.error!.message).toMatch(kind);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it.each(NOT_TEXT)(
		'Sync Backlog: an External ID returning %s fails before any request, so no task of the source is closed',
		async (_, value) => {
			sim.seedTasks(3, (i) => ({
				uid: uidOf(`T-${i}`),
				fields: { title: `Ticket ${i}`, ticket_id: `T-${i}`, source: 'helpdesk' },
			}));
			sim.clearRequests();
			const run = await runBacklog(
				sim,
				{
					resource: 'task',
					operation: 'syncBacklog',
					externalId: '={{ $json.value }}',
					title: 'Ticket',
					sourceValue: 'helpdesk',
				},
				{ items: [{ value }, { value }] },
			);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 0: "External ID" must be text or a number/);
			expect(sent(sim)).toHaveLength(0);
			expect([...sim.tasks.values()].map((task) => task.status)).toEqual(['TODO', 'TODO', 'TODO']);
		},
	);

	it('a finite number is accepted as its text, giving the same uid as that text', async () => {
		const run = await runBacklog(sim, upsert, { items: [{ value: 1042 }] });
		expect(run.error).toBeUndefined();
		expect(run.json[0].uid).toBe(uidOf('1042'));
		expect(sim.tasks.get(uidOf('1042'))!.fields.ticket_id).toBe('1042');
	});

	it('with Continue On Fail only the bad item fails, with its own error, and the good one is written', async () => {
		const run = await runBacklog(sim, upsert, {
			items: [{ value: { id: 1 } }, { value: 'T-2' }],
			continueOnFail: true,
		});
		expect(run.json).toHaveLength(2);
		expect(String(run.json[0].error)).toMatch(/Item 0: "External ID" must be text or a number/);
		expect(run.json[1].uid).toBe(uidOf('T-2'));
		expect(sim.tasks.has(uidOf('T-2'))).toBe(true);
		expect(sim.tasks.has(uidOf('[object Object]'))).toBe(false);
	});
});

describe('UID, Title and URL', () => {
	it.each(NOT_TEXT)(
		'Upsert by UID: a UID expression returning %s is an error naming the field',
		async (_, value) => {
			const run = await runBacklog(
				sim,
				{ ...upsert, identifyBy: 'uid', uid: '={{ $json.value }}' },
				{ items: [{ value }] },
			);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 0: "UID" must be a UID/);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it.each(NOT_TEXT)(
		'Create: a Title expression returning %s is an error naming the field',
		async (_, value, kind) => {
			const run = await runBacklog(
				sim,
				{ resource: 'task', operation: 'create', title: '={{ $json.value }}' },
				{ items: [{ value }] },
			);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 0: "Title" must be text or a number/);
			expect(run.error!.message).toMatch(kind);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it.each(NOT_TEXT)(
		'Create: a URL expression returning %s is an error naming the field',
		async (_, value) => {
			const run = await runBacklog(
				sim,
				{ resource: 'task', operation: 'create', title: 'x', url: '={{ $json.value }}' },
				{ items: [{ value: 'https://tickets.example.com/1' }, { value }] },
			);
			expect(run.error).toBeInstanceOf(NodeOperationError);
			expect(run.error!.message).toMatch(/^Item 1: "URL" must be text or a number/);
			expect(sim.requests).toHaveLength(0);
		},
	);

	it('Update: a Title in Update Fields returning an object is an error naming the field', async () => {
		const [{ uid }] = sim.seedTasks(1);
		sim.clearRequests();
		const run = await runBacklog(
			sim,
			{
				resource: 'task',
				operation: 'update',
				task: { __rl: true, mode: 'id', value: uid },
				updateFields: { title: '={{ $json.value }}' },
			},
			{ items: [{ value: { a: 1 } }] },
		);
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toMatch(/^Item 0: "Title" must be text or a number/);
		expect(sim.requests).toHaveLength(0);
	});

	it('a numeric Title is written as its text', async () => {
		const run = await runBacklog(
			sim,
			{ resource: 'task', operation: 'create', title: '={{ $json.value }}' },
			{ items: [{ value: 42 }] },
		);
		expect(run.error).toBeUndefined();
		expect(sim.tasks.get(String(run.json[0].uid))!.fields.title).toBe('42');
	});
});
