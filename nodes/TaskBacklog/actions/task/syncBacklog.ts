import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import type { TaskWrite } from '../../../shared/tasks/writeTasks';
import type { Sending } from '../types';
import { writeTasks } from '../../../shared/tasks/writeTasks';
import { forOperation } from '../shared/descriptions';
import { EXTERNAL_ID_HINT, externalIdOptions, readIdentityOptions } from '../shared/externalId';
import {
	autoMapProperties,
	customFieldsProperties,
	defineOnly,
	inputDataProperty,
} from '../shared/taskInput';
import { booleanSetting, requiredText, requireFieldName } from '../../../shared/parameters';
import {
	fullReadHours,
	fullReadOption,
	readSource,
	rememberedStep,
	rememberRun,
} from '../shared/syncMemory';
import { readSyncOutput, syncOutput, syncOutputProperties } from '../shared/syncOutput';
import { refuseLoopBatch, refuseSourceAgain } from '../shared/syncRuns';
import type { Source, Step } from '../shared/syncPlan';
import {
	checkGuardOptions,
	closeGraceMs,
	closeGuard,
	closesFor,
	CONFLICT_HINT,
	conflictStep,
	DEFAULT_CLOSE_ALLOWANCE,
	DEFAULT_CLOSE_GRACE_MINUTES,
	DEFAULT_MAX_CLOSE_SHARE,
	GUARD_HINT,
	guardOff,
	otherSourceOf,
	readTickets,
	stepFor,
} from '../shared/syncPlan';

export const wholeInput = true;

