import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { invalidParameter } from '../../../shared/parameters';
import type { Action, Source, Step } from './syncPlan';
import { GUARD_HINT } from './syncPlan';

/**
 * What Sync Backlog outputs (issue 46, item 3): every row (one per ticket and per task closed or kept open, each with
 * its task: versions 1 and 2 by default), the changes and a summary (version 3's default), or the summary alone. A
 * run of 10,000 tickets where 2 % changed outputs 2 % of the rows, without the unchanged tasks.
 */

export type SyncOutput = 'changes' | 'summary' | 'allRows';
const OUTPUTS: SyncOutput[] = ['changes', 'summary', 'allRows'];

const OUTPUT_OPTIONS = [
	{
		name: 'Changes and Summary',
		value: 'changes',
		description: 'An item per task created, updated, reopened or closed, then a summary item',
	},
	{
		name: 'Every Row',
		value: 'allRows',
		description: 'An item per ticket and per task closed or kept open, each with its task',
	},
	{
		name: 'Summary Only',
		value: 'summary',
		description: 'One item: counts per action, the read, Dry Run and the guard',
	},
];

const OUTPUT_DESCRIPTION =
	'What the node outputs. Changes and Summary: one item per task created, updated (with what changed), reopened, restored or closed, and items that failed, then one summary item (counts per action, unchanged included, the read, Dry Run, the guard). A closed task stands for no input item: its item, and the summary, are paired with input item 0.';

/**
 * Output: version 1 and 2 keep every row by default (what saved workflows get), version 3 on gives the changes and a
 * summary. The same parameter name in both, so a workflow moved to version 3 keeps a value the user chose.
 */
export const syncOutputProperties: INodeProperties[] = [
	{
		displayName: 'Output',
		name: 'syncOutput',
		type: 'options',
		default: 'allRows',
		description: OUTPUT_DESCRIPTION,
		options: OUTPUT_OPTIONS,
		displayOptions: { show: { '@version': [1, 2] } },
	},
	{
		displayName: 'Output',
		name: 'syncOutput',
		type: 'options',
		default: 'changes',
		description: OUTPUT_DESCRIPTION,
		options: OUTPUT_OPTIONS,
		displayOptions: { show: { '@version': [{ _cnd: { gte: 3 } }] } },
	},
];

/** Output, read once from item 0 before any request: an expression that gives anything else stops the node. */
export function readSyncOutput(ctx: IExecuteFunctions): SyncOutput {
	const fallback: SyncOutput = ctx.getNode().typeVersion >= 3 ? 'changes' : 'allRows';
	const value = ctx.getNodeParameter('syncOutput', 0, fallback) as unknown;
	if (typeof value === 'string' && (OUTPUTS as string[]).includes(value))
		return value as SyncOutput;
	throw invalidParameter(
		ctx,
		0,
		'Output',
		`must be one of ${OUTPUTS.map((output) => `"${output}"`).join(', ')}, got ${JSON.stringify(value)}`,
	);
}

/** The actions that change a task: their rows are the output of Changes and Summary. */
const CHANGES: Action[] = ['create', 'update', 'reopen', 'unarchive', 'close'];

/** What the run planned and did, for the output. */
export interface SyncResult {
	steps: Step[];
	/** The answer to each write, by uid (a task, or the error of its write). */
	written: Map<string, IDataObject | Error>;
	/** The tasks read before writing, by uid. */
	known: Map<string, IDataObject | undefined>;
	dryRun: boolean;
	source: Source;
	/** 'full': every task of the source was read; 'incremental': only what changed since the last run. */
	read: 'full' | 'incremental';
	graceMs: number;
	/** The open tasks of the source and the closes judged by the guard, and its refusal (Dry Run only) if any. */
	openTasks: number;
	closes: number;
	guard?: string;
	guardOff: boolean;
}

