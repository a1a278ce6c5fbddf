import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { booleanSetting } from '../../../shared/booleans';
import { isUuid } from '../../../shared/tasks/identity';

/** Largest single value we send: the service states no limit, so we refuse what no backlog task should carry. */
export const MAX_VALUE_BYTES = 1024 * 1024;

export function invalidParameter(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	problem: string,
	description?: string,
): NodeOperationError {
	return new NodeOperationError(ctx.getNode(), `Item ${itemIndex}: "${parameter}" ${problem}`, {
		itemIndex,
		description,
	});
}

/**
 * A boolean parameter of an item (`label` as the node shows it, e.g. "Simplify" or "Options > Include Archived"),
 * through the one reader (booleanSetting): true or false, the text "true" or "false" from an expression as that
 * value, unset as `fallback`, anything else an error naming the item and the parameter.
 */
export function readBoolean(
	ctx: IExecuteFunctions,
	itemIndex: number,
	label: string,
	value: unknown,
	fallback: boolean,
): boolean {
	return booleanSetting(ctx.getNode(), value, {
		label: `Item ${itemIndex}: ${label}`,
		fallback,
		itemIndex,
		description: `Set ${label} to true or false, or make its expression give true or false (or the text "true" or "false").`,
	});
}

/**
 * A boolean sent to the service as a value of the task or comment (Archived, Is Assigned Player): true or false
 * only (null too where the service takes it), through the one reader (booleanSetting, 'refuse'). Text is refused
 * before any request, not converted: the service takes a boolean only (spec 2.2), so a saved workflow giving
 * "true" has archived nothing so far, and converting would start archiving.
 */
export function booleanValue(
	ctx: IExecuteFunctions,
	itemIndex: number,
	label: string,
	value: unknown,
	nullable = false,
): boolean | null {
	if (nullable && value === null) return null;
	return booleanSetting(ctx.getNode(), value, {
		label: `Item ${itemIndex}: "${label}"`,
		fallback: false,
		text: 'refuse',
		itemIndex,
		description: `Nothing was sent. Set ${label} with its switch, or make the expression give a boolean, e.g. {{ $json.archived === "true" }}${nullable ? ' (or null)' : ''}.`,
	});
}

/** What a value is, in the words of an error message: "an object", "an array", "a boolean (true)", "NaN". */
export function describeKind(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'an array';
	if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : `the number ${String(value)}`;
	if (typeof value === 'boolean') return `a boolean (${String(value)})`;
	if (typeof value === 'object') return 'an object';
	return `a ${typeof value}`;
}

/** Where a value was read, in the words of an error about it: what held it, and how to put it right. */
export interface ValueSource {
	holds: string;
	hint: string;
}

/** A node parameter, typed or an expression. */
export const PARAMETER_VALUE: ValueSource = {
	holds: 'the value (or its expression) is',
	hint: 'Map a single field, e.g. {{ $json.ticket.id }} rather than {{ $json.ticket }}, or convert the value with .toString() if that text is really meant.',
};

/**
 * A text value as text. Only strings and finite numbers are accepted: an expression or input item that gives an
 * object, an array, a boolean, NaN or Infinity would otherwise become "[object Object]", "a,b", "true" or "NaN", the
 * same for every item. Empty (undefined, null, '') is returned as ''; the caller decides whether that is allowed.
 */
export function requireText(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
	source: ValueSource = PARAMETER_VALUE,
): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value;
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	throw invalidParameter(
		ctx,
		itemIndex,
		parameter,
		`must be text or a number, but ${source.holds} ${describeKind(value)}`,
		source.hint,
	);
}

/**
 * A text parameter that must hold something: undefined, null, '' and whitespace are refused, naming the item and the
 * field, since an expression that resolves to nothing (a key typo such as {{ $json.id }} on {"ID": ...}) must never
 * become the text "undefined" or an empty identity. Returns the text trimmed.
 */