export const description = forOperation('task', 'syncBacklog', [
	{
		displayName:
			'Input items are the full set of your open tickets. Each becomes a task (created or updated by its external ID); open tasks of the same source that are no longer in the input are closed. A task of another source is never written: a ticket whose task holds another Source Value is reported.',
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
			hint: EXTERNAL_ID_HINT,
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
		description:
			'Marks the tasks this sync owns: only open tasks with this source are closed when missing',
		hint: "A fixed name for the system the input comes from, the same on every run (read from the first item). It is written to each task's Source Field, and every open task with this source whose ticket is not in the input is closed (as far as the guard in Sync Options allows). A ticket whose task holds another source is reported and left alone; two systems whose ticket IDs coincide need a UID Namespace each (Sync Options).",
	},
	{
		displayName: 'Dry Run',
		name: 'dryRun',
		type: 'boolean',
		default: false,
		description:
			'Whether to only output what would be created, updated, reopened and closed, writing nothing',
	},
	...syncOutputProperties,
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
				description: `Number of tasks a run may always close, whatever their share of the open tasks (Max Share to Close applies above it). At the default of ${DEFAULT_CLOSE_ALLOWANCE} or below it stops at half of the source's open tasks (its only one may be closed), so a short input never closes a small source entirely or mostly; a value above ${DEFAULT_CLOSE_ALLOWANCE} allows that many, even every open task.`,
			},
			{
				displayName: 'Close Grace Period (Minutes)',
				name: 'closeGraceMinutes',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: DEFAULT_CLOSE_GRACE_MINUTES,
				description: `A task missing from the input is kept open if the service created or updated it this many minutes before the run began, or since: its ticket may be newer than the input (a Create or Update by an event, another run of this source). A later run closes it if it is still missing. 0 keeps only those changed since the run began. Default ${DEFAULT_CLOSE_GRACE_MINUTES}, the service's default sync interval.`,
			},
			fullReadOption,
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

/**
 * Dry Run, read once (item 0) as a boolean only. Text is refused, not converted: before this reader an expression's
 * "false" was taken for on, so a saved workflow giving it has run as a dry run, writing and closing nothing; reading
 * it as off would start writes and closes that workflow never did. Unset is off (n8n gives the default), anything
 * else that is not a boolean is an error too.
 */
function readDryRun(ctx: IExecuteFunctions): boolean {
	return booleanSetting(ctx.getNode(), ctx.getNodeParameter('dryRun', 0, false), {
		label: 'Item 0: Dry Run',
		fallback: false,
		text: 'refuse',
		itemIndex: 0,
		description:
			'Nothing was sent. Dry Run takes a boolean only: an expression\'s text "false" was read as on before, so a workflow giving it has written and closed nothing, and text is not read now rather than start writes and closes. Set Dry Run with its switch, or make the expression give a boolean, e.g. {{ $json.dryRun === "true" }}.',
	});
}

/**
 * The spec's "custom integration" done inside n8n: upsert every ticket (batched), close what is gone.
 * The input is the whole set of open tickets, so Execute Once (only the first item) is refused, and a run that would
 * close more than the guard allows fails before any write.
 */
export async function execute(
	this: IExecuteFunctions,
	client: BacklogClient,
	itemIndexes: number[],
	sending: () => Sending,
) {
	if (this.getNode().executeOnce === true) {
		throw new NodeOperationError(this.getNode(), 'Sync Backlog cannot run with Execute Once', {
			description:
				"Execute Once hands the node only the first input item, and Sync Backlog would close every other ticket's task. Turn off Settings › Execute Once.",
		});
	}
	refuseLoopBatch(this);
	// The run's start on the wall clock: tasks the service stamps after it, or within the grace period before it, are
	// not closed by absence (closesFor). Taken first: the upstream node read its tickets before this.
	const startedAt = Date.now();
	// Read before anything is sent: a Dry Run that is not a boolean stops the node (see readDryRun).
	const dryRun = readDryRun(this);
	const options = this.getNodeParameter('syncOptions', 0, {}) as IDataObject;
	const graceMs = closeGraceMs(this, options);
	// The other number options too, so that a bad one stops the node before any request.
	fullReadHours(this, options);
	checkGuardOptions(this, options);
	const output = readSyncOutput(this);
	const source: Source = {
		field: requireFieldName(this, 0, 'Source Field', options.sourceField || 'source'),
		value: requiredText(this, 0, 'Source Value', this.getNodeParameter('sourceValue', 0, '')),
	};
	refuseSourceAgain(this, source);
	const { tickets, duplicates } = readTickets(this, itemIndexes, source, options);

	const identity = readIdentityOptions(this, 0, options);
	// Every task of the source, or (a scheduled run with its memory) what changed since the last run: syncMemory.ts.
	const read = await readSource(this, client, source, tickets, options, identity);
	const { existing, known } = read;

	const steps: Step[] = [...duplicates];
	// A ticket whose task holds another source's value is never written (an input "uid" key, or two sources sharing
	// the default UID Namespace): reported instead, and without Continue On Fail the run stops before any write.
	const conflicts: Step[] = [];
	for (const ticket of tickets.values()) {
		const task = known.get(ticket.uid);
		const taskSource = otherSourceOf(task, source);
		const step = read.remembered.has(ticket.uid)
			? rememberedStep(ticket)
			: taskSource === undefined
				? stepFor(ticket, task)
				: conflictStep(ticket, taskSource, source);
		if (step.action === 'conflict') conflicts.push(step);
		steps.push(step);
	}
	if (conflicts.length > 0 && !dryRun && !this.continueOnFail()) {
		const others = conflicts.length - 1;
		const more =
			others > 0
				? `. ${others} more ticket${others > 1 ? 's name tasks' : ' names a task'} of another source (with Continue On Fail, each gets an error row and the other tickets are synced)`
				: '';
		throw new NodeOperationError(
			this.getNode(),
			`${conflicts[0].message}; nothing was written${more}`,
			{ itemIndex: conflicts[0].itemIndex, description: CONFLICT_HINT },
		);
	}
	const open = existing.filter((task) => task.status !== 'DONE' && task.archived !== true);
	// Missing from the input: closed, or kept open when the service changed it within the grace period (or during the
	// run). The guard judges the closes against every open task of the source, the kept ones included.
	const absent = closesFor(open, tickets, identity.externalIdField, startedAt - graceMs);
	const closes = absent.filter((step) => step.action === 'close');
	steps.push(...absent);

	const guard = closeGuard(this, options, closes, open.length, source);
	if (guard && !dryRun)
		throw new NodeOperationError(this.getNode(), guard, { description: GUARD_HINT });
	const written = new Map<string, IDataObject | Error>();
	if (!dryRun) {
		// A task already listed is PATCHed with the fields that changed, over its custom fields read again just before
		// its batch (the listing may be minutes old); one that does not exist is created. Updates and closes share batches.
		const { batchSize, gateway } = sending();
		const writeOptions = {
			batchSize,
			stopOnError: !this.continueOnFail(),
			known,
			knownAt: read.listedAt,
			rereadBeforePatch: true,
			gateway,
		};
		const writes: TaskWrite[] = steps
			.filter(
				(step) =>
					step.action !== 'unchanged' &&
					step.action !== 'kept_open' &&
					step.action !== 'duplicate' &&
					step.action !== 'conflict',
			)
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

	rememberRun(this, read, tickets, steps, written, dryRun);

	return syncOutput(this, output, {
		steps,
		written,
		known,
		dryRun,
		source,
		read: read.read === 'changes' ? 'incremental' : 'full',
		graceMs,
		openTasks: open.length,
		closes: closes.length,
		guard,
		guardOff: guardOff(this, options),
	});
}
