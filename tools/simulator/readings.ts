// Readings of the spec's open points ("not shown", or two rules that disagree). The `lenient` profile takes the
// friendly reading of each (the simulator's historical behaviour); `strict` takes the unfriendly one, so a client
// that passes against both is correct under every reading. Each reading can also be set alone and then overrides
// the profile. The table in README.md beside this file gives the spec text behind each one.

export type Profile = 'lenient' | 'strict';

export interface Readings {
	/** Spec 4.2 rule 9. `replace`: PATCH (single and batch) sets `fields` to exactly the object sent (title required). */
	patchFields: 'merge' | 'replace';
	/** Spec 4.2 rule 1 vs 4.5 rule 1. `replace`: PUT /tasks/{uid} on an existing uid applies the body like PUT batch. */
	putExisting: 'noop' | 'replace';
	/** Spec 4.2 rule 1 ("likewise a create-or-update"). `noop`: PUT /tasks/batch leaves existing tasks as stored. */
	batchPutExisting: 'replace' | 'noop';
	/** Spec 4.2 rule 2 / 2.1. `replace`: POST with the uid of an existing task or comment overwrites it (200), not 409/422. */
	postExisting: 'conflict' | 'replace';
	/** Spec 8 ("batch size ... limits: not shown"). Largest batch accepted. */
	maxBatchSize: number;
	/** Spec 7/8. `413`: a too-large batch is a text/plain 413 that does not state the limit. */
	batchTooLarge: '422' | '413';
	/** Spec 4.2 rule 3. `customFields`: every GET /tasks parameter but limit, cursor, expand filters `fields[name]`. */
	listParams: 'honour' | 'customFields';
	/** facts.md ("No cursor is documented for it"). `none`: POST /tasks/query has no cursors, one page only. */
	queryPaging: 'cursor' | 'none';
	/** Spec 4.3 (limit is a body property). `body`: POST /tasks/query ignores a query-string `limit`. */
	queryLimitFrom: 'queryOrBody' | 'body';
	/** Spec 8 / facts.md (maximum `limit` not shown; a server may clamp). Largest POST /tasks/query page, clamped silently. */
	queryMaxLimit: number;
	/** Spec 2.3 ("No type validation is done"). `strict`: query conditions compare JSON types (1 is not "1"). */
	typeComparison: 'loose' | 'strict';
	/** Spec 4.2 rule 8 (batch bodies not shown). `reject`: the same uid twice in one batch is a 422, nothing written. */
	duplicateUids: 'inOrder' | 'reject';
	/** Spec 2.2 ("not accepted in bodies"). `reject`: unknown or read-only task body keys are a 422 naming them. */
	unknownKeys: 'ignore' | 'reject';
	/** Spec 2.2 (updated_at semantics not shown). `everyWrite`: every accepted write moves updated_at. */
	updatedAt: 'onChange' | 'everyWrite';
	/** Spec 2.2 / 4.2 (batch semantics not shown). `perBatch`: one updated_at for every task written by a batch. */
	batchStamp: 'perItem' | 'perBatch';
	/** Spec 7 ("Shape of the error response body: not shown"). `varied`: 422 detail string, {error:{message}}, text. */
	errorBodies: 'json' | 'varied';
	/** Spec 4.3 (only `==` and `and` shown). `documented`: any other query operator or combinator is a 422. */
	queryOperators: 'all' | 'documented';
	/** Spec 2.2 (`updated_at` is in the create/update body; what a write of it does: not shown). `body`: it is kept. */
	updatedAtFrom: 'server' | 'body';
	/** Spec 2.2 (`internal_created_at`, `internal_updated_at`: "date-time or null"). `null`: always null. */
	internalStamps: 'filled' | 'null';
}

export type ReadingName = keyof Readings;

export const LENIENT_READINGS: Readonly<Readings> = Object.freeze({
	patchFields: 'merge',
	putExisting: 'noop',
	batchPutExisting: 'replace',
	postExisting: 'conflict',
	maxBatchSize: 1000,
	batchTooLarge: '422',
	listParams: 'honour',
	queryPaging: 'cursor',
	queryLimitFrom: 'queryOrBody',
	queryMaxLimit: 100,
	typeComparison: 'loose',
	duplicateUids: 'inOrder',
	unknownKeys: 'ignore',
	updatedAt: 'onChange',
	batchStamp: 'perItem',
	errorBodies: 'json',
	queryOperators: 'all',
	updatedAtFrom: 'server',
	internalStamps: 'filled',
});

