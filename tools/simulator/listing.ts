// Reading many tasks: GET /tasks (filters, custom fields, search) and POST /tasks/query (condition trees, sorts).
import {
	DOCUMENTED_OPERATORS,
	evaluateCondition,
	resolveField,
	validateCondition,
	validateSorts,
	type Condition,
	type Issue,
	type Loc,
	type Sort,
} from './query';
import {
	STATUSES,
	TASK_EXPANDS,
	enumIssue,
	isPlainObject,
	isUuid,
	issue,
	msgIssue,
	parseDate,
	unprocessable,
} from './helpers';
import { paginate, type Ordering } from './pagination';
import type { Store } from './store';
import { renderTasks } from './tasks';
import type { Page, Task } from './types';
import { expandParams, parseBoolParam, parseExpand } from './validation';

export const clampLimit = (
	store: Store,
	raw: unknown,
	loc: Loc,
	maxLimit = store.opts.maxPageSize ?? 100,
): number => {
	const max = Math.max(1, maxLimit);
	if (raw === undefined || raw === null || raw === '') return Math.min(50, max);
	const n = typeof raw === 'string' ? Number(raw) : raw;
	if (typeof n !== 'number' || !Number.isInteger(n)) throw unprocessable([msgIssue(loc, 'int')]);
	if (n < 1)
		throw unprocessable([
			issue(loc, 'ensure this value is greater than or equal to 1', 'value_error.number.not_ge'),
		]);
	return Math.min(n, max);
};

export const taskOrdering = (orderBy: 'created_at' | 'updated_at'): Ordering<Task> => ({
	sig: `tasks:${orderBy}`,
	key: (t) => [t[orderBy], t.uid],
	dirs: [1, 1],
});

export const searchText = (t: Task): string =>
	Object.values(t.fields ?? {})
		.map((v) =>
			v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v),
		)
		.join('\n')
		.toLowerCase();

const RESERVED = new Set([
	'limit',
	'cursor',
	'status',
	'assignee_uid',
	'archived',
	'order_by',
	'created_at_after',
	'updated_at_after',
	'search',
	'expand',
	'expand[]',
]);

// Reading `listParams: customFields`: the only names spec 4.2 rule 3 shows are expand, limit and cursor; every other
// parameter is an equality filter on the custom field of its name (compared as strings, like the lenient filters).
const PAGING_PARAMS = new Set(['limit', 'cursor', 'expand', 'expand[]']);

export const matchesCustom = (t: Task, custom: Map<string, string[]>): boolean => {
	for (const [name, values] of custom) {
		const v = t.fields?.[name];
		if (v === undefined || v === null) return false;
		const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
		if (!values.includes(s)) return false;
	}
	return true;
};

export const listTasks = (store: Store, sp: URLSearchParams): Page<Task> => {
	const limit = clampLimit(store, sp.get('limit'), ['query', 'limit']);
	const expand = parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']);
	if (store.R.listParams === 'customFields') {
		const custom = new Map<string, string[]>();
		for (const k of new Set(sp.keys())) if (!PAGING_PARAMS.has(k)) custom.set(k, sp.getAll(k));
		const filtered = [...store.tasks.values()].filter(
			(t) => !t.archived && matchesCustom(t, custom),
		);
		const page = paginate(
			filtered,
			taskOrdering('created_at'),
			limit,
			sp.get('cursor') ?? undefined,
		);
		return { items: renderTasks(store, page.items, expand), meta: page.meta };
	}
	const issues: Issue[] = [];
	const statuses = sp.getAll('status').filter((s) => s !== '');
	statuses.forEach((s) => {
		if (!(STATUSES as readonly string[]).includes(s))
			issues.push(enumIssue(['query', 'status'], STATUSES));
	});
	const assignees = sp.getAll('assignee_uid').filter((s) => s !== '');
	assignees.forEach((a) => {
		if (!isUuid(a)) issues.push(msgIssue(['query', 'assignee_uid'], 'uuid'));
	});
	const orderBy = sp.get('order_by') || 'created_at';
	if (orderBy !== 'created_at' && orderBy !== 'updated_at')
		issues.push(enumIssue(['query', 'order_by'], ['created_at', 'updated_at']));
	const after: Record<string, number> = {};
	for (const name of ['created_at_after', 'updated_at_after']) {
		const v = sp.get(name);
		if (v === null || v === '') continue;
		const d = parseDate(v);
		if (d) after[name] = Date.parse(d);
		else issues.push(msgIssue(['query', name], 'date'));
	}
	if (issues.length) throw unprocessable(issues);
	const archived = parseBoolParam(sp.get('archived'), ['query', 'archived'], false);
	const custom = new Map<string, string[]>();
	for (const k of new Set(sp.keys())) if (!RESERVED.has(k)) custom.set(k, sp.getAll(k));
	const assigneeSet = new Set(assignees.map((a) => a.toLowerCase()));
	const filtered = [...store.tasks.values()].filter((t) => {
		if (t.archived !== archived) return false;
		if (statuses.length && !statuses.includes(t.status)) return false;
		if (assigneeSet.size && !(t.assignee_uid && assigneeSet.has(t.assignee_uid))) return false;
		if (
			after.created_at_after !== undefined &&
			!(Date.parse(t.created_at) > after.created_at_after)
		)
			return false;
		if (
			after.updated_at_after !== undefined &&
			!(Date.parse(t.updated_at) > after.updated_at_after)
		)
			return false;
		return matchesCustom(t, custom);
	});
	const ordering = taskOrdering(orderBy as 'created_at' | 'updated_at');
	const search = (sp.get('search') ?? '').trim().toLowerCase();
	let candidates = filtered;
	if (search) {
		// Spec rule 4: the search looks at no more than 10 x limit items of the ordered set; pagination then
		// applies to what it found. Matches beyond that window are not returned.
		const window = paginate(filtered, ordering, 10 * limit, undefined).items;
		candidates = window.filter((t) => searchText(t).includes(search));
	}
	const page = paginate(candidates, ordering, limit, sp.get('cursor') ?? undefined);
	return { items: renderTasks(store, page.items, expand), meta: page.meta };
};

