import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { IdentityOptions } from '../../../shared/identity';
import { uidOfExternalId } from '../../../shared/identity';
import type { ValueSource } from '../../../shared/parameters';
import {
	booleanValue,
	checkSize,
	describeKind,
	FIELD_NAMES_N8N_DROPS,
	invalidParameter,
	isExpression,
	jsonObject,
	MAX_VALUE_BYTES,
	readBoolean,
	requiredText,
	requireFieldName,
	requireText,
	requireUuid,
} from '../../../shared/parameters';
import { customFieldRows, statusOptions } from '../../../shared/tasks/fields';
import { externalIdOptions, readIdentityOptions } from './externalId';

// The task an input item describes, in both input modes: its uid (given, from its external ID, or left to Create), and
// its values, mapped from the item's keys (Map Automatically) or from the node's parameters (Define Below), with the
// parameters that show them.

/** The operations that write a task from its input item: each reads it the same way, in both input modes. */
export type TaskInputOperation = 'create' | 'upsert' | 'syncBacklog';

/** One input item, read and checked. */
export interface TaskInput {
	/** The task uid: given, or derived from the external ID; undefined for a Create that leaves it to the node. */
	uid?: string;
	/** The caller's ticket id, also stored in `fields` under the External ID Field. */
	externalId?: string;
	/** Title, URL, custom fields and the external ID. */
	fields: IDataObject;
}

/**
 * Define Below: the identity of one item. Create: an optional UID (a literal empty one means "derive it"; an
 * expression that resolves to nothing is an error, never a silent fallback). Create or Update: a UID or an External
 * ID. Sync Backlog: an External ID. Every value is checked before it is used.
 */
function definedIdentity(
	ctx: IExecuteFunctions,
	operation: TaskInputOperation,
	itemIndex: number,
	syncOptions?: IdentityOptions,
): { uid?: string; externalId?: string; options?: IdentityOptions } {
	if (operation === 'create') {
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const given =
			isExpression(ctx.getNode(), ['additionalFields', 'uid']) ||
			(additional.uid !== undefined && additional.uid !== '');
		return { uid: given ? requireUuid(ctx, itemIndex, 'UID', additional.uid) : undefined };
	}
	if (operation === 'upsert' && ctx.getNodeParameter('identifyBy', itemIndex) === 'uid') {
		return { uid: requireUuid(ctx, itemIndex, 'UID', ctx.getNodeParameter('uid', itemIndex)) };
	}
	const externalId = requiredText(
		ctx,
		itemIndex,
		'External ID',
		ctx.getNodeParameter('externalId', itemIndex, ''),
	);
	const options =
		syncOptions ??
		readIdentityOptions(
			ctx,
			itemIndex,
			ctx.getNodeParameter('externalIdOptions', itemIndex, {}) as IDataObject,
		);
	return { uid: uidOfExternalId(externalId, options), externalId, options };
}

/**
 * The one reader of task input for Create, Create or Update and Sync Backlog, under Define Below and Map
 * Automatically alike. What each item must hold is decided here once: a title; for Create or Update an External ID
 * or a UID, for Sync Backlog an External ID; never a value that resolved to nothing. `syncOptions`: Sync Backlog keeps
 * External ID Field and UID Namespace in its Sync Options (read once), for both input modes.
 */
export function taskInputReader(
	ctx: IExecuteFunctions,
	operation: TaskInputOperation,
	syncOptions?: IDataObject,
): (itemIndex: number) => TaskInput {
	if (readInputData(ctx) === 'autoMap') {
		const settings = readAutoMapSettings(ctx, syncOptions);
		const items = ctx.getInputData();
		return (itemIndex) => {
			const item = mapItem(ctx, settings, itemIndex, items[itemIndex].json);
			const needsExternalId =
				operation === 'syncBacklog' || (operation === 'upsert' && item.uid === undefined);
			if (item.externalId === undefined && needsExternalId) {
				const why =
					operation === 'syncBacklog'
						? '; Sync Backlog knows each ticket by its external ID'
						: ', and the item has no "uid"; the task UID is derived from the external ID';
				throw invalidParameter(
					ctx,
					itemIndex,
					settings.externalIdKey,
					`is missing or empty${why}`,
					`Set External ID Key in Mapping Options to the key that holds the ticket ID (now "${settings.externalIdKey}").`,
				);
			}
			if (item.externalId !== undefined) item.fields[settings.externalIdField] = item.externalId;
			const derived =
				operation !== 'create' && item.externalId !== undefined
					? uidOfExternalId(item.externalId, settings)
					: undefined;
			return { uid: item.uid ?? derived, externalId: item.externalId, fields: item.fields };
		};
	}
	const syncIdentity = syncOptions ? readIdentityOptions(ctx, 0, syncOptions) : undefined;
	return (itemIndex) => {
		const identity = definedIdentity(ctx, operation, itemIndex, syncIdentity);
		const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
		const fields = readFields(ctx, itemIndex, {
			title,
			url: ctx.getNodeParameter('url', itemIndex, ''),
		});
		if (identity.externalId !== undefined)
			fields[identity.options!.externalIdField] = identity.externalId;
		return { uid: identity.uid, externalId: identity.externalId, fields };
	};
}

