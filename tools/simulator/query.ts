// Condition-tree evaluation, value comparison and sort keys for the simulator's POST /tasks/query.
// The spec only shows `==` and `and`; the other operators are our own choice (see README.md beside this file).

export interface Condition {
	combinator?: string;
	conditions?: Condition[];
	field?: string;
	operator?: string;
	negated?: boolean;
	value?: unknown;
	target?: string;
	disabled?: boolean;
}

export interface Sort {
	field?: string;
	direction?: string;
	condition?: Condition;
}

export type Loc = Array<string | number>;

export interface Issue {
	loc: Loc;
	msg: string;
	type: string;
}

export const COMBINATORS = ['and', 'or'] as const;
export const OPERATORS = ['==', '!=', '<', '<=', '>', '>=', 'in', 'contains'] as const;
/** Reading `queryOperators: documented`: what spec 4.3 shows, and nothing else. */
export const DOCUMENTED_OPERATORS = { operators: ['=='], combinators: ['and'] } as const;

export interface Vocabulary {
	operators: readonly string[];
	combinators: readonly string[];
}
export const DIRECTIONS = ['ascending', 'descending'] as const;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function enumMsg(values: readonly string[]): string {
	return `value is not a valid enumeration member; permitted: ${values.map((v) => `'${v}'`).join(', ')}`;
}

/** Reads `a.b.c` from an item; a bare name unknown at top level falls back to the custom `fields`. */
export function resolveField(item: Record<string, unknown>, path: string): unknown {
	const parts = path.split('.');
	let cur: unknown = item;
	for (const part of parts) {
		if (!isPlainObject(cur)) return undefined;
		cur = cur[part];
	}
	if (cur === undefined && parts.length === 1 && isPlainObject(item.fields))
		return item.fields[path];
	return cur;
}

function isDateLike(v: unknown): v is string {
	return typeof v === 'string' && ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v));
}

/** Date-time strings become epoch numbers, so sorting parses each value once instead of at every comparison. */
export function sortable(v: unknown): unknown {
	return isDateLike(v) ? Date.parse(v) : v === undefined ? null : v;
}

export function deepEqual(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	if (Array.isArray(a) && Array.isArray(b)) {
		return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
	}
	const ao = a as Record<string, unknown>;
	const bo = b as Record<string, unknown>;
	const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
	const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
	return ak.length === bk.length && ak.every((k) => deepEqual(ao[k], bo[k]));
}

/** How leaf conditions compare values. */
export interface EvalOptions {
	/** Reading `typeComparison: strict`: values of different JSON types never match (1 is not "1"); dates still by instant. */
	strictTypes?: boolean;
}

/** Equality as a caller means it: dates by instant, "1042" equals 1042 (unless `strict`), absent equals null. */
export function valuesEqual(a: unknown, b: unknown, strict = false): boolean {
	if (a === undefined) a = null;
	if (b === undefined) b = null;
	if (a === null || b === null) return a === b;
	if (isDateLike(a) && isDateLike(b)) return Date.parse(a) === Date.parse(b);
	if (typeof a === 'object' || typeof b === 'object') return deepEqual(a, b);
	if (typeof a !== typeof b) return strict ? false : String(a) === String(b);
	return a === b;
}

function sameJsonType(a: unknown, b: unknown): boolean {
	return typeof a === typeof b && Array.isArray(a) === Array.isArray(b);
}

function typeRank(v: unknown): number {
	switch (typeof v) {
		case 'boolean':
			return 0;
		case 'number':
			return 1;
		case 'string':
			return 2;
		default:
			return 3;
	}
}

/** Total order over JSON values; nullish sorts last. Used by `<`-style operators and by sorting. */
export function compareValues(a: unknown, b: unknown): number {
	const an = a === null || a === undefined;
	const bn = b === null || b === undefined;
	if (an || bn) return an && bn ? 0 : an ? 1 : -1;
	if (isDateLike(a) && isDateLike(b)) {
		const d = Date.parse(a) - Date.parse(b);
		if (d !== 0) return d < 0 ? -1 : 1;
	}
	if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
	if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
	if (typeof a === 'string' && typeof b === 'string') return a === b ? 0 : a < b ? -1 : 1;
	// A numeric string against a number compares numerically, like the equality above compares as strings.
	if (
		typeof a === 'number' &&
		typeof b === 'string' &&
		b.trim() !== '' &&
		!Number.isNaN(Number(b))
	) {
		return compareValues(a, Number(b));
	}
	if (
		typeof b === 'number' &&
		typeof a === 'string' &&
		a.trim() !== '' &&
		!Number.isNaN(Number(a))
	) {
		return compareValues(Number(a), b);
	}
	const ra = typeRank(a);
	const rb = typeRank(b);
	if (ra !== rb) return ra - rb;
	const sa = JSON.stringify(a);
	const sb = JSON.stringify(b);
	return sa === sb ? 0 : sa < sb ? -1 : 1;
}