/** A condition tree without its conditions on the given fields (undefined when nothing is left). */
const without = (condition: unknown, fields: readonly string[]): unknown => {
	if (!isPlainObject(condition)) return condition;
	if (Array.isArray(condition.conditions)) {
		const kept = condition.conditions.map((c) => without(c, fields)).filter((c) => c !== undefined);
		return kept.length > 0 ? { ...condition, conditions: kept } : undefined;
	}
	return fields.includes(condition.field as string) ? undefined : condition;
};

/** The task's time fields: what `queryIgnores: ['time']` drops conditions on. */
const TIME_FIELDS = [
	'created_at',
	'updated_at',
	'internal_created_at',
	'internal_updated_at',
	'done_at',
	'started_at',
	'assigned_at',
];

/** Option `queryUnknownFields`: one issue per condition naming such a field. */
const unknownFieldIssues = (store: Store, condition: unknown, loc: Loc): Issue[] => {
	const unknown = store.opts.queryUnknownFields ?? [];
	if (unknown.length === 0 || !isPlainObject(condition)) return [];
	if (Array.isArray(condition.conditions))
		return condition.conditions.flatMap((c, i) =>
			unknownFieldIssues(store, c, [...loc, 'conditions', i]),
		);
	return typeof condition.field === 'string' && unknown.includes(condition.field)
		? [{ loc: [...loc, 'field'], msg: 'unknown field', type: 'value_error.unknown_field' }]
		: [];
};

/** Option `queryIgnores`: the query body as a server that ignores those parts reads it. */
const ignoredParts = (store: Store, body: unknown): unknown => {
	const ignores = store.opts.queryIgnores ?? [];
	if (!isPlainObject(body) || ignores.length === 0) return body;
	const read: Record<string, unknown> = { ...body };
	if (ignores.includes('uid')) read.condition = without(read.condition, ['uid']);
	if (ignores.includes('time')) read.condition = without(read.condition, TIME_FIELDS);
	if (ignores.includes('sorts')) delete read.sorts;
	return read;
};

export const queryTasks = (
	store: Store,
	sp: URLSearchParams,
	rawBody: unknown,
): Page<Task> | { items: Task[]; meta: { limit: number; total_count: number } } => {
	const body = ignoredParts(store, rawBody === undefined || rawBody === null ? {} : rawBody);
	if (!isPlainObject(body)) throw unprocessable([msgIssue(['body'], 'dict')]);
	const issues: Issue[] = [
		...validateCondition(
			body.condition,
			['body', 'condition'],
			store.R.queryOperators === 'documented' ? DOCUMENTED_OPERATORS : undefined,
		),
		...validateSorts(body.sorts, ['body', 'sorts']),
		...unknownFieldIssues(store, body.condition, ['body', 'condition']),
	];
	if (body.expand !== undefined && body.expand !== null && !Array.isArray(body.expand))
		issues.push(msgIssue(['body', 'expand'], 'list'));
	if (issues.length) throw unprocessable(issues);
	// Readings queryLimitFrom (body only: the query-string limit is ignored) and queryMaxLimit (silent clamp).
	const fromQuery = store.R.queryLimitFrom === 'queryOrBody' && sp.has('limit');
	const limit = clampLimit(
		store,
		fromQuery ? sp.get('limit') : (body.limit as unknown),
		fromQuery ? ['query', 'limit'] : ['body', 'limit'],
		store.R.queryMaxLimit,
	);
	const expand = [
		...parseExpand((body.expand as unknown[] | null | undefined) ?? [], TASK_EXPANDS, [
			'body',
			'expand',
		]),
		...parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']),
	].filter((v, i, a) => a.indexOf(v) === i);
	const archived = parseBoolParam(sp.get('archived'), ['query', 'archived'], false);
	const condition = (body.condition ?? undefined) as Condition | undefined;
	const strictTypes = store.R.typeComparison === 'strict';
	const matched = [...store.tasks.values()].filter(
		(t) =>
			t.archived === archived &&
			evaluateCondition(condition, t as unknown as Record<string, unknown>, { strictTypes }),
	);
	const sorts = ((body.sorts as Sort[] | null | undefined) ?? []).map((s) => ({
		field: s.field as string,
		dir: s.direction === 'descending' ? -1 : 1,
	}));
	const ordering: Ordering<Task> = {
		sig: `query:${JSON.stringify(sorts)}`,
		key: (t) => [
			...sorts.map((s) => resolveField(t as unknown as Record<string, unknown>, s.field)),
			t.created_at,
			t.uid,
		],
		dirs: [...sorts.map((s) => s.dir), 1, 1],
	};
	if (store.R.queryPaging === 'none') {
		// facts.md: no cursor is documented for the query endpoint. One page, a cursor parameter is ignored.
		const page = paginate(matched, ordering, limit, undefined);
		return {
			items: renderTasks(store, page.items, expand),
			meta: { limit, total_count: page.meta.total_count },
		};
	}
	const page = paginate(matched, ordering, limit, sp.get('cursor') ?? undefined);
	return { items: renderTasks(store, page.items, expand), meta: page.meta };
};
