import type { IDataObject, IExecuteFunctions, IGetNodeParameterOptions, INode } from 'n8n-workflow';
import { deepCopy, NodeApiError, NodeOperationError } from 'n8n-workflow';

import { isUuid } from './identity';

// A parameter's value, read and checked the same way by the three nodes: as stored (and whether it is an expression),
// read once per execution where it holds none, as a boolean or a number, and the checks of the Task Backlog node's
// values (text, UIDs, JSON, sizes), each refusal an error naming the parameter and the item.

/** The value a parameter is stored with (a path into the node's parameters), before n8n resolves its expression. */
export function storedParameter(node: INode, path: Array<string | number>): unknown {
	let value: unknown = node.parameters;
	for (const key of path)
		value =
			value && typeof value === 'object'
				? (value as Record<string | number, unknown>)[key]
				: undefined;
	return value;
}

/** Whether the stored parameter holds an expression (n8n: a string starting with "="). */
export function isExpression(node: INode, path: Array<string | number>): boolean {
	const value = storedParameter(node, path);
	return typeof value === 'string' && value.startsWith('=');
}

/** Whether a stored parameter value holds an expression anywhere, nested values included. */
function hasExpression(value: unknown): boolean {
	if (typeof value === 'string') return value.startsWith('=');
	if (Array.isArray(value)) return value.some(hasExpression);
	if (value && typeof value === 'object') return Object.values(value).some(hasExpression);
	return false;
}

const copy = <T>(value: T): T =>
	value && typeof value === 'object' ? (deepCopy(value as object) as T) : value;

/**
 * The same execution context, whose getNodeParameter evaluates a parameter once per execution when its stored
 * value holds no expression (it cannot differ between items), and at most once per item otherwise (a second read
 * of the same item, e.g. by a check, gets the first result). Every read returns its own copy, as n8n's does.
 * Everything else is the context itself, so the shared readers and checks run unchanged on it.
 */
export function parametersReadOnce(ctx: IExecuteFunctions): IExecuteFunctions {
	const node = ctx.getNode();
	/** Per name, how its stored value is read: by n8n as it is (absent, or a name with an index), once, or per item. */
	const kinds = new Map<string, 'n8n' | 'constant' | 'perItem'>();
	const kindOf = (name: string) => {
		let kind = kinds.get(name);
		if (kind === undefined) {
			// A name with an index (`a[0].b`) is no plain path: read by n8n, like an absent parameter.
			const value = name.includes('[') ? undefined : storedParameter(node, name.split('.'));
			kind = value === undefined ? 'n8n' : hasExpression(value) ? 'perItem' : 'constant';
			kinds.set(name, kind);
		}
		return kind;
	};
	const once = new Map<string, unknown>();
	let memoItem = -1;
	const perItem = new Map<string, unknown>();

	const read = (
		name: string,
		itemIndex: number,
		fallbackValue?: unknown,
		options?: IGetNodeParameterOptions,
	): unknown => {
		const kind = kindOf(name);
		// Absent parameters (n8n answers with the fallback) and unusual options go to n8n as they are.
		if (
			kind === 'n8n' ||
			(options &&
				Object.keys(options).some((key) => key !== 'extractValue' && key !== 'ensureType'))
		) {
			return ctx.getNodeParameter(name, itemIndex, fallbackValue, options);
		}
		const key = options ? `${name}\u0000${JSON.stringify(options)}` : name;
		if (kind === 'constant') {
			if (!once.has(key))
				once.set(key, ctx.getNodeParameter(name, itemIndex, fallbackValue, options));
			return copy(once.get(key));
		}
		if (memoItem !== itemIndex) {
			memoItem = itemIndex;
			perItem.clear();
		}
		if (!perItem.has(key))
			perItem.set(key, ctx.getNodeParameter(name, itemIndex, fallbackValue, options));
		return copy(perItem.get(key));
	};

	const view = Object.create(ctx) as IExecuteFunctions;
	Object.defineProperty(view, 'getNodeParameter', {
		value: read as IExecuteFunctions['getNodeParameter'],
	});
	return view;
}

