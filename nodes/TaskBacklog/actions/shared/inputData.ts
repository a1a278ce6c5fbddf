import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { IdentityOptions } from '../../../shared/identity';
import { externalIdOptions, readIdentityOptions } from './externalId';
import {
	checkSize,
	describeKind,
	FIELD_NAMES_N8N_DROPS,
	invalidParameter,
	MAX_VALUE_BYTES,
	readBoolean,
	requireFieldName,
	requireText,
	requireUuid,
} from '../../../shared/parameters';
import type { ValueSource } from '../../../shared/parameters';

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