export const STRICT_READINGS: Readonly<Readings> = Object.freeze({
	patchFields: 'replace',
	putExisting: 'replace',
	batchPutExisting: 'replace',
	postExisting: 'replace',
	maxBatchSize: 50,
	batchTooLarge: '413',
	listParams: 'customFields',
	queryPaging: 'none',
	queryLimitFrom: 'body',
	queryMaxLimit: 50,
	typeComparison: 'strict',
	duplicateUids: 'reject',
	unknownKeys: 'reject',
	updatedAt: 'everyWrite',
	batchStamp: 'perBatch',
	errorBodies: 'varied',
	// Not the unfriendly value: with `==` alone nothing can be paged without a cursor or polled by time, so every
	// test of those would only see the 422. Tests of what must still work (bulk reads by uid) set it alone.
	queryOperators: 'all',
	updatedAtFrom: 'body',
	internalStamps: 'null',
});

/** Allowed values of each reading; `number` for the numeric ones (positive integers). */
export const READING_VALUES: { readonly [K in ReadingName]: readonly string[] | 'number' } = {
	patchFields: ['merge', 'replace'],
	putExisting: ['noop', 'replace'],
	batchPutExisting: ['replace', 'noop'],
	postExisting: ['conflict', 'replace'],
	maxBatchSize: 'number',
	batchTooLarge: ['422', '413'],
	listParams: ['honour', 'customFields'],
	queryPaging: ['cursor', 'none'],
	queryLimitFrom: ['queryOrBody', 'body'],
	queryMaxLimit: 'number',
	typeComparison: ['loose', 'strict'],
	duplicateUids: ['inOrder', 'reject'],
	unknownKeys: ['ignore', 'reject'],
	updatedAt: ['onChange', 'everyWrite'],
	batchStamp: ['perItem', 'perBatch'],
	errorBodies: ['json', 'varied'],
	queryOperators: ['all', 'documented'],
	updatedAtFrom: ['server', 'body'],
	internalStamps: ['filled', 'null'],
};

export const READING_NAMES = Object.keys(READING_VALUES) as ReadingName[];
export const PROFILES: readonly Profile[] = ['lenient', 'strict'];

/** The options that decide the effective readings (a structural subset of SimulatorOptions). */
export interface ReadingSource {
	profile?: Profile;
	readings?: Partial<Readings>;
	maxBatchSize?: number;
	maxPageSize?: number;
}

/**
 * Effective readings: the profile's values (lenient by default), then the explicit `maxBatchSize` / `maxPageSize`
 * options, then each reading set in `readings`. Under lenient, `queryMaxLimit` follows `maxPageSize` (the historical
 * behaviour); under strict it is min(50, maxPageSize).
 */
export function readingsFor(options: ReadingSource = {}): Readings {
	const strict = options.profile === 'strict';
	const base: Readings = { ...(strict ? STRICT_READINGS : LENIENT_READINGS) };
	const maxPage = Math.max(1, options.maxPageSize ?? 100);
	base.queryMaxLimit = strict ? Math.min(STRICT_READINGS.queryMaxLimit, maxPage) : maxPage;
	if (options.maxBatchSize !== undefined && options.maxBatchSize !== null)
		base.maxBatchSize = options.maxBatchSize;
	const out = base as unknown as Record<string, unknown>;
	for (const [k, v] of Object.entries(options.readings ?? {})) {
		if (v !== undefined && v !== null && k in READING_VALUES) out[k] = v;
	}
	return base;
}

