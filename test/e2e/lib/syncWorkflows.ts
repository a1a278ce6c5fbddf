// Workflows of Sync Backlog as users build them around it, for hardening.test.ts: a Sync and an event's Create or
// Update by External ID started by webhooks (one n8n process, executions at once), and one manual workflow of the
// inputs Sync Backlog refuses (options whose expression resolves to nothing, Execute Once, Loop Over Items batches)
// beside a loop over sources, which it syncs.
import { randomUUID } from 'crypto';

import type { NodeSpec } from './backlog';
import { backlogNode, codeNode, workflowOf } from './backlog';

type Connections = Record<
	string,
	{ main: Array<Array<{ node: string; type: 'main'; index: number }>> }
>;

function workflow(id: string, name: string, specs: NodeSpec[], connections: Connections) {
	const nodes = specs.map(
		({ name: nodeName, type, typeVersion, parameters, ...settings }, index) => ({
			id: randomUUID(),
			name: nodeName,
			type,
			typeVersion: typeVersion ?? 1,
			position: [(index % 6) * 220, Math.floor(index / 6) * 180],
			parameters: parameters ?? {},
			...settings,
		}),
	);
	return workflowOf(id, name, nodes, connections);
}

const to = (...nodes: Array<string | [string, number]>) =>
	nodes.map((node) => {
		const [name, index] = typeof node === 'string' ? [node, 0] : node;
		return { node: name, type: 'main' as const, index };
	});

/** A Webhook (POST `path`) that answers with the last node's items once the workflow has run. */
const webhook = (path: string): NodeSpec => ({
	name: 'Webhook',
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2,
	webhookId: randomUUID(),
	parameters: {
		httpMethod: 'POST',
		path,
		responseMode: 'lastNode',
		responseData: 'allEntries',
		options: {},
	},
});

/** Sync Backlog node version 3 of tickets `{ id, title, source }` (Source Value from the ticket: item 0's). */
export const syncV3 = (
	name: string,
	parameters: Record<string, unknown> = {},
	settings: Record<string, unknown> = {},
) =>
	backlogNode(
		name,
		{
			resource: 'task',
			operation: 'syncBacklog',
			externalId: '={{ $json.id }}',
			title: '={{ $json.title }}',
			sourceValue: '={{ $json.source }}',
			...parameters,
		},
		{ typeVersion: 3, ...settings },
	);

/**
 * POST `{ source, tickets: [{ id, title }] }` → Sync Backlog (version 3, its defaults: Changes and Summary, Close
 * Grace Period 5 minutes, Full Read Every 24 hours); the answer is its output.
 */
export function syncHookWorkflow(id: string, path: string) {
	return workflow(
		id,
		`e2e: sync on a webhook (${path})`,
		[
			webhook(path),
			codeNode(
				'Tickets',
				'const { source, tickets } = $input.first().json.body;\nreturn tickets.map((ticket) => ({ json: { ...ticket, source } }));',
			),
			syncV3('Sync'),
		],
		{ Webhook: { main: [to('Tickets')] }, Tickets: { main: [to('Sync')] } },
	);
}

/** POST `{ source, id, title }` → Create or Update by External ID, the task marked with the sync's source. */
export function eventHookWorkflow(id: string, path: string) {
	return workflow(
		id,
		`e2e: ticket event on a webhook (${path})`,
		[
			webhook(path),
			backlogNode('Create or Update', {
				resource: 'task',
				operation: 'upsert',
				identifyBy: 'externalId',
				externalId: '={{ $json.body.id }}',
				title: '={{ $json.body.title }}',
				customFields: { field: [{ name: 'source', value: '={{ $json.body.source }}' }] },
			}),
		],
		{ Webhook: { main: [to('Create or Update')] } },
	);
}

/** Tickets `${prefix}-1` … `${prefix}-n` of `source`. */
export const ticketsOf = (source: string, prefix: string, n: number) =>
	Array.from({ length: n }, (_, i) => ({
		id: `${prefix}-${i + 1}`,
		title: `Ticket ${i + 1}`,
		source,
	}));

/** The new Sync options, as a user sets them on a node in a loop or with Execute Once. */
const NEW_OPTIONS = {
	syncOutput: 'summary',
	syncOptions: { closeGraceMinutes: 5, fullReadEveryHours: 24 },
};