/** Every row, as Sync Backlog has always output them: one per ticket and per task closed or kept open, with its task. */
function rows(ctx: IExecuteFunctions, result: SyncResult): INodeExecutionData[] {
	const { steps, written, known, dryRun, guard, graceMs } = result;
	const output: INodeExecutionData[] = [];
	for (const step of steps) {
		const json: IDataObject = {
			action: step.action,
			uid: step.uid,
			external_id: step.externalId,
			dry_run: dryRun,
		};
		if (guard) json.close_guard = `${guard} ${GUARD_HINT}`;
		if (step.action === 'duplicate') {
			json.superseded_by_item = step.supersededBy;
			json.note = `The same external ID is also in input item ${step.supersededBy}; that later item's values were applied`;
			output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
			continue;
		}
		if (step.action === 'conflict') {
			json.task_source = step.taskSource;
			json.error = step.message;
			output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
			continue;
		}
		if (step.action === 'kept_open') {
			json.touched_at = step.touchedAt;
			json.note = `Not in the input, but the service created or updated the task at ${step.touchedAt}, within the Close Grace Period (${graceMs / 60_000} min) before this run or during it: its ticket may be newer than the input, so it is left open. A later run closes it if its ticket is still missing.`;
		}
		if (step.action === 'unarchive')
			json.note = 'The task was archived; it is restored (archived false, status TODO)';
		const answer = written.get(step.uid);
		if (answer instanceof Error) {
			if (!ctx.continueOnFail()) {
				throw new NodeOperationError(ctx.getNode(), answer, { itemIndex: step.itemIndex ?? 0 });
			}
			json.error = answer.message;
		} else if (answer) {
			json.task = answer;
		} else if (!dryRun) {
			json.task = known.get(step.uid);
		}
		// A closed task has no input item of its own: it is paired with the first item, whose Source Value decided it.
		output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
	}
	return output;
}

/** What a write changes on the task as read: `status`, `archived`, and each custom field as `fields.<key>`. */
function changesOf(step: Step, task: IDataObject | undefined): IDataObject {
	const changes: IDataObject = {};
	for (const key of ['status', 'archived']) {
		if (step.body[key] !== undefined)
			changes[key] = { from: task?.[key] ?? null, to: step.body[key] };
	}
	const before = (task?.fields ?? {}) as IDataObject;
	for (const [key, value] of Object.entries((step.body.fields ?? {}) as IDataObject))
		changes[`fields.${key}`] = { from: before[key] ?? null, to: value };
	return changes;
}

/**
 * The summary and, for Changes and Summary, one compact item per change: the action, the external ID, the uid, the
 * title, for an update, reopen or restore what changed (from, to), and the error of a write or a conflict that failed
 * (Continue On Fail). Unchanged tasks, kept-open tasks and duplicates are counted in the summary only.
 */
export function syncOutput(
	ctx: IExecuteFunctions,
	output: SyncOutput,
	result: SyncResult,
): INodeExecutionData[] {
	const all = rows(ctx, result);
	if (output === 'allRows') return all;

	const counts: IDataObject = {
		create: 0,
		update: 0,
		reopen: 0,
		unarchive: 0,
		close: 0,
		kept_open: 0,
		unchanged: 0,
		duplicate: 0,
		conflict: 0,
		failed: 0,
	};
	const changes: INodeExecutionData[] = [];
	result.steps.forEach((step, index) => {
		const row = all[index];
		const failed = row.json.error !== undefined && step.action !== 'conflict';
		const key = failed ? 'failed' : step.action;
		counts[key] = (counts[key] as number) + 1;
		if (!failed && !CHANGES.includes(step.action) && step.action !== 'conflict') return;
		const task = result.known.get(step.uid);
		const written = result.written.get(step.uid);
		const fields = ((written instanceof Error ? undefined : written)?.fields ??
			task?.fields ??
			step.body.fields ??
			{}) as IDataObject;
		const json: IDataObject = {
			action: step.action,
			external_id: step.externalId,
			uid: step.uid,
		};
		if (typeof fields.title === 'string') json.title = fields.title;
		if (step.action !== 'create' && step.action !== 'conflict')
			json.changes = changesOf(step, task);
		if (step.action === 'conflict') json.task_source = step.taskSource;
		if (row.json.error !== undefined) json.error = row.json.error;
		json.dry_run = result.dryRun;
		changes.push({ json, pairedItem: row.pairedItem });
	});

	const guard: IDataObject = {
		verdict: result.guardOff ? 'off' : result.guard ? 'refused' : 'allowed',
		closes: result.closes,
		open_tasks: result.openTasks,
	};
	if (result.guard) guard.message = `${result.guard} ${GUARD_HINT}`;
	const summary: INodeExecutionData = {
		json: {
			action: 'summary',
			source: result.source.value,
			read: result.read,
			dry_run: result.dryRun,
			counts,
			close_guard: guard,
		},
		// The summary stands for the whole input, decided by item 0's parameters: paired with item 0, as close rows are.
		pairedItem: { item: 0 },
	};
	return output === 'summary' ? [summary] : [...changes, summary];
}
