import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { customFieldRows, statusOptions } from '../../../shared/tasks/fields';
import {
	booleanValue,
	checkSize,
	invalidParameter,
	jsonObject,
	requiredText,
	requireFieldName,
	requireText,
	requireUuid,
} from '../../../shared/parameters';

type Kind = 'uid' | 'uids' | 'dateTime' | 'status' | 'statusGlobal' | 'boolean' | 'string' | 'json';

/** Every writable property of the task body (spec 2.2), with the type n8n shows for it. */
const WRITABLE: Array<[name: string, displayName: string, kind: Kind, description: string]> = [
	['status', 'Status', 'status', 'State of the task'],
	['status_global', 'Global Status', 'statusGlobal', 'Global state of the task'],
	['archived', 'Archived', 'boolean', 'Whether the task is archived (separate from its status)'],
	['due_at', 'Due At', 'dateTime', 'When the task is due'],
	['snooze_expires_at', 'Snooze Expires At', 'dateTime', 'Until when the task is snoozed'],
	['assignee_uid', 'Assignee UID', 'uid', 'UID of the user the task is assigned to'],
	['assignee_email', 'Assignee Email', 'string', 'Email of the user the task is assigned to'],
	['queue_uid', 'Queue UID', 'uid', 'UID of the queue the task is enrolled in'],
	['skills', 'Skill UIDs', 'uids', 'Comma-separated UIDs of the skills the task needs'],
	['parent_uid', 'Parent Task UID', 'uid', 'UID of the parent task'],
	['case_uid', 'Case UID', 'uid', 'UID of the case the task belongs to'],
	['participants', 'Participants (JSON)', 'json', 'Participants object'],
	['legacy_data', 'Legacy Data (JSON)', 'json', 'Legacy data object'],
	['form_data', 'Form Data (JSON)', 'json', 'Form data object'],
	['form_type', 'Form Type', 'string', 'Type of the form'],
	['metadata_form_uid', 'Metadata Form UID', 'uid', 'UID of the metadata form'],
	['assigned_at', 'Assigned At', 'dateTime', 'When the task was assigned'],
	['started_at', 'Started At', 'dateTime', 'When work on the task started'],
	['done_at', 'Done At', 'dateTime', 'When the task was done'],
	[
		'assignee_updated_by',
		'Assignee Updated By',
		'uid',
		'UID of the user who last changed the assignee',
	],
	['queue_updated_by', 'Queue Updated By', 'uid', 'UID of the user who last changed the queue'],
	['is_assigned_player', 'Is Assigned Player', 'boolean', 'Whether the assignee is a player'],
	['external_status', 'External Status', 'status', 'Status of the matching ticket in your system'],
	[
		'external_created_at',
		'External Created At',
		'dateTime',
		'When the matching ticket was created',
	],
	[
		'external_updated_at',
		'External Updated At',
		'dateTime',
		'When the matching ticket was last updated',
	],
	[
		'external_status_updated_at',
		'External Status Updated At',
		'dateTime',
		'When the status of the matching ticket changed',
	],
	['external_assignee_uid', 'External Assignee UID', 'uid', 'UID of the assignee in your system'],
];

function propertyFor([
	name,
	displayName,
	kind,
	description,
]: (typeof WRITABLE)[number]): INodeProperties {
	const base = { displayName, name, description };
	switch (kind) {
		case 'status':
			return { ...base, type: 'options', options: statusOptions, default: 'TODO' };
		case 'statusGlobal':
			return {
				...base,
				type: 'options',
				options: [
					{ name: 'To Do', value: 'TODO' },
					{ name: 'Done', value: 'DONE' },
				],
				default: 'TODO',
			};
		case 'boolean':
			return { ...base, type: 'boolean', default: false };
		case 'dateTime':
			return { ...base, type: 'dateTime', default: '' };
		case 'json':
			return { ...base, type: 'json', default: '{}' };
		case 'uid':
			return {
				...base,
				type: 'string',
				default: '',
				placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
			};
		default:
			return { ...base, type: 'string', default: '' };
	}
}

const KIND = new Map(WRITABLE.map(([name, displayName, kind]) => [name, { displayName, kind }]));

/** The "Additional Fields" / "Update Fields" collection of task properties. */
export function taskPropertiesCollection(
	name: string,
	displayName: string,
	extra: INodeProperties[] = [],
): INodeProperties {
	return {
		displayName,
		name,
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [...extra, ...WRITABLE.map(propertyFor)].sort((a, b) =>
			a.displayName.localeCompare(b.displayName),
		),
	};
}

