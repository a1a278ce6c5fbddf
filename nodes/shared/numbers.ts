import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

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