/**
 * The one reader of every boolean parameter of the three nodes (Task Backlog, Task Backlog Trigger, Task Backlog Poll
 * Trigger). n8n hands a boolean parameter set by an expression over as the expression gives it: the text "false"
 * is truthy, so a check for `=== false` alone, `!== false` or `Boolean(...)` took it for on, and one for `=== true`
 * took "true" for off. Each parameter says what text is (`text`):
 *
 * - 'convert' (the default): "true" and "false" (any case, trimmed) are that value; unset (undefined, null, '') is
 *   the parameter's default; anything else ("yes", 1, an object) is an error naming the setting. Right wherever
 *   the value an expression spells is what the workflow means and taking it starts no write or close that a saved
 *   workflow does not do today.
 * - 'refuse': only true or false. Text, and every other value (undefined or '' from an expression, null, a number)
 *   is an error naming the setting, before anything is sent. For a parameter where reading the text as written
 *   would start writes or closes that a saved workflow, which has run with the text read otherwise, does not do
 *   today (Sync Backlog's Dry Run: "false" was read as on, so the workflow wrote nothing), and for values sent to the
 *   service as booleans (a task's Archived: the service refuses text). A parameter left unset is still its default:
 *   n8n gives the fallback of getNodeParameter for it, before this reader.
 */
export interface BooleanSetting {
	/** The setting as the message names it, e.g. "Item 0: Request Options › Batching". */
	label: string;
	/** Taken when the setting is unset (undefined, null, ''), under 'convert'. */
	fallback: boolean;
	/** How to put it right: the error's description. */
	description: string;
	itemIndex?: number;
	/** What a value that is not a boolean is: converted from "true"/"false" (the default), or refused. */
	text?: 'convert' | 'refuse';
}

/** What an expression gave, in the words of the error. */
function given(value: unknown): string {
	if (value === undefined) return 'nothing (undefined)';
	if (value === null) return 'null';
	if (typeof value === 'string')
		return value === '' ? 'empty text' : `the text ${JSON.stringify(value)}`;
	if (typeof value === 'number') return `the number ${String(value)}`;
	if (Array.isArray(value)) return 'an array';
	return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The reading itself (see BooleanSetting): true or false, or undefined for a value refused. */
export function asBoolean(
	value: unknown,
	fallback: boolean,
	text: BooleanSetting['text'] = 'convert',
): boolean | undefined {
	if (value === true || value === false) return value;
	if (text === 'refuse') return undefined;
	if (value === undefined || value === null || value === '') return fallback;
	const spelled = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
	if (spelled === 'true') return true;
	if (spelled === 'false') return false;
	return undefined;
}

/** A boolean parameter, read as `setting.text` says (see BooleanSetting): true or false, or a NodeOperationError. */
export function booleanSetting(node: INode, value: unknown, setting: BooleanSetting): boolean {
	const read = asBoolean(value, setting.fallback, setting.text);
	if (read !== undefined) return read;
	if (setting.text === 'refuse') {
		throw new NodeOperationError(
			node,
			`${setting.label} must be true or false (a boolean); the expression gave ${given(value)}`,
			{ itemIndex: setting.itemIndex, description: setting.description },
		);
	}
	throw new NodeOperationError(
		node,
		`${setting.label} is ${JSON.stringify(value) ?? String(value)}: it must be true or false`,
		{ itemIndex: setting.itemIndex, description: setting.description },
	);
}

/**
 * The number a value of a parameter or of the credential spells: a number as it is, a string that is not blank read as
 * a number, anything else NaN (which every check of a range refuses), so that "five" or an object never passes as 0.
 */
export function spelledNumber(value: unknown): number {
	if (typeof value === 'number') return value;
	return typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}

/** A number setting (of the credential or of an options collection) and the words of the error about it. */
export interface NumberSetting {
	/** The setting as the message names it, e.g. "The Task Backlog API credential's Requests per Minute". */
	label: string;
	/** Taken when the setting is unset (undefined, null, ''), e.g. in a credential saved before the field existed. */
	fallback: number;
	valid: (number: number) => boolean;
	/** What `valid` accepts, in words: "a number of 1 or more". */
	rule: string;
	description: string;
	itemIndex?: number;
}

/**
 * A number setting: its fallback when unset, otherwise the number the value spells if valid, or an error naming the
 * setting. Nothing is silently replaced: an expression giving "five" must not become NaN attempts (which never run
 * out), nor a limit of 0 the default.
 */
export function numberSetting(node: INode, value: unknown, setting: NumberSetting): number {
	if (value === undefined || value === null || value === '') return setting.fallback;
	const number = spelledNumber(value);
	if (setting.valid(number)) return number;
	throw new NodeOperationError(
		node,
		`${setting.label} is ${JSON.stringify(value) ?? String(value)}: it must be ${setting.rule}`,
		{ itemIndex: setting.itemIndex, description: setting.description },
	);
}

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
