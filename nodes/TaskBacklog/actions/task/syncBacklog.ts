import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { readTasksByUid } from '../../../shared/transport/queryTasks';
import type { TaskWrite } from '../../../shared/transport/writeTasks';
import { hasValues, writeTasks } from '../../../shared/transport/writeTasks';
import { forOperation } from '../shared/descriptions';
import { DEFAULT_EXTERNAL_ID_FIELD, externalIdOptions } from '../shared/externalId';
import { autoMapProperties, defineOnly, inputDataProperty } from '../shared/inputData';
import { invalidParameter, requiredText, requireFieldName } from '../shared/parameters';
import { parametersReadOnce } from '../shared/readOnce';
import { PAGE_SIZE } from '../shared/read';
import { batchSize } from '../shared/requestOptions';
import { taskInputReader } from '../shared/taskInput';
import { customFieldsProperties } from '../shared/taskBody';

export const wholeInput = true;

/** The mass-close guard's defaults: see closeGuard and the README ("How it works"). */
const DEFAULT_MAX_CLOSE_SHARE = 20;
const DEFAULT_CLOSE_ALLOWANCE = 10;


export const description = forOperation('task', 'syncBacklog', [
	{
		displayName:
			'Input items are the full set of your open tickets. Each becomes a task (created or updated by its external ID); open tasks of the same source that are no longer in the input are closed.',
		name: 'syncNotice',
		type: 'notice',
		default: '',
	},
	inputDataProperty(),
	...autoMapProperties('syncBacklog'),
	...defineOnly([
		{
			displayName: 'External ID',
			name: 'externalId',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. 1042',
			description: 'ID of the ticket in your system; the task UID is derived from it',
		},
		{
			displayName: 'Title',
			name: 'title',
			type: 'string',
			required: true,
			default: '',
		},
		{
			displayName: 'URL',
			name: 'url',
			type: 'string',
			default: '',
		},
		...customFieldsProperties(),
	]),
	{
		displayName: 'Source Value',
		name: 'sourceValue',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. helpdesk',
		description: 'Marks the tasks this sync owns: only open tasks with this source are closed when missing',
	},
	{
		displayName: 'Dry Run',
		name: 'dryRun',
		type: 'boolean',
		default: false,
		description: 'Whether to only output what would be created, updated, reopened and closed, writing nothing',
	},
	{
		displayName: 'Sync Options',
		name: 'syncOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			...externalIdOptions,
			{
				displayName: 'Always Allow Closing Up To',
				name: 'closeAllowance',
				type: 'number',
				typeOptions: { minValue: 0, numberPrecision: 0 },
				default: DEFAULT_CLOSE_ALLOWANCE,
				description:
					'Number of tasks a run may always close, whatever their share of the open tasks (Max Share to Close applies above it)',
			},
			{
				displayName: 'Max Share to Close (%)',
				name: 'maxCloseShare',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 100 },
				default: DEFAULT_MAX_CLOSE_SHARE,
				description:
					"Largest share of the source's open tasks one run may close; a run that would close more fails before writing anything. A key typo, an input cut to its first page or a filter gone wrong look like many closed tickets: this stops them. 100 turns the guard off.",
			},
			{
				displayName: 'Source Field',
				name: 'sourceField',
				type: 'string',
				default: 'source',
				description: 'Custom field of the task that stores the source value',
			},
		],
	},
]);

type Action = 'create' | 'update' | 'reopen' | 'unarchive' | 'unchanged' | 'close' | 'duplicate';

interface Step {
	action: Action;
	uid: string;
	externalId?: string;
	itemIndex?: number;
	body: IDataObject;
	/** For a duplicate: the later input item whose values were applied instead. */
	supersededBy?: number;
}

interface Ticket {
	uid: string;
	externalId: string;
	fields: IDataObject;
	itemIndex: number;
}

/**
 * Every input item read through the one task-input reader, each marked with the source. Every item must be valid,
 * even with Continue On Fail: skipping a bad one would close its task. The same external ID twice: the later item's
 * values are applied, and the earlier item's row says so.
 */
