import type { IDataObject, IExecuteFunctions, ISourceData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { Source } from './syncPlan';

/**
 * Sync Backlog's input is every open ticket of a source at once. Loop Over Items (Split in Batches) runs the node
 * once per batch, each run with part of the tickets, and each run would close the tasks of the other batches'
 * tickets: refused, before any request. Syncing several sources in a loop stays possible (one run per source).
 */

const LOOP_TYPE = 'n8n-nodes-base.splitInBatches';
/** The node's execution context (kept for one execution, across its runs): the sources each run synced. */
const SYNCED_KEY = 'syncedSources';

const SPLIT_HINT =
	'Sync Backlog needs every open ticket of the source in one run: a run given part of them closes the tasks of the other tickets (as far as the mass-close guard allows). Connect Sync Backlog to the done output of Loop Over Items (it gives every item at once), or feed it the tickets without a loop. A loop over sources, one Source Value per run, is fine.';

function inputSource(ctx: IExecuteFunctions): ISourceData | undefined {
	try {
		return ctx.getInputSourceData(0) ?? undefined;
	} catch {
		// No source data (e.g. a node run on its own in the editor): no loop feeds it.
		return undefined;
	}
}

/**
 * Refuses a run on a batch of Loop Over Items (Split in Batches) before any request: fed straight by its loop output
 * (version 3: output 1; versions 1 and 2 have only that output), or inside its loop through other nodes (the loop
 * node is both before and after this one) when input items 0 and 1 come from two of its items, i.e. the tickets
 * are the batch (a loop over sources makes every ticket of a run from one item, and is synced). A batch that holds
 * every item (the first, with none left) is the whole input and is synced.
 */
export function refuseLoopBatch(ctx: IExecuteFunctions): void {
	const name = ctx.getNode().name;
	// getParentNodes and getChildNodes are in n8n 1.123 and 2.x; an older n8n without them checks the runs only.
	if (typeof ctx.getParentNodes !== 'function' || typeof ctx.getChildNodes !== 'function') return;
	const loops = ctx.getParentNodes(name).filter((node) => node.type === LOOP_TYPE);
	if (loops.length === 0) return;
	const proxy = ctx.getWorkflowDataProxy(0);
	const partial = (loop: string) => {
		const node = proxy.$node[loop] as { context?: IDataObject; runIndex?: number } | undefined;
		return node?.context?.noItemsLeft !== true || Number(node?.runIndex ?? 0) > 0;
	};
	const from = inputSource(ctx);
	const straight = loops.find(
		(loop) =>
			loop.name === from?.previousNode &&
			(loop.typeVersion < 3 || (from.previousNodeOutput ?? 0) === 1),
	);
	const inside = ctx.getChildNodes(name).map((node) => node.name);
	const through = loops.find(
		(loop) => loop !== straight && inside.includes(loop.name) && ticketsAreBatch(ctx, loop.name),
	);
	const loop = straight ?? through;
	if (!loop || !partial(loop.name)) return;
	throw new NodeOperationError(
		ctx.getNode(),
		'Sync Backlog cannot run on a batch of Loop Over Items',
		{
			description: `"${loop.name}" hands Sync Backlog one batch of the tickets per run. ${SPLIT_HINT}`,
		},
	);
}

/** Whether input items 0 and 1 go back (pairedItem) to two different items of the loop node; unknown is no. */
function ticketsAreBatch(ctx: IExecuteFunctions, loop: string): boolean {
	if (ctx.getInputData().length < 2) return false;
	try {
		const [first, second] = [0, 1].map((index) =>
			JSON.stringify(
				(ctx.getWorkflowDataProxy(index).$(loop) as { item?: { json?: unknown } }).item?.json,
			),
		);
		return first !== undefined && second !== undefined && first !== second;
	} catch {
		// No pairing back to the loop (an upstream node that does not pair its items): not known to be its batch.
		return false;
	}
}

/**
 * Refuses a second run of the node for a source an earlier run of it synced in this execution (a loop through other
 * nodes, two connections into the node): each run holds part of the tickets. The same run again (Retry On Fail) is
 * not refused. Recorded before any request, so that a failed run counts too.
 */
export function refuseSourceAgain(ctx: IExecuteFunctions, source: Source): void {
	const runIndex = Number(ctx.getWorkflowDataProxy(0).$runIndex ?? 0);
	const context = ctx.getContext('node');
	const synced = (context[SYNCED_KEY] ?? {}) as Record<string, number>;
	const key = JSON.stringify([source.field, source.value]);
	const earlier = synced[key];
	if (earlier !== undefined && earlier !== runIndex) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Sync Backlog already synced source "${source.value}" in this execution (run ${earlier + 1} of this node); run ${runIndex + 1} would close the tasks of that run's tickets`,
			{
				description: `This node ran again in one execution with the same Source Value, each run with part of the tickets (Loop Over Items, or several connections into the node). Nothing was sent. ${SPLIT_HINT}`,
			},
		);
	}
	synced[key] = runIndex;
	context[SYNCED_KEY] = synced;
}
