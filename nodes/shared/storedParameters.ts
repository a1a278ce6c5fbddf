import type { INode } from 'n8n-workflow';

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