function readTickets(ctx: IExecuteFunctions, itemIndexes: number[], source: Source, options: IDataObject) {
	const readTask = taskInputReader(parametersReadOnce(ctx), 'syncBacklog', options);
	const tickets = new Map<string, Ticket>();
	const duplicates: Step[] = [];
	for (const itemIndex of itemIndexes) {
		const { uid, externalId, fields } = readTask(itemIndex);
		fields[source.field] = source.value;
		const earlier = tickets.get(uid!);
		if (earlier) {
			duplicates.push({ action: 'duplicate', uid: uid!, externalId: earlier.externalId, itemIndex: earlier.itemIndex, body: {}, supersededBy: itemIndex });
			tickets.delete(uid!);
		}
		tickets.set(uid!, { uid: uid!, externalId: externalId!, fields, itemIndex });
	}
	return { tickets, duplicates };
}

interface Source {
	field: string;
	value: string;
}

/** What a ticket's task needs: made, restored from the archive, reopened, changed, or nothing. */
function stepFor(ticket: Ticket, task: IDataObject | undefined): Step {
	const { uid, externalId, fields, itemIndex } = ticket;
	const body: IDataObject = { fields };
	let action: Action = !task ? 'create' : hasValues(task, body) ? 'unchanged' : 'update';
	if (task?.status === 'DONE') {
		body.status = 'TODO';
		action = 'reopen';
	}
	if (task?.archived === true) {
		// The ticket is open, so its task belongs in the backlog: an archived one is restored, not made again.
		body.archived = false;
		action = 'unarchive';
	}
	return { action, uid, externalId, itemIndex, body };
}

/**
 * The mass-close guard (as rsync's and rclone's --max-delete): a run that would close more than the allowed share of
 * the source's open tasks is most likely a short input (a key typo, an input cut to its first page, a filter gone
 * wrong), which looks exactly like many closed tickets. The message says how many, which, and how to allow it.
 */
function closeGuard(ctx: IExecuteFunctions, options: IDataObject, closes: Step[], open: number, source: Source): string | undefined {
	const allowance = limitOption(ctx, options.closeAllowance, DEFAULT_CLOSE_ALLOWANCE, 'Always Allow Closing Up To', Infinity);
	const maxShare = limitOption(ctx, options.maxCloseShare, DEFAULT_MAX_CLOSE_SHARE, 'Max Share to Close (%)', 100);
	if (maxShare >= 100 || closes.length <= Math.max(allowance, Math.floor((open * maxShare) / 100))) return undefined;
	const share = Math.round((closes.length / Math.max(open, 1)) * 100);
	const some = closes
		.slice(0, 5)
		.map((step) => (step.externalId !== undefined ? `external ID ${String(step.externalId)}` : `task ${step.uid}`))
		.join(', ');
	return (
		`Sync Backlog would close ${closes.length} of the ${open} open tasks of source "${source.value}" (${share}%), more than ` +
		`the ${maxShare}% allowed (Max Share to Close) and more than ${allowance} (Always Allow Closing Up To); ` +
		`nothing was written. Some of them: ${some}${closes.length > 5 ? ', ...' : ''}.`
	);
}

const GUARD_HINT =
	'Usually the input is short: an External ID expression that finds nothing, an upstream node that returned only its first page, a filter gone wrong. Check the input with Dry Run. If these tickets really are closed, raise Sync Options › Max Share to Close (%) (100 turns the guard off) for this run.';

function limitOption(ctx: IExecuteFunctions, value: unknown, fallback: number, name: string, max: number): number {
	if (value === undefined || value === '') return fallback;
	const number = typeof value === 'number' ? value : Number(value);
	if (typeof value === 'boolean' || value === null || !Number.isFinite(number) || number < 0 || number > max) {
		throw invalidParameter(ctx, 0, name, `must be a number from 0${max === Infinity ? '' : ` to ${max}`}, got ${JSON.stringify(value)}`);
	}
	return number;
}