export function requiredText(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
): string {
	const text = requireText(ctx, itemIndex, parameter, value).trim();
	if (text === '') {
		const resolved = value === undefined ? 'undefined' : value === null ? 'null' : 'empty text';
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`is empty (the value or its expression resolved to ${resolved})`,
			'Check the expression against the input item: a key spelled differently (e.g. {{ $json.id }} when the item has "ID") resolves to nothing.',
		);
	}
	return text;
}

/**
 * Custom-field names n8n cannot carry: its deep copy of items and parameters drops `constructor` and `prototype`, and
 * `__proto__` is not an own key of a plain object. A field sent under such a name would silently go missing.
 */
export const FIELD_NAMES_N8N_DROPS = new Set(['__proto__', 'constructor', 'prototype']);

export function requireFieldName(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	name: unknown,
	hint?: string,
): string {
	const key = requireText(ctx, itemIndex, parameter, name).trim();
	if (key === '')
		throw invalidParameter(ctx, itemIndex, parameter, 'has a custom field without a name', hint);
	if (FIELD_NAMES_N8N_DROPS.has(key)) {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`names the custom field "${key}", which n8n cannot carry (its copies of items drop that key)`,
			hint ?? 'Use another name for the custom field, e.g. with a prefix.',
		);
	}
	return key;
}

export function requireUuid(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
): string {
	const text = typeof value === 'string' ? value.trim() : value;
	if (value !== undefined && value !== null && typeof value !== 'string') {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`must be a UID (a UUID such as 3c90c3cc-0d44-4b50-8888-8dd25736052a), but the value (or its expression) is ${describeKind(value)}`,
		);
	}
	if (!isUuid(text)) {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`must be a UID (a UUID such as 3c90c3cc-0d44-4b50-8888-8dd25736052a), got ${JSON.stringify(value ?? '')}`,
		);
	}
	return text.toLowerCase();
}

/** The uid of a task chosen with a resource locator (by ID, by URL or from the list). */
export function taskUid(
	ctx: IExecuteFunctions,
	itemIndex: number,
	name = 'task',
	label = 'Task',
): string {
	const value = ctx.getNodeParameter(name, itemIndex, '', { extractValue: true });
	return requireUuid(ctx, itemIndex, label, value);
}

/** n8n hands a JSON parameter over as text or already parsed. */
export function parseJson(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
): unknown {
	if (typeof value !== 'string') return value;
	try {
		return JSON.parse(value);
	} catch (error) {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`is not valid JSON (${(error as Error).message})`,
		);
	}
}

/** A JSON parameter that must hold an object. */
export function jsonObject(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
): IDataObject {
	if (value === undefined || value === null || value === '') return {};
	const parsed = parseJson(ctx, itemIndex, parameter, value);
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			'must be a JSON object, e.g. {"ticket_id": "1042"}',
		);
	}
	return parsed as IDataObject;
}

export function jsonArray(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
): IDataObject[] {
	const parsed = parseJson(ctx, itemIndex, parameter, value);
	if (!Array.isArray(parsed))
		throw invalidParameter(ctx, itemIndex, parameter, 'must be a JSON array');
	return parsed as IDataObject[];
}

/** Refuses values the service would have to carry for every read of the task (see MAX_VALUE_BYTES). */
export function checkSize(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameter: string,
	value: unknown,
) {
	const bytes = Buffer.byteLength(
		typeof value === 'string' ? value : JSON.stringify(value ?? null),
	);
	if (bytes > MAX_VALUE_BYTES) {
		throw invalidParameter(
			ctx,
			itemIndex,
			parameter,
			`is ${(bytes / 1024 / 1024).toFixed(1)} MB; values over 1 MB are not sent`,
			'Store large content elsewhere and put its link in a custom field (for example `url`).',
		);
	}
}

/** Errors keep their class (and an API error its HTTP status); anything else becomes a NodeOperationError. */
export function asNodeError(ctx: IExecuteFunctions, error: unknown, itemIndex: number): Error {
	return error instanceof NodeApiError || error instanceof NodeOperationError
		? error
		: new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}