// Input Data: Map Automatically (the item's keys) or Define Below (the parameters).

/**
 * "Input Data": Define Below (every value a parameter, expressions evaluated per item) or Map Automatically (each
 * input item's JSON read as it is, the node's parameters read once per execution). Saved workflows without the
 * parameter are Define Below.
 */
export type InputData = 'autoMap' | 'define';

export const DEFAULT_EXTERNAL_ID_KEY = 'id';

type MappedOperation = 'create' | 'upsert' | 'syncBacklog';

export function inputDataProperty(): INodeProperties {
	return {
		displayName: 'Input Data',
		name: 'inputData',
		type: 'options',
		noDataExpression: true,
		default: 'define',
		description:
			'Define Below: each value is a parameter, its expressions evaluated for every item. Map Automatically: the keys of each input item (title, URL, the external ID key, uid, custom fields) are read as they are, and the parameters below once for all items.',
		options: [
			{
				name: 'Define Below',
				value: 'define',
				description: 'Set each value below; expressions are evaluated for every item',
			},
			{
				name: 'Map Automatically',
				value: 'autoMap',
				description: "Read each input item's keys as they are; much faster for many items",
			},
		],
	};
}

/** The properties only Define Below shows (existing parameters keep their names; they are hidden under Map Automatically). */
export function defineOnly(properties: INodeProperties[]): INodeProperties[] {
	return properties.map((property) => {
		const show = { ...(property.displayOptions?.show ?? {}), inputData: ['define'] };
		return { ...property, displayOptions: { ...property.displayOptions, show } };
	});
}

const WHAT_IS_READ: Record<MappedOperation, string> = {
	create:
		'Each input item becomes a task: its "title" and "url" keys, the external ID key (stored in the External ID Field), "uid" when present (the task UID; otherwise one is derived from the execution), and every other key as a custom field.',
	upsert:
		'Each input item becomes a task: its "title" and "url" keys, "uid" when present (otherwise the UID is derived from the external ID key, which is also stored in the External ID Field), and every other key as a custom field.',
	syncBacklog:
		'Each input item is a ticket: its external ID key (required; the UID is derived from it, unless the item has a "uid"), "title", "url", and every other key as a custom field.',
};

/** The notice and the options of Map Automatically for one operation. */
export function autoMapProperties(operation: MappedOperation): INodeProperties[] {
	const show = { inputData: ['autoMap'] };
	const idOptions =
		operation === 'syncBacklog'
			? [] // Sync Backlog has them in Sync Options, for both kinds of input
			: externalIdOptions.filter(
					(option) => operation === 'upsert' || option.name === 'externalIdField',
				);
	return [
		{
			displayName: `${WHAT_IS_READ[operation]} The parameters below are read once for all items.`,
			name: 'autoMapNotice',
			type: 'notice',
			default: '',
			displayOptions: { show },
		},
		{
			displayName: 'Mapping Options',
			name: 'autoMapOptions',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show },
			options: [
				{
					displayName: 'Allow Nested Values',
					name: 'allowNested',
					type: 'boolean',
					default: false,
					description:
						'Whether a key holding an object or an array becomes a custom field as it is (JSON). Otherwise such an item is an error, since it usually means the data needs flattening first.',
				},
				{
					displayName: 'External ID Key',
					name: 'externalIdKey',
					type: 'string',
					default: DEFAULT_EXTERNAL_ID_KEY,
					description: 'Key of each input item that holds its ID in your system (the ticket ID)',
				},
				...idOptions,
				{
					displayName: 'Keys to Ignore',
					name: 'keysToIgnore',
					type: 'string',
					default: '',
					placeholder: 'e.g. internal_notes, uid',
					description: 'Comma-separated keys of the input items that are not read at all',
				},
				{
					displayName: 'Only These Keys as Custom Fields',
					name: 'onlyKeys',
					type: 'string',
					default: '',
					placeholder: 'e.g. priority, customer',
					description:
						'Comma-separated keys that become custom fields; any other key (besides the title, URL, external ID and uid keys) is not sent. Empty: every other key.',
				},
			],
		},
	];
}

export function readInputData(ctx: IExecuteFunctions): InputData {
	return ctx.getNodeParameter('inputData', 0, 'define') === 'autoMap' ? 'autoMap' : 'define';
}

export interface AutoMapSettings extends IdentityOptions {
	externalIdKey: string;
	ignore: Set<string>;
	/** Only these keys become custom fields (undefined: every other key). */
	only?: Set<string>;
	allowNested: boolean;
}

const keyList = (value: unknown) =>
	String(value ?? '')
		.split(',')
		.map((key) => key.trim())
		.filter((key) => key !== '');

/**
 * The Map Automatically parameters, read once per execution (item 0). External ID Field and UID Namespace come from
 * `idOptions` when the operation keeps them elsewhere (Sync Backlog's Sync Options).
 */