/**
 * One manual run, each branch after the other; every Sync Backlog node continues on error (n8n passes its input on and
 * keeps the error in the node's run), so the refusals are read from the run:
 * - "Grace typo", "Full read null", "Grace empty": Close Grace Period (Minutes) `{{ $json.graceTypo }}` (undefined),
 *   Full Read Every (Hours) `{{ null }}`, Close Grace Period `{{ '' }}` (source e2e-refuse);
 * - "Sync once": Execute Once with the new options (e2e-once-v3);
 * - "Sync batch": on Loop Over Items' loop output, batch size 2 of 4 tickets (e2e-loop);
 * - "Sync mapped": the same through a Code node that maps each ticket (e2e-loop-mapped);
 * - "Sync per source": a loop over two sources, each run the tickets of one (e2e-loop-a, e2e-loop-b): synced;
 * - "Sync twice": two nodes feeding it, each half of the tickets (e2e-twice): the first run syncs its half, the
 *   second, of the same source in the same execution, is refused.
 */
export function refusalsWorkflow(id: string) {
	const refuse = ticketsOf('e2e-refuse', 'RF', 2);
	const loop = (name: string, batchSize: number): NodeSpec => ({
		name,
		type: 'n8n-nodes-base.splitInBatches',
		typeVersion: 3,
		parameters: { batchSize, options: {} },
	});
	const onError = { onError: 'continueRegularOutput' };
	return workflow(
		id,
		'e2e: Sync Backlog inputs it refuses, and a loop over sources',
		[
			{ name: 'Manual', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
			codeNode('Refuse tickets', refuse),
			syncV3(
				'Grace typo',
				{ syncOptions: { closeGraceMinutes: '={{ $json.graceTypo }}' } },
				onError,
			),
			syncV3('Full read null', { syncOptions: { fullReadEveryHours: '={{ null }}' } }, onError),
			syncV3('Grace empty', { syncOptions: { closeGraceMinutes: "={{ '' }}" } }, onError),
			codeNode('Once tickets', ticketsOf('e2e-once-v3', 'OV', 3)),
			syncV3('Sync once', NEW_OPTIONS, { ...onError, executeOnce: true }),
			codeNode('Loop tickets', ticketsOf('e2e-loop', 'LP', 4)),
			loop('Loop', 2),
			syncV3('Sync batch', NEW_OPTIONS, onError),
			codeNode('Mapped tickets', ticketsOf('e2e-loop-mapped', 'LM', 4)),
			loop('Loop mapped', 2),
			codeNode(
				'Map',
				'return $input.all().map((item) => ({ json: { ...item.json, title: item.json.title + " (mapped)" } }));',
			),
			syncV3('Sync mapped', NEW_OPTIONS, onError),
			codeNode('Sources', [{ source: 'e2e-loop-a' }, { source: 'e2e-loop-b' }]),
			loop('Loop sources', 1),
			codeNode(
				'Tickets of source',
				'const { source } = $input.first().json;\nreturn [1, 2].map((n) => ({ json: { id: source + "-" + n, title: "Ticket " + n, source } }));',
			),
			syncV3('Sync per source', NEW_OPTIONS, onError),
			codeNode('First half', ticketsOf('e2e-twice', 'TW', 2)),
			codeNode('Second half', [{ id: 'TW-3', title: 'Ticket 3', source: 'e2e-twice' }]),
			syncV3('Sync twice', NEW_OPTIONS, onError),
			// n8n ends a run whose last node kept an error (continuing) as failed: a node after it ends the run.
			codeNode('After twice', 'return $input.all();'),
		],
		{
			Manual: {
				main: [
					to(
						'Refuse tickets',
						'Once tickets',
						'Loop tickets',
						'Mapped tickets',
						'Sources',
						'First half',
						'Second half',
					),
				],
			},
			'First half': { main: [to('Sync twice')] },
			'Second half': { main: [to('Sync twice')] },
			'Sync twice': { main: [to('After twice')] },
			'Refuse tickets': { main: [to('Grace typo', 'Full read null', 'Grace empty')] },
			'Once tickets': { main: [to('Sync once')] },
			'Loop tickets': { main: [to('Loop')] },
			Loop: { main: [[], to('Sync batch')] },
			'Sync batch': { main: [to('Loop')] },
			'Mapped tickets': { main: [to('Loop mapped')] },
			'Loop mapped': { main: [[], to('Map')] },
			Map: { main: [to('Sync mapped')] },
			'Sync mapped': { main: [to('Loop mapped')] },
			Sources: { main: [to('Loop sources')] },
			'Loop sources': { main: [[], to('Tickets of source')] },
			'Tickets of source': { main: [to('Sync per source')] },
			'Sync per source': { main: [to('Loop sources')] },
		},
	);
}
