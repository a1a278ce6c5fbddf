import type { IExecuteFunctions, IGetNodeParameterOptions, INode } from 'n8n-workflow';
import { deepCopy } from 'n8n-workflow';

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