/** What a new task says (spec 2.3): its title, its URL and its custom fields (Create, Create or Update). */
export function taskContentProperties(): INodeProperties[] {
	return [
		{
			displayName: 'Title',
			name: 'title',
			type: 'string',
			required: true,
			default: '',
			description: 'Human-readable title of the task (fields.title)',
		},
		{
			displayName: 'URL',
			name: 'url',
			type: 'string',
			default: '',
			description: 'URL the operator client opens with the task',
		},
		...customFieldsProperties(),
	];
}

/** Custom fields as rows and as a JSON object (spec 2.3: any key, no type validation by the service). */
export function customFieldsProperties(): INodeProperties[] {
	return [
		customFieldRows({
			displayName: 'Custom Fields',
			name: 'customFields',
			placeholder: 'Add Custom Field',
			description:
				"Keys of the task's fields object, such as ticket_id, one per row. A row wins over a key of the same name in Custom Fields (JSON).",
		}),
		{
			displayName: 'Custom Fields (JSON)',
			name: 'customFieldsJson',
			type: 'json',
			default: '{}',
			description:
				'More custom fields as one JSON object, sent together with the rows above; values keep their JSON types',
			hint: 'Rows under Custom Fields win over keys of the same name here',
		},
	];
}

/** fields = JSON object, then rows (rows win), then title and url when given. */
export function readFields(
	ctx: IExecuteFunctions,
	itemIndex: number,
	given: { title?: unknown; url?: unknown },
): IDataObject {
	const json = jsonObject(
		ctx,
		itemIndex,
		'Custom Fields (JSON)',
		ctx.getNodeParameter('customFieldsJson', itemIndex, '{}'),
	);
	const fields: IDataObject = {};
	for (const key of Object.keys(json))
		fields[requireFieldName(ctx, itemIndex, 'Custom Fields (JSON)', key)] = json[key];
	const rows = ctx.getNodeParameter('customFields.field', itemIndex, []) as Array<{
		name: string;
		value: unknown;
	}>;
	for (const { name, value } of rows) {
		fields[requireFieldName(ctx, itemIndex, 'Custom Fields', name)] = value as IDataObject[string];
	}
	if (given.title !== undefined) fields.title = requireText(ctx, itemIndex, 'Title', given.title);
	const url = requireText(ctx, itemIndex, 'URL', given.url);
	if (url !== '') fields.url = url;
	for (const [key, value] of Object.entries(fields))
		checkSize(ctx, itemIndex, `fields.${key}`, value);
	return fields;
}

/** Turns the collection's values into body properties of the right types, refusing what the service would. */
export function readTaskProperties(
	ctx: IExecuteFunctions,
	itemIndex: number,
	values: IDataObject,
): IDataObject {
	const body: IDataObject = {};
	for (const [name, value] of Object.entries(values)) {
		const property = KIND.get(name);
		if (!property) continue;
		const { displayName, kind } = property;
		if (kind === 'uid') {
			body[name] =
				value === '' || value === null ? null : requireUuid(ctx, itemIndex, displayName, value);
		} else if (kind === 'uids') {
			const list = Array.isArray(value) ? value : String(value ?? '').split(',');
			body[name] = list
				.map((uid) => String(uid).trim())
				.filter((uid) => uid !== '')
				.map((uid) => requireUuid(ctx, itemIndex, displayName, uid));
		} else if (kind === 'dateTime') {
			if (value === '' || value === null) {
				body[name] = null;
				continue;
			}
			const time = Date.parse(String(value));
			if (Number.isNaN(time))
				throw invalidParameter(
					ctx,
					itemIndex,
					displayName,
					`is not a date and time: ${JSON.stringify(value)}`,
				);
			body[name] = new Date(time).toISOString();
		} else if (kind === 'json') {
			body[name] = jsonObject(ctx, itemIndex, displayName, value);
		} else if (kind === 'boolean') {
			// Is Assigned Player may be null (spec 2.2: boolean or null); text is refused (booleanValue).
			body[name] = booleanValue(ctx, itemIndex, displayName, value, name === 'is_assigned_player');
		} else {
			body[name] = value;
		}
	}
	return body;
}

/** Every task needs a title (spec 2.3, fields.title). */
export function requireTitle(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string {
	return requiredText(ctx, itemIndex, 'Title', value);
}
