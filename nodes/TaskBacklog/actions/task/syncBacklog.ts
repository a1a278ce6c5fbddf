import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../transport/client';
import { DEFAULT_EXTERNAL_ID_NAMESPACE } from '../../transport/uuid';
import type { TaskWrite } from '../../transport/writeTasks';
import { hasValues, writeTasks } from '../../transport/writeTasks';
import { showFor } from '../shared/descriptions';
import { DEFAULT_EXTERNAL_ID_FIELD, externalIdOptions, uidForExternalId } from '../shared/externalId';
import { invalidParameter } from '../shared/parameters';
import { PAGE_SIZE } from '../shared/read';
import { batchSize } from '../shared/requestOptions';
import { customFieldsProperties, readFields, requireTitle } from '../shared/taskBody';

export const wholeInput = true;

const show = { resource: ['task'], operation: ['syncBacklog'] };

export const description: INodeProperties[] = [
	{
		displayName:
			'Input items are the full set of your open tickets. Each becomes a task (created or updated by its external ID); open tasks of the same source that are no longer in the input are closed.',
		name: 'syncNotice',
		type: 'notice',
		default: '',
		displayOptions: showFor('task', 'syncBacklog'),
	},
	{
		displayName: 'External ID',
		name: 'externalId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 1042',
		displayOptions: showFor('task', 'syncBacklog'),
		description: 'ID of the ticket in your system; the task UID is derived from it',
	},
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		required: true,
		default: '',
		displayOptions: showFor('task', 'syncBacklog'),
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		displayOptions: showFor('task', 'syncBacklog'),
	},
	...customFieldsProperties(show),
	{
		displayName: 'Source Value',
		name: 'sourceValue',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. helpdesk',
		displayOptions: showFor('task', 'syncBacklog'),
		description: 'Marks the tasks this sync owns: only open tasks with this source are closed when missing',
	},
	{
		displayName: 'Dry Run',
		name: 'dryRun',
		type: 'boolean',
		default: false,
		displayOptions: showFor('task', 'syncBacklog'),
		description: 'Whether to only output what would be created, updated, reopened and closed, writing nothing',
	},
	{
		displayName: 'Sync Options',
		name: 'syncOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: showFor('task', 'syncBacklog'),
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
];

type Action = 'create' | 'update' | 'reopen' | 'unchanged' | 'close';

interface Step {
	action: Action;
	uid: string;
	externalId?: string;
	itemIndex?: number;
	body: IDataObject;
}

function readTicket(ctx: IExecuteFunctions, itemIndex: number, source: { field: string; value: string }, options: IDataObject) {
	const externalId = String(ctx.getNodeParameter('externalId', itemIndex, '')).trim();
	const idField = String(options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD);
	const uid = uidForExternalId(ctx, itemIndex, externalId, options.namespace || DEFAULT_EXTERNAL_ID_NAMESPACE);
	const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
	const url = ctx.getNodeParameter('url', itemIndex, '') as string;
	const fields = { ...readFields(ctx, itemIndex, { title, url }), [idField]: externalId, [source.field]: source.value };
	return { uid, externalId, fields };
}

/**
 * The spec's "custom integration" done inside n8n: upsert every ticket (batched), close what is gone.
 * Every input item must be valid: skipping a bad one would close its task.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndexes: number[]) {
	const options = this.getNodeParameter('syncOptions', 0, {}) as IDataObject;
	const source = {
		field: String(options.sourceField || 'source'),
		value: String(this.getNodeParameter('sourceValue', 0, '')).trim(),
	};
	if (!source.value) throw invalidParameter(this, 0, 'Source Value', 'is empty; it marks which tasks this sync may close');
	const tickets = new Map(itemIndexes.map((itemIndex) => {
		const ticket = readTicket(this, itemIndex, source, options);
		return [ticket.uid, { ...ticket, itemIndex }];
	}));

	// The server filters by custom field (spec 4.2 rule 3); checking again here keeps a lax server from widening the sync.
	const existing = (await client.list({ method: 'GET', path: '/tasks', qs: { [source.field]: source.value } }, PAGE_SIZE))
		.filter((task) => String(((task.fields ?? {}) as IDataObject)[source.field]) === source.value);
	const existingByUid = new Map(existing.map((task) => [String(task.uid), task]));

	const steps: Step[] = [];
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
		if (task.status !== 'DONE' && !tickets.has(String(task.uid))) {
			const fields = (task.fields ?? {}) as IDataObject;
			const externalId = fields[String(options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD)] as string | undefined;
			steps.push({ action: 'close', uid: String(task.uid), externalId, body: { status: 'DONE' } });
		}
	}

	const dryRun = this.getNodeParameter('dryRun', 0, false) as boolean;
	const written = new Map<string, IDataObject | Error>();
	if (!dryRun) {
		const size = batchSize(this);
		const upserts: TaskWrite[] = steps
			.filter((step) => step.action === 'create' || step.action === 'update' || step.action === 'reopen')
			.map((step) => ({ mode: 'upsert', uid: step.uid, body: step.body, itemIndex: step.itemIndex ?? 0 }));
		const closes: TaskWrite[] = steps
			.filter((step) => step.action === 'close')
			.map((step) => ({ mode: 'patch', uid: step.uid, body: step.body, itemIndex: 0 }));
		for (const writes of [upserts, closes]) {
			const results = await writeTasks(client, writes, { batchSize: size });
			writes.forEach((write, index) => {
				const result = results[index];
				written.set(write.uid, 'task' in result ? result.task : result.error);
			});
		}
	}

	const output: INodeExecutionData[] = [];
	for (const step of steps) {
		const result = written.get(step.uid);
		const json: IDataObject = { action: step.action, uid: step.uid, external_id: step.externalId, dry_run: dryRun };
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
		output.push({ json, pairedItem: { item: step.itemIndex ?? 0 } });
	}
	return output;
}