export function readAutoMapSettings(
	ctx: IExecuteFunctions,
	idOptions?: IDataObject,
): AutoMapSettings {
	const options = ctx.getNodeParameter('autoMapOptions', 0, {}) as IDataObject;
	const ids = idOptions ?? options;
	const externalIdKey = String(options.externalIdKey ?? DEFAULT_EXTERNAL_ID_KEY).trim();
	if (externalIdKey === '' || externalIdKey === 'title' || externalIdKey === 'url') {
		throw invalidParameter(
			ctx,
			0,
			'External ID Key',
			`cannot be ${externalIdKey === '' ? 'empty' : `"${externalIdKey}"`}`,
			'Name the key of the input items that holds the ticket ID, e.g. id.',
		);
	}
	const only = keyList(options.onlyKeys);
	return {
		externalIdKey,
		...readIdentityOptions(ctx, 0, ids),
		ignore: new Set(keyList(options.keysToIgnore)),
		only: only.length > 0 ? new Set(only) : undefined,
		allowNested: readBoolean(
			ctx,
			0,
			'Mapping Options > Allow Nested Values',
			options.allowNested,
			false,
		),
	};
}

/** One input item, read. `fields` holds title, url and the custom fields (not the external ID field). */
export interface MappedItem {
	title: string;
	externalId?: string;
	uid?: string;
	fields: IDataObject;
}

const MAPPING_HINT =
	'Map Automatically reads the keys of each input item as they are: rename or convert the key first (e.g. with an Edit Fields node), add it to Keys to Ignore, or use Define Below.';

/** A key of an input item read by Map Automatically. */
const INPUT_ITEM: ValueSource = { holds: 'the input item holds', hint: MAPPING_HINT };

/** Strings this short cannot exceed MAX_VALUE_BYTES in UTF-8 (at most 3 bytes per UTF-16 unit): no need to count. */
const SHORT_STRING = Math.floor(MAX_VALUE_BYTES / 3);

/**
 * Reads one input item under Map Automatically. Every check of Define Below applies (title required, text where
 * text is needed, a uid a UUID, no value over 1 MB); objects and arrays as custom fields only when allowed.
 * No copy of the item: values are taken over as they are (the request body is serialised, never changed).
 */
export function mapItem(
	ctx: IExecuteFunctions,
	settings: AutoMapSettings,
	itemIndex: number,
	json: IDataObject,
): MappedItem {
	const fields: IDataObject = {};
	let title = '';
	let url = '';
	let externalId = '';
	let uid: string | undefined;
	for (const key of Object.keys(json)) {
		if (settings.ignore.has(key)) continue;
		const value = json[key];
		if (key === settings.externalIdKey) {
			externalId = requireText(ctx, itemIndex, key, value, INPUT_ITEM).trim();
		} else if (key === 'title') {
			title = requireText(ctx, itemIndex, key, value, INPUT_ITEM).trim();
		} else if (key === 'url') {
			url = requireText(ctx, itemIndex, key, value, INPUT_ITEM);
		} else if (key === 'uid') {
			if (value !== undefined && value !== null && value !== '')
				uid = requireUuid(ctx, itemIndex, 'uid', value);
		} else if (!settings.only || settings.only.has(key)) {
			if (value === undefined) continue;
			if (key === '' || FIELD_NAMES_N8N_DROPS.has(key))
				requireFieldName(ctx, itemIndex, key, key, MAPPING_HINT);
			if (value !== null && typeof value === 'object') {
				if (!settings.allowNested) {
					throw invalidParameter(
						ctx,
						itemIndex,
						key,
						`holds ${describeKind(value)}; custom fields take text, numbers, booleans and null unless Allow Nested Values is on`,
						MAPPING_HINT,
					);
				}
				checkSize(ctx, itemIndex, `fields.${key}`, value);
			} else if (typeof value === 'string') {
				if (value.length > SHORT_STRING) checkSize(ctx, itemIndex, `fields.${key}`, value);
			} else if (
				typeof value === 'number'
					? !Number.isFinite(value)
					: typeof value !== 'boolean' && value !== null
			) {
				throw invalidParameter(
					ctx,
					itemIndex,
					key,
					`holds ${describeKind(value)}, which JSON cannot carry`,
					MAPPING_HINT,
				);
			}
			fields[key] = value;
		}
	}
	if (!title) {
		throw invalidParameter(
			ctx,
			itemIndex,
			'title',
			'is missing or empty; every task needs a title (fields.title)',
			MAPPING_HINT,
		);
	}
	if (title.length > SHORT_STRING) checkSize(ctx, itemIndex, 'fields.title', title);
	fields.title = title;
	if (url !== '') {
		if (url.length > SHORT_STRING) checkSize(ctx, itemIndex, 'fields.url', url);
		fields.url = url;
	}
	return { title, externalId: externalId === '' ? undefined : externalId, uid, fields };
}

// Define Below: the task's properties and custom fields, as parameters.

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
