import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** A yes/no setting (of an options collection) and the words of the error about it. */
export interface BooleanSetting {
	/** The setting as the message names it, e.g. "Item 0: Request Options › Batching". */
	label: string;
	/** Taken when the setting is unset (undefined, null, ''). */
	fallback: boolean;
	description: string;
	itemIndex?: number;
}

/**
 * A yes/no setting: its fallback when unset, true or false as given or as the text an expression gives ("false": a
 * check for `=== false` alone, or `Boolean(...)`, took it for on), anything else an error naming the setting, as for
 * the numbers (numberSetting): nothing silently taken for on.
 */
export function booleanSetting(node: INode, value: unknown, setting: BooleanSetting): boolean {
	if (value === undefined || value === null || value === '') return setting.fallback;
	const text = typeof value === 'string' ? value.trim() : value;
	if (text === true || text === 'true') return true;
	if (text === false || text === 'false') return false;
	throw new NodeOperationError(
		node,
		`${setting.label} is ${JSON.stringify(value) ?? String(value)}: it must be true or false`,
		{ itemIndex: setting.itemIndex, description: setting.description },
	);
}
