import type { IExecuteFunctions, IGetNodeParameterOptions, INodeParameters } from 'n8n-workflow';
import { deepCopy } from 'n8n-workflow';

/** Whether a stored parameter value holds an expression anywhere (n8n: a string that starts with "="). */
function hasExpression(value: unknown): boolean {
	if (typeof value === 'string') return value.startsWith('=');
	if (Array.isArray(value)) return value.some(hasExpression);
	if (value && typeof value === 'object') return Object.values(value).some(hasExpression);
	return false;
}

/** The stored value at a dotted path such as `customFields.field`; undefined when absent or not a plain path. */
function storedValue(parameters: INodeParameters, name: string): unknown {
	if (name.includes('[')) return undefined;
	let current: unknown = parameters;
	for (const part of name.split('.')) {
		if (!current || typeof current !== 'object') return undefined;
		current = (current as Record<string, unknown>)[part];
	}
	return current;
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
	const stored = ctx.getNode().parameters;
	const constant = new Map<string, boolean>();
	const once = new Map<string, unknown>();
	let memoItem = -1;
	const perItem = new Map<string, unknown>();

	const read = (
		name: string,
		itemIndex: number,
		fallbackValue?: unknown,
		options?: IGetNodeParameterOptions,
	): unknown => {
		const value = storedValue(stored, name);
		// Absent parameters (n8n answers with the fallback) and unusual options go to n8n as they are.
		if (
			value === undefined ||
			(options &&
				Object.keys(options).some((key) => key !== 'extractValue' && key !== 'ensureType'))
		) {
			return ctx.getNodeParameter(name, itemIndex, fallbackValue, options);
		}
		const key = options ? `${name}\u0000${JSON.stringify(options)}` : name;
		if (!constant.has(name)) constant.set(name, !hasExpression(value));
		if (constant.get(name)) {
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