/** Problems with a profile and a set of reading overrides (null/undefined values are allowed: they clear a reading). */
export function checkReadings(profile: unknown, readings: unknown): string[] {
	const errors: string[] = [];
	if (
		profile !== undefined &&
		profile !== null &&
		!(PROFILES as readonly unknown[]).includes(profile)
	) {
		errors.push(`profile must be one of ${PROFILES.join(', ')} (got ${JSON.stringify(profile)})`);
	}
	if (readings === undefined || readings === null) return errors;
	if (typeof readings !== 'object' || Array.isArray(readings)) {
		errors.push('readings must be an object of reading name to value');
		return errors;
	}
	for (const [k, v] of Object.entries(readings as Record<string, unknown>)) {
		if (!(k in READING_VALUES)) {
			errors.push(`unknown reading ${JSON.stringify(k)}; known: ${READING_NAMES.join(', ')}`);
			continue;
		}
		if (v === undefined || v === null) continue;
		const allowed = READING_VALUES[k as ReadingName];
		if (allowed === 'number') {
			if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
				errors.push(`reading ${k} must be a positive integer (got ${JSON.stringify(v)})`);
		} else if (typeof v !== 'string' || !allowed.includes(v)) {
			errors.push(`reading ${k} must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`);
		}
	}
	return errors;
}

/** Parses `name=value` (the CLI's `--reading`), numbers for the numeric readings. Throws on a bad name or value. */
export function parseReadingAssignment(text: string): Partial<Readings> {
	const eq = text.indexOf('=');
	if (eq <= 0) throw new Error(`--reading needs name=value (got ${JSON.stringify(text)})`);
	const name = text.slice(0, eq).trim();
	const raw = text.slice(eq + 1).trim();
	const numeric = READING_VALUES[name as ReadingName] === 'number';
	if (numeric && !/^\d+$/.test(raw))
		throw new Error(`reading ${name} must be a positive integer (got ${JSON.stringify(raw)})`);
	const value: unknown = numeric ? Number(raw) : raw;
	const errors = checkReadings(undefined, { [name]: value });
	if (errors.length) throw new Error(errors.join('; '));
	return { [name]: value } as Partial<Readings>;
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers for the readings that change bodies
// ---------------------------------------------------------------------------------------------------------------

/** Response-only task keys (section 2.2): read-only, "not accepted in bodies". */
export const TASK_READ_ONLY_KEYS: ReadonlySet<string> = new Set([
	'internal_created_at',
	'internal_updated_at',
	'queue_time',
	'queue_time_business',
	'work_time',
	'work_time_business',
	'incremental_work_time',
	'incremental_work_time_business',
	'resolution_time',
	'resolution_time_business',
	'wait_time',
	'wait_time_business',
	'num_children',
	'num_children_done',
	'sla_breach_at',
	'sla_breach_business_at',
	'review_status',
	'task_type',
	'played_at',
	'assignee',
	'parent',
	'children',
	'comments',
]);

export interface ExtraKeyIssue {
	loc: Array<string | number>;
	msg: string;
	type: string;
}

/** `unknownKeys: reject`: one issue per body key that is not in the accepted body list. */
export function extraKeyIssues(
	body: Record<string, unknown>,
	accepted: Record<string, unknown>,
	loc: Array<string | number>,
): ExtraKeyIssue[] {
	return Object.keys(body)
		.filter((k) => !Object.prototype.hasOwnProperty.call(accepted, k))
		.map((k) => ({
			loc: [...loc, k],
			msg: TASK_READ_ONLY_KEYS.has(k)
				? 'read-only field is not accepted in a body'
				: 'extra fields not permitted',
			type: 'value_error.extra',
		}));
}

/** An error body sent as text/plain instead of JSON. */
export class PlainText {
	constructor(readonly text: string) {}
}

/**
 * `errorBodies: varied`: 422 becomes `{"detail": "<one string>"}`, the other 4xx `{"error": {"message"}}`, 429 and 5xx
 * a text/plain body. Bodies of other shapes are returned unchanged.
 */
export function variedErrorBody(status: number, body: unknown): unknown {
	if (body instanceof PlainText || typeof body !== 'object' || body === null) return body;
	const b = body as Record<string, unknown>;
	const message = typeof b.message === 'string' ? b.message : undefined;
	if (status === 422 && Array.isArray(b.detail)) {
		const text = b.detail
			.map((d) => {
				const i = (d ?? {}) as { loc?: unknown; msg?: unknown };
				const where = Array.isArray(i.loc) ? i.loc.join('.') : '';
				return where ? `${where}: ${String(i.msg)}` : String(i.msg);
			})
			.join('; ');
		return { detail: text };
	}
	if (message === undefined) return body;
	if (status === 429 || status >= 500) return new PlainText(message);
	if (status >= 400) return { error: { message } };
	return body;
}
