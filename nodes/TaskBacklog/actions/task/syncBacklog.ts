import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { DEFAULT_EXTERNAL_ID_NAMESPACE } from '../../../shared/transport/uuid';
import type { TaskWrite } from '../../../shared/transport/writeTasks';
import { hasValues, writeTasks } from '../../../shared/transport/writeTasks';
import { forOperation } from '../shared/descriptions';
import { DEFAULT_EXTERNAL_ID_FIELD, externalIdOptions, uidForExternalId } from '../shared/externalId';
import { autoMapProperties, defineOnly, inputDataProperty, mappedUid, mapItem, readAutoMapSettings, readInputData } from '../shared/inputData';
import { invalidParameter } from '../shared/parameters';
import { parametersReadOnce } from '../shared/readOnce';
import { PAGE_SIZE } from '../shared/read';
import { batchSize } from '../shared/requestOptions';
import { customFieldsProperties, readFields, requireTitle } from '../shared/taskBody';

export const wholeInput = true;


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
				displayName: 'Source Field',
				name: 'sourceField',
				type: 'string',
				default: 'source',
				description: 'Custom field of the task that stores the source value',
			},
		],
	},
]);

type Action = 'create' | 'update' | 'reopen' | 'unchanged' | 'close' | 'duplicate';

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
}

function readTicket(ctx: IExecuteFunctions, itemIndex: number, source: { field: string; value: string }, options: IDataObject): Ticket {
	const externalId = String(ctx.getNodeParameter('externalId', itemIndex, '')).trim();
	const idField = String(options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD);
	const uid = uidForExternalId(ctx, itemIndex, externalId, options.namespace || DEFAULT_EXTERNAL_ID_NAMESPACE);
	const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
	const url = ctx.getNodeParameter('url', itemIndex, '') as string;
	const fields = { ...readFields(ctx, itemIndex, { title, url }), [idField]: externalId, [source.field]: source.value };
	return { uid, externalId, fields };
}

/** Map Automatically: the tickets' keys read as they are, the parameters once for all items. */
function autoMapTickets(ctx: IExecuteFunctions, source: { field: string; value: string }, options: IDataObject) {
	const settings = readAutoMapSettings(ctx, options);
	const items = ctx.getInputData();
	return (itemIndex: number): Ticket => {
		const item = mapItem(ctx, settings, itemIndex, items[itemIndex].json);
		if (item.externalId === undefined) {
			throw invalidParameter(
				ctx,
				itemIndex,
				settings.externalIdKey,
				'is missing or empty; Sync Backlog knows each ticket by its external ID',
				`Set External ID Key in Mapping Options to the key that holds the ticket ID (now "${settings.externalIdKey}").`,
			);
		}
		const uid = mappedUid(ctx, settings, itemIndex, item);
		item.fields[settings.externalIdField] = item.externalId;
		item.fields[source.field] = source.value;
		return { uid, externalId: item.externalId, fields: item.fields };
	};
}

/**
 * The spec's "custom integration" done inside n8n: upsert every ticket (batched), close what is gone.
 * Every input item must be valid, even with Continue On Fail: skipping a bad one would close its task.
 * The same external ID twice: the later item's values are applied, and the earlier item's row says so.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	const options = this.getNodeParameter('syncOptions', 0, {}) as IDataObject;
	const source = {
		field: String(options.sourceField || 'source'),
		value: String(this.getNodeParameter('sourceValue', 0, '')).trim(),
	};
	if (!source.value) throw invalidParameter(this, 0, 'Source Value', 'is empty; it marks which tasks this sync may close');
	const ctx = parametersReadOnce(this);
	const read = readInputData(this) === 'autoMap' ? autoMapTickets(this, source, options) : (itemIndex: number) => readTicket(ctx, itemIndex, source, options);
	const tickets = new Map<string, Ticket & { itemIndex: number }>();
	const duplicates: Step[] = [];
	for (const itemIndex of itemIndexes) {
		const ticket = read(itemIndex);
		const earlier = tickets.get(ticket.uid);
		if (earlier) {
			duplicates.push({ action: 'duplicate', uid: ticket.uid, externalId: earlier.externalId, itemIndex: earlier.itemIndex, body: {}, supersededBy: itemIndex });
			tickets.delete(ticket.uid);
		}
		tickets.set(ticket.uid, { ...ticket, itemIndex });
	}

	// The server filters by custom field (spec 4.2 rule 3); checking again here keeps a lax server from widening the sync.
	const existing = (await client.list({ method: 'GET', path: '/tasks', qs: { [source.field]: source.value } }, PAGE_SIZE))
		.filter((task) => String(((task.fields ?? {}) as IDataObject)[source.field]) === source.value);
	const existingByUid = new Map(existing.map((task) => [String(task.uid).toLowerCase(), task]));

	const steps: Step[] = [...duplicates];
	for (const { uid, externalId, fields, itemIndex } of tickets.values()) {
		const task = existingByUid.get(uid);
		const body: IDataObject = { fields };
		let action: Action = !task ? 'create' : hasValues(task, body) ? 'unchanged' : 'update';
		if (task?.status === 'DONE') {
			body.status = 'TODO';
			action = 'reopen';
		}
		steps.push({ action, uid, externalId, itemIndex, body });
	}
	for (const task of existing) {
		if (task.status !== 'DONE' && !tickets.has(String(task.uid).toLowerCase())) {
			const fields = (task.fields ?? {}) as IDataObject;
			const externalId = fields[String(options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD)] as string | undefined;
			steps.push({ action: 'close', uid: String(task.uid).toLowerCase(), externalId, body: { status: 'DONE' } });
		}
	}

	const dryRun = this.getNodeParameter('dryRun', 0, false) as boolean;
	const written = new Map<string, IDataObject | Error>();
	if (!dryRun) {
		const writeOptions = { batchSize: batchSize(this), stopOnError: !this.continueOnFail(), known: existingByUid };
		// A task in the listing is PATCHed with its other custom fields kept; one not in it is read first (it may
		// exist without this source, or archived) and then PATCHed or created. Updates and closes share batches.
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
		if (step.action === 'duplicate') {
			json.superseded_by_item = step.supersededBy;
			json.note = `The same external ID is also in input item ${step.supersededBy}; that later item's values were applied`;
			output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
			continue;
		}
		const result = written.get(step.uid);
		if (result instanceof Error) {
			if (!this.continueOnFail()) {
				throw new NodeOperationError(this.getNode(), result, { itemIndex: step.itemIndex ?? 0 });
			}
			json.error = result.message;
		} else if (result) {
			json.task = result;
		} else if (!dryRun) {
			json.task = existingByUid.get(step.uid);
		}
		// A closed task has no input item of its own: it is paired with the first item, whose Source Value decided it.
		output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
	}
	return output;
}
