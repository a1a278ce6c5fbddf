// Simulator of the Task Backlog Service (backlog-api.md, filled in with facts.md and our own choices where the spec
// says "not shown"). A real HTTP server on 127.0.0.1 built on node:http only, so it can run inside jest, in the demo
// and as a benchmark target without any dependency.
import * as http from 'node:http';
import * as https from 'node:https';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { existsSync, promises as fsp, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

import {
	compareValues,
	deepEqual,
	evaluateCondition,
	resolveField,
	sortable,
	validateCondition,
	validateSorts,
	type Condition,
	type Issue,
	type Loc,
	type Sort,
} from './query';
import {
	PlainText,
	checkReadings,
	extraKeyIssues,
	readingsFor,
	variedErrorBody,
	type Profile,
	type Readings,
} from './readings';

export type { Condition, Issue, Sort } from './query';
export { LENIENT_READINGS, STRICT_READINGS, READING_NAMES, readingsFor, type Profile, type Readings } from './readings';

// ---------------------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------------------

export type TaskStatus = 'TODO' | 'STARTED' | 'DONE';

export interface TaskFields {
	title?: string;
	url?: string;
	[key: string]: unknown;
}

export interface User {
	uid: string;
	archived: boolean;
	role: string;
	email: string;
	first_name: string;
	last_name: string;
	skills: string[];
	legacy_data: Record<string, unknown>;
	created_at: string;
	updated_at: string;
	is_registered: boolean;
}

export interface TextBlock {
	id?: string;
	type?: string;
	props?: Record<string, unknown>;
	content?: unknown[];
	children?: TextBlock[];
}

export interface Task {
	uid: string;
	archived: boolean;
	status: TaskStatus;
	legacy_data: Record<string, unknown>;
	skills: string[];
	queue_uid?: string | null;
	assignee_uid: string | null;
	participants: Record<string, unknown>;
	case_uid: string | null;
	parent_uid: string | null;
	due_at: string;
	snooze_expires_at: string | null;
	fields: TaskFields;
	metadata_form_uid: string | null;
	form_data: Record<string, unknown>;
	form_type: string | null;
	assigned_at: string | null;
	started_at: string | null;
	done_at: string | null;
	created_at: string;
	updated_at: string;
	assignee_updated_by: string | null;
	queue_updated_by: string | null;
	is_assigned_player: boolean | null;
	internal_created_at: string | null;
	internal_updated_at: string | null;
	external_created_at: string | null;
	external_updated_at: string | null;
	external_status: TaskStatus | null;
	external_status_updated_at: string | null;
	external_assignee_uid: string | null;
	queue_time: number | null;
	queue_time_business: number | null;
	work_time: number | null;
	work_time_business: number | null;
	incremental_work_time: number | null;
	incremental_work_time_business: number | null;
	resolution_time: number | null;
	resolution_time_business: number | null;
	num_children: number;
	num_children_done: number;
	// Present only when expanded.
	assignee?: User | null;
	parent?: Task | null;
	children?: Task[] | null;
	comments?: TaskComment[] | null;
}

/** Create/update body of a task (section 2.2); every property optional at schema level. */
export interface TaskBody {
	uid?: string;
	archived?: boolean;
	status?: TaskStatus;
	status_global?: 'TODO' | 'DONE' | null;
	legacy_data?: Record<string, unknown>;
	skills?: string[];
	queue_uid?: string | null;
	assignee_uid?: string | null;
	assignee_email?: string | null;
	participants?: Record<string, unknown>;
	case_uid?: string | null;
	parent_uid?: string | null;
	fields?: TaskFields;
	due_at?: string;
	snooze_expires_at?: string | null;
	metadata_form_uid?: string | null;
	form_data?: Record<string, unknown>;
	form_type?: string | null;
	assigned_at?: string | null;
	started_at?: string | null;
	done_at?: string | null;
	created_at?: string;
	updated_at?: string;
	assignee_updated_by?: string | null;
	queue_updated_by?: string | null;
	is_assigned_player?: boolean | null;
	external_created_at?: string | null;
	external_updated_at?: string | null;
	external_status?: TaskStatus | null;
	external_status_updated_at?: string | null;
	external_assignee_uid?: string | null;
}

export interface TaskComment {
	uid: string;
	archived: boolean;
	task_uid: string;
	author_uid: string | null;
	text: string;
	blocks: TextBlock[];
	created_at: string;
	updated_at: string;
	task?: Task;
	author?: User | null;
}

export interface CommentBody {
	uid?: string;
	archived?: boolean;
	task_uid?: string;
	author_uid?: string | null;
	text?: string;
	blocks?: TextBlock[];
	created_at?: string;
	updated_at?: string;
}

export interface PageMeta {
	limit: number;
	self_cursor: string;
	prev_cursor: string;
	next_cursor: string;
	total_count: number;
}

export interface Page<T> {
	items: T[];
	meta: PageMeta;
}

export interface FaultOptions {
	error5xxRate?: number;
	rateLimitRate?: number;
	retryAfterRate?: number;
	retryAfterSeconds?: number;
	resetRate?: number;
	/**
	 * Fraction of the requests that got no other fault whose work is done (and kept) before the connection is cut:
	 * the client never learns it succeeded, the nasty case for duplicates. Drawn (a seventh draw) only when set, so
	 * seeded runs without it are unchanged.
	 */
	resetAfterEffectRate?: number;
	latencyMs?: [number, number];
	only?: (req: { method: string; path: string }) => boolean;
}

/** One scripted failure, answered to the next matching request instead of its real answer (no side effect). */
export interface ScriptedFault {
	/** HTTP status to answer, or 'reset' to destroy the socket without an answer. */
	status: number | 'reset';
	/** Seconds to put in a Retry-After header. */
	retryAfter?: number;
	body?: unknown;
	/** Do the request's work first, then cut the connection: the client never learns it succeeded. */
	afterEffect?: boolean;
	/** Which requests it applies to; any API request when absent. */
	when?: (req: { method: string; path: string }) => boolean;
}

export interface WebhookTarget {
	url: string;
	secret?: string;
	events?: string[];
	signatureHeader?: string;
	timestampHeader?: string;
	signTimestamp?: boolean;
}

export interface SimulatorOptions {
	port?: number;
	tokens?: string[];
	requestsPerWindow?: number;
	windowMs?: number;
	/** When true, the window limiter's 429 carries `Retry-After` (seconds to the end of the window). Default false. */
	retryAfterOnLimit?: boolean;
	maxPageSize?: number;
	/** Largest batch; default 1000 under the lenient profile, 50 under strict. Overridden by `readings.maxBatchSize`. */
	maxBatchSize?: number;
	/**
	 * How to read the spec's open points: `lenient` (default, the friendly reading of each) or `strict` (the unfriendly
	 * one). See readings.ts and the table in README.md.
	 */
	profile?: Profile;
	/**
	 * Readings set one by one; each overrides the profile. `configure()` merges these into the current ones (a key set
	 * to null or undefined drops that override; `readings: undefined` drops them all).
	 */
	readings?: Partial<Readings>;
	faults?: FaultOptions;
	webhooks?: WebhookTarget[];
	persistFile?: string;
	seed?: number;
}

export interface LoggedRequest {
	method: string;
	/** Path relative to the `/api/v1` prefix (e.g. `/tasks/batch`); the full path for requests outside it. */
	path: string;
	query: Record<string, string | string[]>;
	/** HTTP status sent; 0 while in flight or when the socket was reset by a fault. */
	status: number;
	at: number;
	headers: Record<string, string | string[] | undefined>;
	body?: unknown;
	/** Injected fault: 'reset', 'error-500' | 'error-502' | 'error-503', 'rate-limit', 'reset-after-effect'. */
	fault?: string;
}

export interface Delivery {
	url: string;
	status: number | 'error';
	event: unknown;
}

export interface WebhookEvent {
	type: string;
	data: { task: Task };
	info: Record<string, unknown>;
	sentAt: string;
}

export interface Simulator {
	url: string;
	port: number;
	requests: LoggedRequest[];
	tasks: Map<string, Task>;
	comments: Map<string, TaskComment>;
	deliveries: Delivery[];
	/** Current effective options (read-only view). */
	readonly options: Readonly<SimulatorOptions>;
	configure(options: Partial<SimulatorOptions>): void;
	reset(): void;
	seedTasks(n: number, make?: (i: number) => Partial<TaskBody>): Task[];
	clearRequests(): void;
	flushDeliveries(): Promise<void>;
	/** Queues failures answered, in order, to the next matching requests (for "a 503 twice then 200"). */
	failNext(...faults: ScriptedFault[]): void;
	stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Constants and small helpers
// ---------------------------------------------------------------------------------------------------------------

export const API_PREFIX = '/api/v1';
export const TASK_EXPANDS = ['comments', 'children', 'parent', 'assignee'] as const;
export const COMMENT_EXPANDS = ['task', 'author'] as const;
export const STATUSES: readonly TaskStatus[] = ['TODO', 'STARTED', 'DONE'];
const STATUS_GLOBAL = ['TODO', 'DONE'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_RE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i;
const USER_EPOCH = '2024-01-01T00:00:00.000Z';
const MAX_BODY_BYTES = 50 * 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

export function isUuid(v: unknown): v is string {
	return typeof v === 'string' && UUID_RE.test(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseDate(v: unknown): string | undefined {
	if (typeof v !== 'string' || !DATE_RE.test(v.trim())) return undefined;
	const ms = Date.parse(v.trim());
	return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Name-based UUID (v5 layout over SHA-1), so a made-up user is the same across runs. */
export function uuidFromName(name: string): string {
	const h = createHash('sha1').update(name).digest();
	h[6] = (h[6] & 0x0f) | 0x50;
	h[8] = (h[8] & 0x3f) | 0x80;
	const x = h.subarray(0, 16).toString('hex');
	return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: unknown,
		readonly headers: Record<string, string> = {},
		/** A body given by the caller (scripted fault): sent as is, never reshaped by `errorBodies`. */
		readonly verbatim = false,
	) {
		super(typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : `HTTP ${status}`);
	}
}

function httpError(status: number, message: string): HttpError {
	return new HttpError(status, { message });
}

function unprocessable(issues: Issue[]): HttpError {
	return new HttpError(422, { detail: issues });
}

function issue(loc: Loc, msg: string, type: string): Issue {
	return { loc, msg, type };
}

const MSG = {
	missing: ['field required', 'value_error.missing'],
	none: ['none is not an allowed value', 'type_error.none.not_allowed'],
	uuid: ['value is not a valid uuid', 'type_error.uuid'],
	bool: ['value could not be parsed to a boolean', 'type_error.bool'],
	dict: ['value is not a valid dict', 'type_error.dict'],
	list: ['value is not a valid list', 'type_error.list'],
	str: ['str type expected', 'type_error.str'],
	int: ['value is not a valid integer', 'type_error.integer'],
	date: ['invalid datetime format', 'value_error.datetime'],
} as const;

function enumIssue(loc: Loc, values: readonly string[]): Issue {
	return issue(loc, `value is not a valid enumeration member; permitted: ${values.map((v) => `'${v}'`).join(', ')}`, 'type_error.enum');
}

function msgIssue(loc: Loc, kind: keyof typeof MSG): Issue {
	return issue(loc, MSG[kind][0], MSG[kind][1]);
}

/** Counts logged requests by method ('*' for any) and path (exact string or RegExp), e.g. countRequests(sim, 'PUT', '/tasks/batch'). */
export function countRequests(sim: Pick<Simulator, 'requests'>, method: string, pathPattern: string | RegExp): number {
	return sim.requests.filter(
		(r) =>
			(method === '*' || r.method === method.toUpperCase()) &&
			(typeof pathPattern === 'string' ? r.path === pathPattern : pathPattern.test(r.path)),
	).length;
}

// ---------------------------------------------------------------------------------------------------------------
// Body validation (FastAPI-style 422 details)
// ---------------------------------------------------------------------------------------------------------------

type Kind =
	| 'uid'
	| 'uuidNullable'
	| 'bool'
	| 'boolNullable'
	| 'object'
	| 'fields'
	| 'uuidArray'
	| 'status'
	| 'statusNullable'
	| 'statusGlobal'
	| 'date'
	| 'dateNullable'
	| 'dateOptional'
	| 'stringNullable'
	| 'text'
	| 'blocks';

// Properties accepted in a task body. The internal_* timestamps, metrics, child counters and expansions are not
// listed, so they are dropped silently like any unknown key.
const TASK_BODY: Record<string, Kind> = {
	uid: 'uid',
	archived: 'bool',
	status: 'status',
	status_global: 'statusGlobal',
	legacy_data: 'object',
	skills: 'uuidArray',
	queue_uid: 'uuidNullable',
	assignee_uid: 'uuidNullable',
	assignee_email: 'stringNullable',
	participants: 'object',
	case_uid: 'uuidNullable',
	parent_uid: 'uuidNullable',
	fields: 'fields',
	due_at: 'date',
	snooze_expires_at: 'dateNullable',
	metadata_form_uid: 'uuidNullable',
	form_data: 'object',
	form_type: 'stringNullable',
	assigned_at: 'dateNullable',
	started_at: 'dateNullable',
	done_at: 'dateNullable',
	created_at: 'dateOptional',
	updated_at: 'dateOptional',
	assignee_updated_by: 'uuidNullable',
	queue_updated_by: 'uuidNullable',
	is_assigned_player: 'boolNullable',
	external_created_at: 'dateNullable',
	external_updated_at: 'dateNullable',
	external_status: 'statusNullable',
	external_status_updated_at: 'dateNullable',
	external_assignee_uid: 'uuidNullable',
};

const COMMENT_BODY: Record<string, Kind> = {
	uid: 'uid',
	archived: 'bool',
	task_uid: 'uid',
	author_uid: 'uuidNullable',
	text: 'text',
	blocks: 'blocks',
	created_at: 'dateOptional',
	updated_at: 'dateOptional',
};

type Clean = Record<string, unknown>;

function validateShape(spec: Record<string, Kind>, body: unknown, loc: Loc): { clean: Clean; issues: Issue[] } {
	const clean: Clean = {};
	const issues: Issue[] = [];
	if (!isPlainObject(body)) {
		issues.push(body === undefined || body === null ? msgIssue(loc, 'missing') : msgIssue(loc, 'dict'));
		return { clean, issues };
	}
	for (const [key, kind] of Object.entries(spec)) {
		if (!(key in body) || body[key] === undefined) continue;
		const v = body[key];
		const at = [...loc, key];
		const nullable = kind.endsWith('Nullable') || kind === 'statusGlobal';
		if (v === null) {
			// uid/created_at/updated_at set to null mean "not given"; the rest either accept null or refuse it.
			if (kind === 'uid' || kind === 'dateOptional') continue;
			if (nullable) clean[key] = null;
			else issues.push(msgIssue(at, 'none'));
			continue;
		}
		switch (kind) {
			case 'uid':
			case 'uuidNullable':
				if (isUuid(v)) clean[key] = v.toLowerCase();
				else issues.push(msgIssue(at, 'uuid'));
				break;
			case 'bool':
			case 'boolNullable':
				if (typeof v === 'boolean') clean[key] = v;
				else issues.push(msgIssue(at, 'bool'));
				break;
			case 'object':
			case 'fields':
				if (isPlainObject(v)) clean[key] = v;
				else issues.push(msgIssue(at, 'dict'));
				break;
			case 'uuidArray':
				if (!Array.isArray(v)) issues.push(msgIssue(at, 'list'));
				else {
					const bad = v.map((x, i) => (isUuid(x) ? -1 : i)).filter((i) => i >= 0);
					bad.forEach((i) => issues.push(msgIssue([...at, i], 'uuid')));
					if (!bad.length) clean[key] = v.map((x: string) => x.toLowerCase());
				}
				break;
			case 'status':
			case 'statusNullable':
				if (typeof v === 'string' && (STATUSES as readonly string[]).includes(v)) clean[key] = v;
				else issues.push(enumIssue(at, STATUSES));
				break;
			case 'statusGlobal':
				if (typeof v === 'string' && STATUS_GLOBAL.includes(v)) clean[key] = v;
				else issues.push(enumIssue(at, STATUS_GLOBAL));
				break;
			case 'date':
			case 'dateNullable':
			case 'dateOptional': {
				const d = parseDate(v);
				if (d) clean[key] = d;
				else issues.push(msgIssue(at, 'date'));
				break;
			}
			case 'stringNullable':
			case 'text':
				if (typeof v === 'string') clean[key] = v;
				else issues.push(msgIssue(at, 'str'));
				break;
			case 'blocks':
				if (!Array.isArray(v)) issues.push(msgIssue(at, 'list'));
				else {
					const bad = v.map((x, i) => (isPlainObject(x) ? -1 : i)).filter((i) => i >= 0);
					bad.forEach((i) => issues.push(msgIssue([...at, i], 'dict')));
					if (!bad.length) clean[key] = v;
				}
				break;
		}
	}
	return { clean, issues };
}

type Mode = 'create' | 'replace' | 'patch';

function titleIssue(fields: Record<string, unknown>, loc: Loc, required: boolean): Issue | undefined {
	const at = [...loc, 'fields', 'title'];
	if (!('title' in fields) || fields.title === undefined) return required ? msgIssue(at, 'missing') : undefined;
	const t = fields.title;
	if (t === null) return msgIssue(at, 'none');
	if (typeof t !== 'string') return msgIssue(at, 'str');
	if (t.trim() === '') return issue(at, 'ensure this value has at least 1 characters', 'value_error.any_str.min_length');
	return undefined;
}

/**
 * Validates a task body. `create` needs fields.title; `replace` (PUT batch over an existing task) needs it only when
 * fields are given, since they replace the whole object; `patch` only checks a title that is present.
 * `rejectUnknown` (reading `unknownKeys: reject`) makes keys outside the body list 422s instead of being dropped.
 */
export function validateTaskBody(body: unknown, loc: Loc, mode: Mode, rejectUnknown = false): { clean: Clean; issues: Issue[] } {
	const { clean, issues } = validateShape(TASK_BODY, body, loc);
	if (!isPlainObject(body)) return { clean, issues };
	if (rejectUnknown) issues.push(...extraKeyIssues(body, TASK_BODY, loc));
	const fields = clean.fields as Record<string, unknown> | undefined;
	if (fields) {
		const ti = titleIssue(fields, loc, mode !== 'patch');
		if (ti) issues.push(ti);
	} else if (mode === 'create' && !issues.some((i) => i.loc[loc.length] === 'fields')) {
		issues.push(msgIssue([...loc, 'fields'], 'missing'));
	}
	if (clean.uid && clean.parent_uid && clean.uid === clean.parent_uid) {
		issues.push(issue([...loc, 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
	}
	return { clean, issues };
}

function mergeFields(base: TaskFields, patch: Record<string, unknown>): TaskFields {
	const out: TaskFields = { ...base };
	for (const [k, v] of Object.entries(patch)) {
		// A key patched to null is removed: the only way to drop a custom field.
		if (v === null) delete out[k];
		else out[k] = v;
	}
	return out;
}

function blockText(blocks: unknown[]): string {
	const parts: string[] = [];
	const walk = (node: unknown): void => {
		if (Array.isArray(node)) node.forEach(walk);
		else if (isPlainObject(node)) {
			if (typeof node.text === 'string') parts.push(node.text);
			if (node.content) walk(node.content);
			if (node.children) walk(node.children);
		}
	};
	walk(blocks);
	return parts.join(' ').trim();
}

// ---------------------------------------------------------------------------------------------------------------
// Cursor pagination
// ---------------------------------------------------------------------------------------------------------------

interface Ordering<T> {
	/** Identifies the ordering, so a cursor taken under another ordering is refused instead of silently misapplied. */
	sig: string;
	key: (item: T) => unknown[];
	dirs: number[];
}

function cmpKeys(a: unknown[], b: unknown[], dirs: number[]): number {
	for (let i = 0; i < a.length; i++) {
		const an = a[i] === null || a[i] === undefined;
		const bn = b[i] === null || b[i] === undefined;
		if (an !== bn) return an ? 1 : -1; // nulls last in both directions
		const d = compareValues(a[i], b[i]) * (dirs[i] ?? 1);
		if (d !== 0) return d;
	}
	return 0;
}

interface CursorData {
	v: 1;
	s: string;
	o: number;
	k?: unknown[];
}

function encodeCursor(c: CursorData): string {
	return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

function decodeCursor(raw: string, sig: string): CursorData {
	let c: unknown;
	try {
		c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
	} catch {
		throw httpError(400, 'Invalid cursor');
	}
	if (
		!isPlainObject(c) ||
		c.v !== 1 ||
		typeof c.s !== 'string' ||
		!Number.isInteger(c.o) ||
		(c.o as number) < 0 ||
		(c.k !== undefined && !Array.isArray(c.k))
	) {
		throw httpError(400, 'Invalid cursor');
	}
	if (c.s !== sig) throw httpError(400, 'Invalid cursor: it was issued for another ordering');
	return c as unknown as CursorData;
}

/**
 * Sorts and cuts one page. The cursor carries the sort key of the last item already returned (keyset), so inserts
 * and deletes between pages neither repeat nor skip items; the offset is only a fallback for the first page.
 */
function paginate<T>(all: T[], ordering: Ordering<T>, limit: number, cursor: string | undefined): Page<T> {
	const keyed = all.map((item) => {
		const key = ordering.key(item).map((v) => (v === undefined ? null : v));
		return { item, key, sk: key.map(sortable) };
	});
	keyed.sort((a, b) => cmpKeys(a.sk, b.sk, ordering.dirs));
	let start = 0;
	if (cursor) {
		const c = decodeCursor(cursor, ordering.sig);
		if (c.k) {
			const ck = c.k.map(sortable);
			let lo = 0;
			let hi = keyed.length;
			while (lo < hi) {
				const mid = (lo + hi) >>> 1;
				if (cmpKeys(keyed[mid].sk, ck, ordering.dirs) > 0) hi = mid;
				else lo = mid + 1;
			}
			start = lo;
		} else {
			start = Math.min(c.o, keyed.length);
		}
	}
	const at = (i: number): string =>
		encodeCursor(i === 0 ? { v: 1, s: ordering.sig, o: 0 } : { v: 1, s: ordering.sig, o: i, k: keyed[i - 1].key });
	const end = Math.min(start + limit, keyed.length);
	return {
		items: keyed.slice(start, end).map((k) => k.item),
		meta: {
			limit,
			self_cursor: at(start),
			prev_cursor: start > 0 ? at(Math.max(0, start - limit)) : '',
			next_cursor: end < keyed.length ? at(end) : '',
			total_count: keyed.length,
		},
	};
}

// ---------------------------------------------------------------------------------------------------------------
// Query-string helpers
// ---------------------------------------------------------------------------------------------------------------

function queryRecord(sp: URLSearchParams): Record<string, string | string[]> {
	const out: Record<string, string | string[]> = {};
	for (const [k, v] of sp) {
		const prev = out[k];
		if (prev === undefined) out[k] = v;
		else out[k] = Array.isArray(prev) ? [...prev, v] : [prev, v];
	}
	return out;
}

function parseBoolParam(v: string | null, loc: Loc, fallback: boolean): boolean {
	if (v === null || v === '') return fallback;
	const s = v.toLowerCase();
	if (['true', '1', 'yes', 'on'].includes(s)) return true;
	if (['false', '0', 'no', 'off'].includes(s)) return false;
	throw unprocessable([msgIssue(loc, 'bool')]);
}

function parseExpand(values: unknown[], allowed: readonly string[], loc: Loc): string[] {
	const out: string[] = [];
	const issues: Issue[] = [];
	values
		.flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
		.forEach((v, i) => {
			if (typeof v === 'string' && v.trim() === '') return;
			const s = typeof v === 'string' ? v.trim() : v;
			if (typeof s !== 'string' || !allowed.includes(s)) issues.push(enumIssue([...loc, i], allowed));
			else if (!out.includes(s)) out.push(s);
		});
	if (issues.length) throw unprocessable(issues);
	return out;
}

function expandParams(sp: URLSearchParams): string[] {
	// `expand=a&expand=b`, `expand=a,b` and `expand[]=a` (n8n's bracket array format) are all accepted.
	return [...sp.getAll('expand'), ...sp.getAll('expand[]')];
}

// ---------------------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------------------

interface Staged {
	uid: string;
	prev: Task | undefined;
	next: Task;
	changed: boolean;
}

interface Ctx {
	method: string;
	seg: string[];
	sp: URLSearchParams;
	body: unknown;
	token: string;
	headers: http.IncomingHttpHeaders;
}

interface Result {
	status?: number;
	body: unknown;
}

interface PersistedState {
	version: 1;
	tasks: Task[];
	comments: TaskComment[];
	users: Array<[string, string]>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
	const opts: SimulatorOptions = {
		port: 0,
		tokens: ['test-token'],
		windowMs: 60000,
		maxPageSize: 100,
		webhooks: [],
		// The test matrix runs the same suites on each profile (jest project unit-strict sets SIM_PROFILE).
		profile: (process.env.SIM_PROFILE as Profile | undefined) || undefined,
		...options,
	};
	// maxBatchSize has no stored default: the profile decides it unless it is set (see readingsFor).
	const readingErrors = checkReadings(opts.profile, opts.readings);
	if (readingErrors.length) throw new Error(`startSimulator: ${readingErrors.join('; ')}`);
	if (opts.readings) opts.readings = { ...opts.readings };
	/** Effective readings of the spec's open points; recomputed by configure(). */
	let R: Readings = readingsFor(opts);
	let rng = mulberry32(opts.seed ?? (Math.random() * 2 ** 32) >>> 0);

	const tasks = new Map<string, Task>();
	const comments = new Map<string, TaskComment>();
	const users = new Map<string, string>(); // uid -> email, for assignees given by e-mail
	const requests: LoggedRequest[] = [];
	const deliveries: Delivery[] = [];
	const windows = new Map<string, { start: number; count: number }>();
	const scriptedFaults: ScriptedFault[] = [];
	const pendingDeliveries = new Set<Promise<void>>();
	const deliveryChains = new Map<string, Promise<void>>();
	const timers = new Set<NodeJS.Timeout>();
	const webhookAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
	let stopped = false;
	let lastStampMs = 0;
	let hasParentLinks = false;

	// ---- time: updated_at strictly increases, so polling on updated_at never sees two changes at one instant.
	const peekStamp = (): number => Math.max(Date.now(), lastStampMs + 1);
	const takeStamp = (ms: number): string => {
		lastStampMs = Math.max(lastStampMs, ms);
		return new Date(ms).toISOString();
	};

	// ---- persistence
	let saveTimer: NodeJS.Timeout | undefined;
	let saveSeq = 0;
	const snapshot = (): PersistedState => ({
		version: 1,
		tasks: [...tasks.values()],
		comments: [...comments.values()],
		users: [...users.entries()],
	});
	const saveNow = (): void => {
		if (!opts.persistFile) return;
		const tmp = `${opts.persistFile}.${process.pid}.${++saveSeq}.tmp`;
		writeFileSync(tmp, JSON.stringify(snapshot()));
		renameSync(tmp, opts.persistFile);
	};
	const changed = (): void => {
		if (!opts.persistFile || saveTimer || stopped) return;
		saveTimer = setTimeout(() => {
			saveTimer = undefined;
			const file = opts.persistFile;
			if (!file) return;
			// Distinct temp names: a debounced write still in flight must not collide with the final save in stop().
			const tmp = `${file}.${process.pid}.${++saveSeq}.tmp`;
			fsp
				.writeFile(tmp, JSON.stringify(snapshot()))
				.then(() => fsp.rename(tmp, file))
				.catch((e) => console.error(`simulator: cannot save ${file}: ${e.message}`));
		}, 200);
		saveTimer.unref();
	};
	if (opts.persistFile && existsSync(opts.persistFile)) {
		// A corrupt file stops the start rather than being overwritten with an empty state.
		const state = JSON.parse(readFileSync(opts.persistFile, 'utf8')) as PersistedState;
		for (const t of state.tasks ?? []) tasks.set(t.uid, t);
		for (const c of state.comments ?? []) comments.set(c.uid, c);
		for (const [u, e] of state.users ?? []) users.set(u, e);
		for (const t of tasks.values()) {
			lastStampMs = Math.max(lastStampMs, Date.parse(t.updated_at) || 0, Date.parse(t.created_at) || 0);
			if (t.parent_uid) hasParentLinks = true;
		}
	}

	// ---- users (made up on demand: the spec has no user endpoints)
	const userFor = (uid: string, role = 'agent'): User => ({
		uid,
		archived: false,
		role,
		email: users.get(uid) ?? `user.${uid.slice(0, 8)}@example.com`,
		first_name: 'Simulated',
		last_name: `User ${uid.slice(0, 8)}`,
		skills: [],
		legacy_data: {},
		created_at: USER_EPOCH,
		updated_at: USER_EPOCH,
		is_registered: true,
	});
	const tokenUser = (token: string): string => uuidFromName(`task-backlog-simulator:user:${token}`);

	// ---- tasks
	const blankTask = (uid: string, stamp: string): Task => ({
		uid,
		archived: false,
		status: 'TODO',
		legacy_data: {},
		skills: [],
		assignee_uid: null,
		participants: {},
		case_uid: null,
		parent_uid: null,
		due_at: stamp,
		snooze_expires_at: null,
		fields: {},
		metadata_form_uid: null,
		form_data: {},
		form_type: null,
		assigned_at: null,
		started_at: null,
		done_at: null,
		created_at: stamp,
		updated_at: stamp,
		assignee_updated_by: null,
		queue_updated_by: null,
		is_assigned_player: null,
		internal_created_at: stamp,
		internal_updated_at: stamp,
		external_created_at: null,
		external_updated_at: null,
		external_status: null,
		external_status_updated_at: null,
		external_assignee_uid: null,
		queue_time: null,
		queue_time_business: null,
		work_time: null,
		work_time_business: null,
		incremental_work_time: null,
		incremental_work_time_business: null,
		resolution_time: null,
		resolution_time_business: null,
		num_children: 0,
		num_children_done: 0,
	});

	/**
	 * Computes the new state of one task without writing it; batches stage every item before writing any.
	 * `stampMs` fixes the instant (reading `batchStamp: perBatch`); reading `updatedAt: everyWrite` makes every staged
	 * write a change, so updated_at moves even when nothing else did.
	 */
	const stageTask = (prev: Task | undefined, uid: string, body: Clean, mode: Mode, stampMs?: number): Staged => {
		const nowMs = stampMs ?? peekStamp();
		const now = new Date(nowMs).toISOString();
		const next: Task = prev ? structuredClone(prev) : blankTask(uid, now);
		const t = next as unknown as Record<string, unknown>;
		const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(body, k);
		for (const [k, v] of Object.entries(body)) {
			switch (k) {
				// uid comes from the path or the store; status_global has no stated effect; updated_at is the server's.
				case 'uid':
				case 'status_global':
				case 'assignee_email':
				case 'updated_at':
					break;
				case 'created_at':
					if (!prev) next.created_at = v as string;
					break;
				case 'fields':
					next.fields = mode === 'patch' ? mergeFields(next.fields, v as Record<string, unknown>) : { ...(v as TaskFields) };
					break;
				default:
					t[k] = v;
			}
		}
		if (typeof body.assignee_email === 'string' && !has('assignee_uid')) {
			const email = body.assignee_email.trim().toLowerCase();
			const au = uuidFromName(`task-backlog-simulator:email:${email}`);
			users.set(au, email);
			next.assignee_uid = au;
		}
		if (!prev && !has('due_at')) next.due_at = new Date(Date.parse(next.created_at) + 7 * DAY_MS).toISOString();
		const prevStatus = prev?.status;
		if (next.status !== prevStatus) {
			if (next.status === 'DONE' && !has('done_at')) next.done_at = now;
			if (next.status !== 'DONE' && !has('done_at')) next.done_at = null;
			if (next.status === 'STARTED' && !has('started_at')) next.started_at = now;
		}
		if (next.assignee_uid !== (prev?.assignee_uid ?? null) && !has('assigned_at')) {
			next.assigned_at = next.assignee_uid ? now : null;
		}
		if (prev && next.external_status !== prev.external_status && !has('external_status_updated_at')) {
			next.external_status_updated_at = now;
		}
		const isChange = !prev || R.updatedAt === 'everyWrite' || !deepEqual(prev, next);
		if (isChange) {
			const stamp = takeStamp(nowMs);
			next.updated_at = stamp;
			next.internal_updated_at = stamp;
		}
		return { uid, prev, next, changed: isChange };
	};

	const recount = (parentUid: string): void => {
		const parent = tasks.get(parentUid);
		if (!parent) return;
		let n = 0;
		let done = 0;
		for (const t of tasks.values()) {
			if (t.parent_uid === parentUid) {
				n++;
				if (t.status === 'DONE') done++;
			}
		}
		parent.num_children = n;
		parent.num_children_done = done;
	};

	const eventKind = (prev: Task | undefined, next: Task): string => {
		if (!prev) return 'task.created';
		if (prev.status !== next.status) {
			if (next.status === 'DONE') return 'task.completed';
			if (next.status === 'STARTED') return 'task.started';
			return prev.status === 'DONE' ? 'task.reopened' : 'task.paused';
		}
		if (prev.assignee_uid !== next.assignee_uid) return next.assignee_uid ? 'task.assigned' : 'task.unassigned';
		return 'task.updated';
	};

	/** Writes staged tasks, refreshes child counters, then emits one event per real change. */
	const commit = (staged: Staged[], silent = false): void => {
		const parents = new Set<string>();
		for (const s of staged) {
			if (!s.changed) continue;
			tasks.set(s.uid, s.next);
			if (s.next.parent_uid) {
				hasParentLinks = true;
				parents.add(s.next.parent_uid);
			}
			if (s.prev?.parent_uid) parents.add(s.prev.parent_uid);
			// A parent created after its children must count them.
			if (!s.prev && hasParentLinks) parents.add(s.uid);
		}
		parents.forEach(recount);
		if (staged.some((s) => s.changed)) changed();
		if (silent) return;
		for (const s of staged) if (s.changed) emit(eventKind(s.prev, s.next), s.next);
	};

	// ---- rendering with expansions
	const sortByCreation = <T extends { created_at: string; uid: string }>(a: T, b: T): number =>
		cmpKeys([a.created_at, a.uid], [b.created_at, b.uid], [1, 1]);

	const renderTasks = (list: Task[], expand: string[]): Task[] => {
		if (!expand.length) return list;
		let commentsByTask: Map<string, TaskComment[]> | undefined;
		let childrenByParent: Map<string, Task[]> | undefined;
		if (expand.includes('comments')) {
			commentsByTask = new Map();
			for (const c of comments.values()) {
				const l = commentsByTask.get(c.task_uid) ?? [];
				l.push(c);
				commentsByTask.set(c.task_uid, l);
			}
		}
		if (expand.includes('children')) {
			childrenByParent = new Map();
			for (const t of tasks.values()) {
				if (!t.parent_uid) continue;
				const l = childrenByParent.get(t.parent_uid) ?? [];
				l.push(t);
				childrenByParent.set(t.parent_uid, l);
			}
		}
		return list.map((t) => {
			const out: Task = { ...t };
			if (commentsByTask) out.comments = (commentsByTask.get(t.uid) ?? []).sort(sortByCreation);
			if (childrenByParent) out.children = (childrenByParent.get(t.uid) ?? []).sort(sortByCreation);
			if (expand.includes('parent')) out.parent = t.parent_uid ? (tasks.get(t.parent_uid) ?? null) : null;
			if (expand.includes('assignee')) out.assignee = t.assignee_uid ? userFor(t.assignee_uid) : null;
			return out;
		});
	};
	const renderTask = (t: Task, expand: string[] = []): Task => renderTasks([t], expand)[0];

	const renderComments = (list: TaskComment[], expand: string[]): TaskComment[] =>
		expand.length
			? list.map((c) => {
					const out: TaskComment = { ...c };
					if (expand.includes('task')) {
						const t = tasks.get(c.task_uid);
						if (t) out.task = t;
					}
					if (expand.includes('author')) out.author = c.author_uid ? userFor(c.author_uid) : null;
					return out;
				})
			: list;

	// ---- webhooks
	const postWebhook = (target: WebhookTarget, raw: string, headers: Record<string, string>): Promise<number | 'error'> =>
		new Promise((resolve) => {
			let u: URL;
			try {
				u = new URL(target.url);
			} catch {
				resolve('error');
				return;
			}
			const mod = u.protocol === 'https:' ? https : http;
			const req = mod.request(
				u,
				{
					method: 'POST',
					headers: { ...headers, 'content-length': String(Buffer.byteLength(raw)) },
					agent: u.protocol === 'https:' ? false : webhookAgent,
					timeout: 5000,
				},
				(res) => {
					res.resume();
					res.on('end', () => resolve(res.statusCode ?? 0));
					res.on('error', () => resolve('error'));
				},
			);
			req.on('timeout', () => req.destroy(new Error('webhook timeout')));
			req.on('error', () => resolve('error'));
			req.end(raw);
		});

	const emit = (kind: string, task: Task): void => {
		if (stopped) return;
		for (const target of opts.webhooks ?? []) {
			if (target.events?.length && !target.events.includes(kind) && !target.events.includes('*')) continue;
			const event: WebhookEvent = { type: kind, data: { task: structuredClone(task) }, info: {}, sentAt: new Date().toISOString() };
			const raw = JSON.stringify(event);
			const ts = String(Math.floor(Date.now() / 1000));
			const headers: Record<string, string> = {
				'content-type': 'application/json',
				'user-agent': 'task-backlog-simulator',
				'x-backlog-event': kind,
				[(target.timestampHeader ?? 'x-backlog-timestamp').toLowerCase()]: ts,
			};
			if (target.secret) {
				const signed = target.signTimestamp ? `${ts}.${raw}` : raw;
				headers[(target.signatureHeader ?? 'x-backlog-signature').toLowerCase()] =
					`sha256=${createHmac('sha256', target.secret).update(signed).digest('hex')}`;
			}
			// One chain per target keeps events in order, as a receiver would expect from a real service.
			const prev = deliveryChains.get(target.url) ?? Promise.resolve();
			const p: Promise<void> = prev
				.then(() => postWebhook(target, raw, headers))
				.then((status) => {
					deliveries.push({ url: target.url, status, event });
				});
			deliveryChains.set(target.url, p);
			pendingDeliveries.add(p);
			void p.then(() => {
				pendingDeliveries.delete(p);
				if (deliveryChains.get(target.url) === p) deliveryChains.delete(target.url);
			});
		}
	};

	const flushDeliveries = async (): Promise<void> => {
		while (pendingDeliveries.size) await Promise.all([...pendingDeliveries]);
	};

	// ---- request handlers
	const clampLimit = (raw: unknown, loc: Loc, maxLimit = opts.maxPageSize ?? 100): number => {
		const max = Math.max(1, maxLimit);
		if (raw === undefined || raw === null || raw === '') return Math.min(50, max);
		const n = typeof raw === 'string' ? Number(raw) : raw;
		if (typeof n !== 'number' || !Number.isInteger(n)) throw unprocessable([msgIssue(loc, 'int')]);
		if (n < 1) throw unprocessable([issue(loc, 'ensure this value is greater than or equal to 1', 'value_error.number.not_ge')]);
		return Math.min(n, max);
	};

	const pathUid = (v: string, name: string): string => {
		if (!isUuid(v)) throw unprocessable([msgIssue(['path', name], 'uuid')]);
		return v.toLowerCase();
	};

	const mustTask = (uid: string): Task => {
		const t = tasks.get(uid);
		if (!t) throw httpError(404, `Task ${uid} not found`);
		return t;
	};

	const taskOrdering = (orderBy: 'created_at' | 'updated_at'): Ordering<Task> => ({
		sig: `tasks:${orderBy}`,
		key: (t) => [t[orderBy], t.uid],
		dirs: [1, 1],
	});

	const searchText = (t: Task): string =>
		Object.values(t.fields ?? {})
			.map((v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)))
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

	const matchesCustom = (t: Task, custom: Map<string, string[]>): boolean => {
		for (const [name, values] of custom) {
			const v = t.fields?.[name];
			if (v === undefined || v === null) return false;
			const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
			if (!values.includes(s)) return false;
		}
		return true;
	};

	const listTasks = (sp: URLSearchParams): Page<Task> => {
		const limit = clampLimit(sp.get('limit'), ['query', 'limit']);
		const expand = parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']);
		if (R.listParams === 'customFields') {
			const custom = new Map<string, string[]>();
			for (const k of new Set(sp.keys())) if (!PAGING_PARAMS.has(k)) custom.set(k, sp.getAll(k));
			const filtered = [...tasks.values()].filter((t) => !t.archived && matchesCustom(t, custom));
			const page = paginate(filtered, taskOrdering('created_at'), limit, sp.get('cursor') ?? undefined);
			return { items: renderTasks(page.items, expand), meta: page.meta };
		}
		const issues: Issue[] = [];
		const statuses = sp.getAll('status').filter((s) => s !== '');
		statuses.forEach((s) => {
			if (!(STATUSES as readonly string[]).includes(s)) issues.push(enumIssue(['query', 'status'], STATUSES));
		});
		const assignees = sp.getAll('assignee_uid').filter((s) => s !== '');
		assignees.forEach((a) => {
			if (!isUuid(a)) issues.push(msgIssue(['query', 'assignee_uid'], 'uuid'));
		});
		const orderBy = sp.get('order_by') || 'created_at';
		if (orderBy !== 'created_at' && orderBy !== 'updated_at') issues.push(enumIssue(['query', 'order_by'], ['created_at', 'updated_at']));
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
		const filtered = [...tasks.values()].filter((t) => {
			if (t.archived !== archived) return false;
			if (statuses.length && !statuses.includes(t.status)) return false;
			if (assigneeSet.size && !(t.assignee_uid && assigneeSet.has(t.assignee_uid))) return false;
			if (after.created_at_after !== undefined && !(Date.parse(t.created_at) > after.created_at_after)) return false;
			if (after.updated_at_after !== undefined && !(Date.parse(t.updated_at) > after.updated_at_after)) return false;
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
		return { items: renderTasks(page.items, expand), meta: page.meta };
	};

	const queryTasks = (sp: URLSearchParams, rawBody: unknown): Page<Task> | { items: Task[]; meta: { limit: number; total_count: number } } => {
		const body = rawBody === undefined || rawBody === null ? {} : rawBody;
		if (!isPlainObject(body)) throw unprocessable([msgIssue(['body'], 'dict')]);
		const issues: Issue[] = [
			...validateCondition(body.condition, ['body', 'condition']),
			...validateSorts(body.sorts, ['body', 'sorts']),
		];
		if (body.expand !== undefined && body.expand !== null && !Array.isArray(body.expand)) issues.push(msgIssue(['body', 'expand'], 'list'));
		if (issues.length) throw unprocessable(issues);
		// Readings queryLimitFrom (body only: the query-string limit is ignored) and queryMaxLimit (silent clamp).
		const fromQuery = R.queryLimitFrom === 'queryOrBody' && sp.has('limit');
		const limit = clampLimit(fromQuery ? sp.get('limit') : (body.limit as unknown), fromQuery ? ['query', 'limit'] : ['body', 'limit'], R.queryMaxLimit);
		const expand = [
			...parseExpand((body.expand as unknown[] | null | undefined) ?? [], TASK_EXPANDS, ['body', 'expand']),
			...parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']),
		].filter((v, i, a) => a.indexOf(v) === i);
		const archived = parseBoolParam(sp.get('archived'), ['query', 'archived'], false);
		const condition = (body.condition ?? undefined) as Condition | undefined;
		const strictTypes = R.typeComparison === 'strict';
		const matched = [...tasks.values()].filter(
			(t) => t.archived === archived && evaluateCondition(condition, t as unknown as Record<string, unknown>, { strictTypes }),
		);
		const sorts = ((body.sorts as Sort[] | null | undefined) ?? []).map((s) => ({
			field: s.field as string,
			dir: s.direction === 'descending' ? -1 : 1,
		}));
		const ordering: Ordering<Task> = {
			sig: `query:${JSON.stringify(sorts)}`,
			key: (t) => [...sorts.map((s) => resolveField(t as unknown as Record<string, unknown>, s.field)), t.created_at, t.uid],
			dirs: [...sorts.map((s) => s.dir), 1, 1],
		};
		if (R.queryPaging === 'none') {
			// facts.md: no cursor is documented for the query endpoint. One page, a cursor parameter is ignored.
			const page = paginate(matched, ordering, limit, undefined);
			return { items: renderTasks(page.items, expand), meta: { limit, total_count: page.meta.total_count } };
		}
		const page = paginate(matched, ordering, limit, sp.get('cursor') ?? undefined);
		return { items: renderTasks(page.items, expand), meta: page.meta };
	};

	const checkBodyUid = (clean: Clean, uid: string, loc: Loc): void => {
		if (clean.uid !== undefined && clean.uid !== uid) {
			throw unprocessable([issue([...loc, 'uid'], 'uid in body does not match the path', 'value_error')]);
		}
	};

	const rejectUnknown = (): boolean => R.unknownKeys === 'reject';
	/** PATCH mode under reading patchFields: `replace` sets fields to exactly the object sent (title required). */
	const patchMode = (): Mode => (R.patchFields === 'replace' ? 'replace' : 'patch');

	const createTask = (body: unknown): Task => {
		const uid0 = isPlainObject(body) && isUuid(body.uid) ? body.uid.toLowerCase() : undefined;
		// Reading postExisting: `replace` overwrites an existing task like a PUT replace instead of answering 409.
		const overwrite = uid0 !== undefined && tasks.has(uid0) && R.postExisting === 'replace';
		const { clean, issues } = validateTaskBody(body, ['body'], overwrite ? 'replace' : 'create', rejectUnknown());
		if (issues.length) throw unprocessable(issues);
		const uid = (clean.uid as string | undefined) ?? randomUUID();
		const existing = tasks.get(uid);
		if (existing && !overwrite) throw httpError(409, `Task ${uid} already exists`);
		const s = stageTask(existing, uid, clean, existing ? 'replace' : 'create');
		commit([s]);
		return tasks.get(uid) ?? s.next;
	};

	const putTask = (uid: string, body: unknown): Task => {
		const existing = tasks.get(uid);
		// Reading putExisting: `noop` is spec 4.2 rule 1 (later PUTs are no-ops); `replace` is 4.5 rule 1 ("creates or
		// updates"), applied like PUT /tasks/batch: given top-level properties replace, fields replaced whole.
		const replace = existing !== undefined && R.putExisting === 'replace';
		const { clean, issues } = validateTaskBody(body, ['body'], existing ? (replace ? 'replace' : 'patch') : 'create', rejectUnknown());
		if (replace && clean.parent_uid === uid) issues.push(issue(['body', 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
		if (issues.length) throw unprocessable(issues);
		checkBodyUid(clean, uid, ['body']);
		if (existing && !replace) return existing;
		const s = stageTask(existing, uid, clean, existing ? 'replace' : 'create');
		commit([s]);
		return tasks.get(uid) ?? s.next;
	};

	const patchTask = (uid: string, body: unknown): Task => {
		const existing = mustTask(uid);
		const mode = patchMode();
		const { clean, issues } = validateTaskBody(body, ['body'], mode, rejectUnknown());
		if (clean.parent_uid === uid) issues.push(issue(['body', 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
		if (issues.length) throw unprocessable(issues);
		checkBodyUid(clean, uid, ['body']);
		const s = stageTask(existing, uid, clean, mode);
		commit([s]);
		return tasks.get(uid) ?? s.next;
	};

	const deleteTask = (uid: string): Task => {
		const t = mustTask(uid);
		tasks.delete(uid);
		for (const [cu, c] of comments) if (c.task_uid === uid) comments.delete(cu);
		if (t.parent_uid) recount(t.parent_uid);
		changed();
		emit('task.deleted', t);
		return t;
	};

	const batch = (method: 'POST' | 'PUT' | 'PATCH', body: unknown): Page<Task> => {
		if (!isPlainObject(body)) throw unprocessable([msgIssue(['body'], body === undefined || body === null ? 'missing' : 'dict')]);
		const items = body.items;
		if (items === undefined || items === null) throw unprocessable([msgIssue(['body', 'items'], 'missing')]);
		if (!Array.isArray(items)) throw unprocessable([msgIssue(['body', 'items'], 'list')]);
		const max = R.maxBatchSize;
		if (items.length > max) {
			// Reading batchTooLarge: `413` is a plain-text answer that does not say the limit.
			if (R.batchTooLarge === '413') throw new HttpError(413, new PlainText('Request Entity Too Large'));
			throw new HttpError(422, {
				detail: [
					{
						loc: ['body', 'items'],
						msg: `ensure this value has at most ${max} items`,
						type: 'value_error.list.max_items',
						ctx: { limit_value: max },
					},
				],
			});
		}
		// Stage every item against an overlay first: any invalid item means nothing is written.
		const overlay = new Map<string, Task>();
		const view = (uid: string): Task | undefined => overlay.get(uid) ?? tasks.get(uid);
		const staged: Staged[] = [];
		const issues: Issue[] = [];
		const seen = new Set<string>();
		// Reading batchStamp: `perBatch` gives every task written by this request the same instant.
		const batchMs = R.batchStamp === 'perBatch' ? peekStamp() : undefined;
		items.forEach((item, i) => {
			const loc: Loc = ['body', 'items', i];
			const uid0 = isPlainObject(item) && isUuid(item.uid) ? item.uid.toLowerCase() : undefined;
			const existing = uid0 ? view(uid0) : undefined;
			// Readings batchPutExisting (`noop`: existing tasks are left as stored, the body only validated as a PATCH
			// would be) and postExisting (`replace`: POST over an existing uid overwrites it like PUT batch).
			const putNoop = method === 'PUT' && existing !== undefined && R.batchPutExisting === 'noop';
			const postOverwrite = method === 'POST' && existing !== undefined && R.postExisting === 'replace';
			const mode: Mode =
				method === 'PATCH'
					? patchMode()
					: putNoop
						? 'patch'
						: (method === 'PUT' && existing) || postOverwrite
							? 'replace'
							: 'create';
			const { clean, issues: its } = validateTaskBody(item, loc, mode, rejectUnknown());
			if (method === 'PATCH' && isPlainObject(item) && (item.uid === undefined || item.uid === null)) {
				its.push(msgIssue([...loc, 'uid'], 'missing'));
			}
			// Reading duplicateUids: `reject` refuses the whole batch when a uid comes again (named at the later item).
			if (uid0 !== undefined && R.duplicateUids === 'reject') {
				if (seen.has(uid0)) its.unshift(issue([...loc, 'uid'], 'duplicate uid in batch', 'value_error.duplicate'));
				seen.add(uid0);
			}
			if (its.length) {
				issues.push(...its);
				return;
			}
			const uid = (clean.uid as string | undefined) ?? randomUUID();
			if (putNoop && existing) {
				staged.push({ uid, prev: existing, next: existing, changed: false });
				return;
			}
			if (method === 'POST' && existing && !postOverwrite) {
				issues.push(issue([...loc, 'uid'], 'uid already exists', 'value_error.conflict'));
				return;
			}
			if (method === 'PATCH' && !existing) {
				issues.push(issue([...loc, 'uid'], 'task not found', 'value_error.not_found'));
				return;
			}
			if (existing && clean.parent_uid === uid) {
				issues.push(issue([...loc, 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
				return;
			}
			const s = stageTask(existing, uid, clean, mode, batchMs);
			overlay.set(uid, s.next);
			staged.push(s);
		});
		if (issues.length) throw unprocessable(issues);
		commit(staged);
		return {
			items: staged.map((s) => tasks.get(s.uid) ?? s.next),
			meta: { limit: staged.length, total_count: staged.length, self_cursor: '', prev_cursor: '', next_cursor: '' },
		};
	};

	// ---- comments
	const authorFor = (ctx: Ctx): string => {
		const su = ctx.headers['service-user'];
		return typeof su === 'string' && isUuid(su) ? su.toLowerCase() : tokenUser(ctx.token);
	};

	const validateComment = (body: unknown, taskUid: string, creating: boolean): Clean => {
		const { clean, issues } = validateShape(COMMENT_BODY, body, ['body']);
		if (isPlainObject(body) && creating) {
			const blocks = clean.blocks as unknown[] | undefined;
			const text = clean.text as string | undefined;
			if ((text === undefined || text.trim() === '') && !blocks?.length && !issues.some((i) => i.loc[1] === 'text')) {
				issues.push(
					text === undefined
						? msgIssue(['body', 'text'], 'missing')
						: issue(['body', 'text'], 'ensure this value has at least 1 characters', 'value_error.any_str.min_length'),
				);
			}
		}
		if (clean.task_uid !== undefined && clean.task_uid !== taskUid) {
			issues.push(issue(['body', 'task_uid'], 'task_uid in body does not match the path', 'value_error'));
		}
		if (issues.length) throw unprocessable(issues);
		return clean;
	};

	const createComment = (ctx: Ctx, taskUid: string, uid: string | undefined, body: unknown): TaskComment => {
		mustTask(taskUid);
		const clean = validateComment(body, taskUid, true);
		if (uid && clean.uid !== undefined && clean.uid !== uid) {
			throw unprocessable([issue(['body', 'uid'], 'uid in body does not match the path', 'value_error')]);
		}
		const cuid = uid ?? (clean.uid as string | undefined) ?? randomUUID();
		const existing = comments.get(cuid);
		if (existing) {
			if (uid) return existing; // PUT: idempotent create, later calls are no-ops
			throw httpError(409, `Comment ${cuid} already exists`);
		}
		const stamp = takeStamp(peekStamp());
		const blocks = (clean.blocks as TextBlock[] | undefined) ?? [];
		const c: TaskComment = {
			uid: cuid,
			archived: (clean.archived as boolean | undefined) ?? false,
			task_uid: taskUid,
			author_uid: clean.author_uid !== undefined ? (clean.author_uid as string | null) : authorFor(ctx),
			text: (clean.text as string | undefined) || blockText(blocks),
			blocks,
			created_at: (clean.created_at as string | undefined) ?? stamp,
			updated_at: stamp,
		};
		comments.set(cuid, c);
		changed();
		return c;
	};

	const mustComment = (taskUid: string, uid: string): TaskComment => {
		const c = comments.get(uid);
		if (!c || c.task_uid !== taskUid) throw httpError(404, `Comment ${uid} not found`);
		return c;
	};

	const patchComment = (taskUid: string, uid: string, body: unknown): TaskComment => {
		mustTask(taskUid);
		const c = mustComment(taskUid, uid);
		const clean = validateComment(body, taskUid, false);
		if (clean.uid !== undefined && clean.uid !== uid) {
			throw unprocessable([issue(['body', 'uid'], 'uid in body does not match the path', 'value_error')]);
		}
		const next: TaskComment = { ...c };
		for (const k of ['archived', 'author_uid', 'text', 'blocks'] as const) {
			if (clean[k] !== undefined) (next as unknown as Record<string, unknown>)[k] = clean[k];
		}
		if (clean.blocks !== undefined && clean.text === undefined) next.text = blockText(next.blocks) || next.text;
		if (R.updatedAt === 'everyWrite' || !deepEqual(c, next)) {
			next.updated_at = takeStamp(peekStamp());
			comments.set(uid, next);
			changed();
		}
		return comments.get(uid) ?? next;
	};

	const commentOrdering: Ordering<TaskComment> = { sig: 'comments', key: (c) => [c.created_at, c.uid], dirs: [1, 1] };

	// ---- router
	const route = (ctx: Ctx): Result => {
		const { method, seg, sp, body } = ctx;
		const allow = (methods: string[]): void => {
			if (!methods.includes(method)) throw new HttpError(405, { message: 'Method Not Allowed' }, { allow: methods.join(', ') });
		};
		if (seg.length === 2 && seg[0] === 'accounts' && seg[1] === 'me') {
			allow(['GET']);
			return {
				body: {
					uid: uuidFromName('task-backlog-simulator:account'),
					name: 'Simulated account',
					user: { ...userFor(tokenUser(ctx.token), 'super_admin'), email: 'admin@simulated.example' },
				},
			};
		}
		if (seg[0] !== 'tasks') throw httpError(404, 'Not Found');
		if (seg.length === 1) {
			allow(['GET', 'POST']);
			if (method === 'GET') return { body: listTasks(sp) };
			return { body: createTask(body) };
		}
		if (seg.length === 2 && seg[1] === 'query') {
			allow(['POST']);
			return { body: queryTasks(sp, body) };
		}
		if (seg.length === 2 && seg[1] === 'batch') {
			allow(['POST', 'PUT', 'PATCH']);
			return { body: batch(method as 'POST' | 'PUT' | 'PATCH', body) };
		}
		if (seg.length === 2) {
			allow(['GET', 'PUT', 'PATCH', 'DELETE']);
			const uid = pathUid(seg[1], 'uid');
			if (method === 'GET') {
				const expand = parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']);
				return { body: renderTask(mustTask(uid), expand) };
			}
			if (method === 'PUT') return { body: putTask(uid, body) };
			if (method === 'PATCH') return { body: patchTask(uid, body) };
			return { body: deleteTask(uid) };
		}
		if (seg[2] !== 'comments' || seg.length > 4) throw httpError(404, 'Not Found');
		if (seg.length === 3) {
			allow(['GET', 'POST']);
			const taskUid = pathUid(seg[1], method === 'GET' ? 'uid' : 'task_uid');
			if (method === 'POST') return { body: createComment(ctx, taskUid, undefined, body) };
			mustTask(taskUid);
			const limit = clampLimit(sp.get('limit'), ['query', 'limit']);
			const expand = parseExpand(expandParams(sp), COMMENT_EXPANDS, ['query', 'expand']);
			const list = [...comments.values()].filter((c) => c.task_uid === taskUid);
			const page = paginate(list, commentOrdering, limit, sp.get('cursor') ?? undefined);
			return { body: { items: renderComments(page.items, expand), meta: page.meta } };
		}
		allow(['GET', 'PUT', 'PATCH']);
		const taskUid = pathUid(seg[1], 'task_uid');
		const uid = pathUid(seg[3], 'uid');
		if (method === 'GET') {
			mustTask(taskUid);
			const expand = parseExpand(expandParams(sp), COMMENT_EXPANDS, ['query', 'expand']);
			return { body: renderComments([mustComment(taskUid, uid)], expand)[0] };
		}
		if (method === 'PUT') return { body: createComment(ctx, taskUid, uid, body) };
		return { body: patchComment(taskUid, uid, body) };
	};

	// ---- HTTP plumbing
	const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
		if (res.headersSent || res.destroyed) return;
		const text = body instanceof PlainText;
		const raw = text ? body.text : JSON.stringify(body);
		const type = text ? 'text/plain; charset=utf-8' : 'application/json';
		res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(raw)), ...headers });
		res.end(raw);
	};

	/** An error answer; reading errorBodies `varied` reshapes the simulator's own bodies (not scripted ones). */
	const sendError = (res: http.ServerResponse, e: HttpError): void => {
		const body = R.errorBodies === 'varied' && !e.verbatim ? variedErrorBody(e.status, e.body) : e.body;
		send(res, e.status, body, e.headers);
	};

	const readBody = (req: http.IncomingMessage): Promise<string> =>
		new Promise((resolve, reject) => {
			const chunks: Buffer[] = [];
			let size = 0;
			req.on('data', (c: Buffer) => {
				size += c.length;
				if (size > MAX_BODY_BYTES) {
					reject(httpError(413, 'Request body too large'));
					req.destroy();
				} else chunks.push(c);
			});
			req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
			req.on('error', reject);
		});

	const sleep = (ms: number): Promise<void> =>
		new Promise((resolve) => {
			const t = setTimeout(() => {
				timers.delete(t);
				resolve();
			}, ms);
			timers.add(t);
		});

	const takeToken = (h: string | undefined): string | undefined => {
		const m = /^Bearer\s+(.+)$/i.exec(h ?? '');
		return m ? m[1].trim() : undefined;
	};

	/** Options as JSON: `profile`, the effective `readings`, and the overrides set one by one (`readingOverrides`). */
	const jsonOptions = (): Record<string, unknown> => {
		const { faults, readings, ...rest } = opts;
		const f = faults ? { ...faults, only: faults.only ? '[function]' : undefined } : undefined;
		return { ...rest, faults: f, profile: opts.profile ?? 'lenient', readings: { ...R }, readingOverrides: { ...(readings ?? {}) } };
	};

	const doReset = (): void => {
		tasks.clear();
		comments.clear();
		users.clear();
		requests.length = 0;
		deliveries.length = 0;
		windows.clear();
		scriptedFaults.length = 0;
		hasParentLinks = false;
		if (opts.seed !== undefined) rng = mulberry32(opts.seed);
		changed();
	};

	const doConfigure = (o: Partial<SimulatorOptions>): void => {
		// Readings are checked before anything changes, so a bad one leaves the options as they were.
		const errors = checkReadings(o.profile, o.readings);
		if (errors.length) throw new Error(`configure: ${errors.join('; ')}`);
		if ('requestsPerWindow' in o || 'windowMs' in o || 'tokens' in o) windows.clear();
		for (const [k, v] of Object.entries(o)) {
			if (k === 'port' || k === 'persistFile') continue; // fixed for the life of the server
			if (k === 'readingOverrides') continue; // output only (GET /_sim/options)
			if (k === 'readings') {
				// Merged into the current overrides; a null/undefined value drops one, `readings: null` drops them all.
				if (v === undefined || v === null) {
					delete opts.readings;
					continue;
				}
				const merged: Record<string, unknown> = { ...(opts.readings ?? {}) };
				for (const [rk, rv] of Object.entries(v as Record<string, unknown>)) {
					if (rv === undefined || rv === null) delete merged[rk];
					else merged[rk] = rv;
				}
				opts.readings = merged as Partial<Readings>;
				continue;
			}
			(opts as unknown as Record<string, unknown>)[k] = v;
		}
		if ('seed' in o && o.seed !== undefined) rng = mulberry32(o.seed);
		R = readingsFor(opts);
	};

	const seedTasks = (n: number, make?: (i: number) => Partial<TaskBody>): Task[] => {
		const out: Task[] = [];
		for (let i = 0; i < n; i++) {
			const extra = make?.(i) ?? {};
			const body = { ...extra, fields: { title: `Seeded task ${i + 1}`, ...(extra.fields ?? {}) } };
			const { clean, issues } = validateTaskBody(body, ['seed', i], 'create');
			if (issues.length) throw new Error(`seedTasks: invalid task ${i}: ${JSON.stringify(issues)}`);
			const uid = (clean.uid as string | undefined) ?? randomUUID();
			if (tasks.has(uid)) throw new Error(`seedTasks: task ${uid} already exists`);
			const s = stageTask(undefined, uid, clean, 'create');
			commit([s], true);
			out.push(s.next);
		}
		return out;
	};

	const control = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> => {
		const method = req.method ?? 'GET';
		const name = url.pathname.replace(/^\/_sim\/?/, '').replace(/\/$/, '');
		let body: unknown;
		let raw: string;
		try {
			raw = await readBody(req);
		} catch (e) {
			if (e instanceof HttpError) throw e;
			return;
		}
		if (raw.trim()) {
			try {
				body = JSON.parse(raw);
			} catch {
				send(res, 400, { message: 'Invalid JSON body' });
				return;
			}
		}
		if (method === 'GET' && name === 'state') {
			send(res, 200, {
				counts: { tasks: tasks.size, comments: comments.size, requests: requests.length, deliveries: deliveries.length },
				tasks: [...tasks.values()],
				comments: [...comments.values()],
				deliveries,
			});
		} else if (method === 'GET' && name === 'requests') {
			const since = Math.max(0, Number(url.searchParams.get('since') ?? 0) || 0);
			send(res, 200, { total: requests.length, requests: requests.slice(since) });
		} else if (method === 'DELETE' && name === 'requests') {
			requests.length = 0;
			send(res, 200, { ok: true });
		} else if (method === 'POST' && name === 'reset') {
			doReset();
			send(res, 200, { ok: true });
		} else if (method === 'POST' && name === 'configure') {
			if (!isPlainObject(body)) {
				send(res, 400, { message: 'Expected a JSON object of options' });
				return;
			}
			const o = { ...body } as Partial<SimulatorOptions>;
			if (o.faults) delete o.faults.only;
			try {
				doConfigure(o);
			} catch (e) {
				send(res, 400, { message: (e as Error).message });
				return;
			}
			send(res, 200, { options: jsonOptions() });
		} else if (method === 'POST' && name === 'seed') {
			const b = isPlainObject(body) ? body : {};
			const n = Number(b.n ?? 0);
			if (!Number.isInteger(n) || n < 0) {
				send(res, 400, { message: 'n must be a non-negative integer' });
				return;
			}
			const fields = isPlainObject(b.fields) ? b.fields : {};
			try {
				send(res, 200, { items: seedTasks(n, () => ({ fields })) });
			} catch (e) {
				send(res, 400, { message: (e as Error).message });
			}
		} else if (method === 'POST' && name === 'flush') {
			await flushDeliveries();
			send(res, 200, { deliveries: deliveries.length });
		} else if (method === 'GET' && name === 'options') {
			send(res, 200, { options: jsonOptions() });
		} else {
			send(res, 404, { message: 'Unknown simulator control route' });
		}
	};

	const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
		const method = (req.method ?? 'GET').toUpperCase();
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
			await control(req, res, url);
			return;
		}
		const isApi = url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`);
		const path = isApi ? url.pathname.slice(API_PREFIX.length) || '/' : url.pathname;
		const entry: LoggedRequest = {
			method,
			path,
			query: queryRecord(url.searchParams),
			status: 0,
			at: Date.now(),
			headers: { ...req.headers },
		};
		requests.push(entry);
		res.on('finish', () => {
			entry.status = res.statusCode;
		});

		let raw: string;
		try {
			raw = await readBody(req);
		} catch (e) {
			if (e instanceof HttpError) throw e;
			return; // the client went away mid-body
		}
		let body: unknown;
		let bodyError = false;
		if (raw.trim()) {
			try {
				body = JSON.parse(raw);
				entry.body = body;
			} catch {
				entry.body = raw;
				bodyError = true;
			}
		}
		if (!isApi) throw httpError(404, 'Not Found');

		// 1. auth, before anything is counted
		const token = takeToken(req.headers.authorization);
		if (!token || !(opts.tokens ?? []).includes(token)) {
			throw new HttpError(401, { message: 'Invalid or missing bearer token' }, { 'www-authenticate': 'Bearer' });
		}
		// 2. fixed-window rate limit per token
		const limit = opts.requestsPerWindow ?? 0;
		if (limit > 0) {
			const now = Date.now();
			const windowMs = opts.windowMs ?? 60000;
			let w = windows.get(token);
			if (!w || now - w.start >= windowMs) {
				w = { start: now, count: 0 };
				windows.set(token, w);
			}
			w.count++;
			if (w.count > limit) {
				const headers: Record<string, string> = opts.retryAfterOnLimit
					? { 'retry-after': String(Math.max(1, Math.ceil((w.start + windowMs - now) / 1000))) }
					: {};
				throw new HttpError(429, { message: `Too many requests: limit is ${limit} per window` }, headers);
			}
		}
		// 3a. scripted faults, before any side effect
		const scripted = scriptedFaults.findIndex((fault) => !fault.when || fault.when({ method, path }));
		let cutAfterEffect = false;
		if (scripted >= 0) {
			const [fault] = scriptedFaults.splice(scripted, 1);
			if (fault.afterEffect) {
				cutAfterEffect = true;
			} else if (fault.status === 'reset') {
				entry.fault = 'reset';
				req.socket.destroy();
				return;
			} else {
				entry.fault = `scripted-${fault.status}`;
				const headers = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : undefined;
				throw new HttpError(fault.status, fault.body ?? { message: `Scripted ${fault.status}` }, headers, fault.body !== undefined);
			}
		}
		// 3b. random faults, before any side effect. A fixed number of draws per request keeps seeded runs reproducible.
		const f = opts.faults;
		if (f && (!f.only || f.only({ method, path }))) {
			const [rLatency, rReset, rError, rCode, rLimit, rRetry] = [rng(), rng(), rng(), rng(), rng(), rng()];
			if (f.latencyMs) {
				const [lo, hi] = f.latencyMs;
				await sleep(lo + rLatency * Math.max(0, hi - lo));
				if (stopped || res.destroyed) return;
			}
			const retryAfter = rRetry < (f.retryAfterRate ?? 0) ? { 'retry-after': String(f.retryAfterSeconds ?? 1) } : undefined;
			if (rReset < (f.resetRate ?? 0)) {
				entry.fault = 'reset';
				req.socket.destroy();
				return;
			}
			if (rError < (f.error5xxRate ?? 0)) {
				const code = [500, 502, 503][Math.min(2, Math.floor(rCode * 3))];
				entry.fault = `error-${code}`;
				const text = code === 500 ? 'Internal Server Error' : code === 502 ? 'Bad Gateway' : 'Service Unavailable';
				throw new HttpError(code, { message: `Simulated ${code} ${text}` }, code === 503 ? retryAfter : undefined);
			}
			if (rLimit < (f.rateLimitRate ?? 0)) {
				entry.fault = 'rate-limit';
				throw new HttpError(429, { message: 'Too many requests (simulated)' }, retryAfter);
			}
			if (f.resetAfterEffectRate && rng() < f.resetAfterEffectRate) cutAfterEffect = true;
		}
		if (bodyError) throw httpError(400, 'Invalid JSON body');
		const su = req.headers['service-user'];
		if (typeof su === 'string' && su !== '' && !isUuid(su)) throw unprocessable([msgIssue(['header', 'service-user'], 'uuid')]);

		const seg = path.split('/').filter(Boolean);
		const r = route({ method, seg, sp: url.searchParams, body, token, headers: req.headers });
		if (cutAfterEffect) {
			entry.fault = 'reset-after-effect';
			req.socket.destroy();
			return;
		}
		send(res, r.status ?? 200, r.body);
	};

	const server = http.createServer((req, res) => {
		handle(req, res).catch((e: unknown) => {
			if (e instanceof HttpError) sendError(res, e);
			else {
				console.error('simulator: internal error', e);
				sendError(res, httpError(500, `Simulator internal error: ${(e as Error)?.message ?? String(e)}`));
			}
		});
	});
	server.keepAliveTimeout = 5000;

	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(opts.port ?? 0, '127.0.0.1', () => {
			server.off('error', reject);
			resolve();
		});
	});
	const port = (server.address() as AddressInfo).port;

	const sim: Simulator = {
		url: `http://127.0.0.1:${port}${API_PREFIX}`,
		port,
		requests,
		tasks,
		comments,
		deliveries,
		get options() {
			return opts;
		},
		configure: doConfigure,
		reset: doReset,
		seedTasks,
		clearRequests: () => {
			requests.length = 0;
		},
		flushDeliveries,
		failNext: (...faults: ScriptedFault[]) => {
			scriptedFaults.push(...faults);
		},
		stop: async () => {
			if (stopped) return;
			stopped = true;
			for (const t of timers) clearTimeout(t);
			timers.clear();
			if (saveTimer) {
				clearTimeout(saveTimer);
				saveTimer = undefined;
			}
			saveNow();
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			server.closeAllConnections();
			webhookAgent.destroy();
			await closed;
		},
	};
	return sim;
}
