import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

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