/** Validates a condition tree; returns every problem with its location, FastAPI style. */
export function validateCondition(
	c: unknown,
	loc: Loc,
	vocabulary: Vocabulary = { operators: OPERATORS, combinators: COMBINATORS },
): Issue[] {
	const { operators, combinators } = vocabulary;
	if (c === null || c === undefined) return [];
	if (!isPlainObject(c))
		return [{ loc, msg: 'value is not a valid dict', type: 'type_error.dict' }];
	const issues: Issue[] = [];
	if (c.negated !== undefined && typeof c.negated !== 'boolean') {
		issues.push({
			loc: [...loc, 'negated'],
			msg: 'value could not be parsed to a boolean',
			type: 'type_error.bool',
		});
	}
	if (c.disabled !== undefined && typeof c.disabled !== 'boolean') {
		issues.push({
			loc: [...loc, 'disabled'],
			msg: 'value could not be parsed to a boolean',
			type: 'type_error.bool',
		});
	}
	if (c.conditions !== undefined && c.conditions !== null) {
		if (!Array.isArray(c.conditions)) {
			issues.push({
				loc: [...loc, 'conditions'],
				msg: 'value is not a valid list',
				type: 'type_error.list',
			});
		} else {
			c.conditions.forEach((sub, i) =>
				issues.push(...validateCondition(sub, [...loc, 'conditions', i], vocabulary)),
			);
		}
		const comb = c.combinator ?? 'and';
		if (typeof comb !== 'string' || !combinators.includes(comb.toLowerCase())) {
			issues.push({
				loc: [...loc, 'combinator'],
				msg: enumMsg(combinators),
				type: 'type_error.enum',
			});
		}
		return issues;
	}
	if (c.field === undefined && c.operator === undefined && c.combinator === undefined)
		return issues; // `{}` matches all
	if (c.combinator !== undefined && c.field === undefined) {
		// A group without `conditions`: check the combinator, match everything.
		if (typeof c.combinator !== 'string' || !combinators.includes(c.combinator.toLowerCase())) {
			issues.push({
				loc: [...loc, 'combinator'],
				msg: enumMsg(combinators),
				type: 'type_error.enum',
			});
		}
		return issues;
	}
	if (typeof c.field !== 'string' || c.field === '') {
		issues.push({
			loc: [...loc, 'field'],
			msg: c.field === undefined ? 'field required' : 'str type expected',
			type: c.field === undefined ? 'value_error.missing' : 'type_error.str',
		});
	}
	if (typeof c.operator !== 'string' || !operators.includes(c.operator)) {
		issues.push({
			loc: [...loc, 'operator'],
			msg: c.operator === undefined ? 'field required' : enumMsg(operators),
			type: c.operator === undefined ? 'value_error.missing' : 'type_error.enum',
		});
	} else if (c.operator === 'in' && !Array.isArray(c.value)) {
		issues.push({
			loc: [...loc, 'value'],
			msg: 'value is not a valid list',
			type: 'type_error.list',
		});
	}
	return issues;
}

function evaluateLeaf(c: Condition, item: Record<string, unknown>, o: EvalOptions): boolean {
	const actual = resolveField(item, c.field as string);
	const expected = c.value;
	const strict = o.strictTypes === true;
	switch (c.operator) {
		case '==':
			return valuesEqual(actual, expected, strict);
		case '!=':
			return !valuesEqual(actual, expected, strict);
		case '<':
		case '<=':
		case '>':
		case '>=': {
			// Ordering against a missing value is false, as in SQL.
			if (actual === null || actual === undefined || expected === null || expected === undefined)
				return false;
			if (strict && !sameJsonType(actual, expected)) return false;
			const d = compareValues(actual, expected);
			if (c.operator === '<') return d < 0;
			if (c.operator === '<=') return d <= 0;
			if (c.operator === '>') return d > 0;
			return d >= 0;
		}
		case 'in':
			return Array.isArray(expected) && expected.some((v) => valuesEqual(actual, v, strict));
		case 'contains':
			if (typeof actual === 'string') {
				if (strict && typeof expected !== 'string') return false;
				return expected !== null && expected !== undefined && actual.includes(String(expected));
			}
			if (Array.isArray(actual)) return actual.some((v) => valuesEqual(v, expected, strict));
			return false;
		default:
			return false;
	}
}

/** Evaluates a validated condition; disabled nodes are skipped and an empty group matches everything. */
export function evaluateCondition(
	c: Condition | null | undefined,
	item: Record<string, unknown>,
	o: EvalOptions = {},
): boolean {
	if (!c || c.disabled) return true;
	let result: boolean;
	if (Array.isArray(c.conditions) || (c.combinator !== undefined && c.field === undefined)) {
		const active = (c.conditions ?? []).filter((sub) => sub && !sub.disabled);
		if (active.length === 0) result = true;
		else if ((c.combinator ?? 'and').toLowerCase() === 'or')
			result = active.some((sub) => evaluateCondition(sub, item, o));
		else result = active.every((sub) => evaluateCondition(sub, item, o));
	} else {
		result = typeof c.field === 'string' ? evaluateLeaf(c, item, o) : true;
	}
	return c.negated ? !result : result;
}

export function validateSorts(sorts: unknown, loc: Loc): Issue[] {
	if (sorts === null || sorts === undefined) return [];
	if (!Array.isArray(sorts))
		return [{ loc, msg: 'value is not a valid list', type: 'type_error.list' }];
	const issues: Issue[] = [];
	sorts.forEach((s, i) => {
		if (!isPlainObject(s)) {
			issues.push({ loc: [...loc, i], msg: 'value is not a valid dict', type: 'type_error.dict' });
			return;
		}
		if (typeof s.field !== 'string' || s.field === '') {
			issues.push({
				loc: [...loc, i, 'field'],
				msg: 'field required',
				type: 'value_error.missing',
			});
		}
		if (
			s.direction !== undefined &&
			s.direction !== null &&
			!(DIRECTIONS as readonly unknown[]).includes(s.direction)
		) {
			issues.push({
				loc: [...loc, i, 'direction'],
				msg: enumMsg(DIRECTIONS),
				type: 'type_error.enum',
			});
		}
	});
	return issues;
}