/**
 * The spec's "custom integration" done inside n8n: upsert every ticket (batched), close what is gone.
 * The input is the whole set of open tickets, so Execute Once (only the first item) is refused, and a run that would
 * close more than the guard allows fails before any write.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	if (this.getNode().executeOnce === true) {
		throw new NodeOperationError(this.getNode(), 'Sync Backlog cannot run with Execute Once', {
			description:
				"Execute Once hands the node only the first input item, and Sync Backlog would close every other ticket's task. Turn off Settings › Execute Once.",
		});
	}
	const options = this.getNodeParameter('syncOptions', 0, {}) as IDataObject;
	const source: Source = {
		field: requireFieldName(this, 0, 'Source Field', options.sourceField || 'source'),
		value: requiredText(this, 0, 'Source Value', this.getNodeParameter('sourceValue', 0, '')),
	};
	const { tickets, duplicates } = readTickets(this, itemIndexes, source, options);

	// The server filters by custom field (spec 4.2 rule 3); checking again here keeps a lax server from widening the sync.
	const existing = (await client.list({ method: 'GET', path: '/tasks', qs: { [source.field]: source.value } }, PAGE_SIZE))
		.filter((task) => String(((task.fields ?? {}) as IDataObject)[source.field]) === source.value);
	const known = new Map<string, IDataObject | undefined>(existing.map((task) => [String(task.uid).toLowerCase(), task]));
	// A ticket whose task is not listed may still have one: archived (the listing hides those), or without this source.
	const unlisted = [...tickets.keys()].filter((uid) => !known.has(uid));
	if (unlisted.length > 0) {
		const found = await readTasksByUid(client, unlisted, tickets.get(unlisted[0])?.itemIndex);
		// Read and not found: the write creates it without reading again.
		for (const uid of unlisted) known.set(uid, found.get(uid));
	}

	const steps: Step[] = [...duplicates];
	for (const ticket of tickets.values()) steps.push(stepFor(ticket, known.get(ticket.uid)));
	const idField = String(options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD);
	const open = existing.filter((task) => task.status !== 'DONE' && task.archived !== true);
	const closes: Step[] = open
		.filter((task) => !tickets.has(String(task.uid).toLowerCase()))
		.map((task) => {
			const externalId = ((task.fields ?? {}) as IDataObject)[idField] as string | undefined;
			return { action: 'close', uid: String(task.uid).toLowerCase(), externalId, body: { status: 'DONE' } };
		});
	steps.push(...closes);

	const dryRun = this.getNodeParameter('dryRun', 0, false) as boolean;
	const guard = closeGuard(this, options, closes, open.length, source);
	if (guard && !dryRun) throw new NodeOperationError(this.getNode(), guard, { description: GUARD_HINT });
	const written = new Map<string, IDataObject | Error>();
	if (!dryRun) {
		const writeOptions = { batchSize: batchSize(this), stopOnError: !this.continueOnFail(), known };
		// A task already read is PATCHed with its other custom fields kept; one that does not exist is created.
		// Updates and closes share batches.
		const writes: TaskWrite[] = steps
			.filter((step) => step.action !== 'unchanged' && step.action !== 'duplicate')
			.map((step) => ({
				mode: step.action === 'close' ? 'patch' : 'upsert',
				uid: step.uid,
				body: step.body,
				itemIndex: step.itemIndex ?? 0,
			}));
		const results = await writeTasks(client, writes, writeOptions);
		writes.forEach((write, index) => {
			const result = results[index];
			written.set(write.uid, 'task' in result ? result.task : result.error);
		});
	}

	const output: INodeExecutionData[] = [];
	for (const step of steps) {
		const json: IDataObject = { action: step.action, uid: step.uid, external_id: step.externalId, dry_run: dryRun };
		if (guard) json.close_guard = `${guard} ${GUARD_HINT}`;
		if (step.action === 'duplicate') {
			json.superseded_by_item = step.supersededBy;
			json.note = `The same external ID is also in input item ${step.supersededBy}; that later item's values were applied`;
			output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
			continue;
		}
		if (step.action === 'unarchive') json.note = 'The task was archived; it is restored (archived false, status TODO)';
		const result = written.get(step.uid);
		if (result instanceof Error) {
			if (!this.continueOnFail()) {
				throw new NodeOperationError(this.getNode(), result, { itemIndex: step.itemIndex ?? 0 });
			}
			json.error = result.message;
		} else if (result) {
			json.task = result;
		} else if (!dryRun) {
			json.task = known.get(step.uid);
		}
		// A closed task has no input item of its own: it is paired with the first item, whose Source Value decided it.
		output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
	}
	return output;
}
