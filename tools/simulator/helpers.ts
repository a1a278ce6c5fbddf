// Constants and small helpers shared by the simulator's modules: ids, dates, the seeded random generator, and the
// HTTP errors (FastAPI-style 422 issues included) that the handlers throw and the server answers.
import { createHash } from 'node:crypto';

import type { Issue, Loc } from './query';
import type { TaskStatus } from './types';

export const API_PREFIX = '/api/v1';
export const TASK_EXPANDS = ['comments', 'children', 'parent', 'assignee'] as const;
export const COMMENT_EXPANDS = ['task', 'author'] as const;
export const STATUSES: readonly TaskStatus[] = ['TODO', 'STARTED', 'DONE'];
export const STATUS_GLOBAL = ['TODO', 'DONE'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_RE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i;
export const USER_EPOCH = '2024-01-01T00:00:00.000Z';
export const MAX_BODY_BYTES = 50 * 1024 * 1024;
export const DAY_MS = 24 * 60 * 60 * 1000;

export function isUuid(v: unknown): v is string {
	return typeof v === 'string' && UUID_RE.test(v);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseDate(v: unknown): string | undefined {
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

export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: unknown,
		readonly headers: Record<string, string> = {},
		/** A body given by the caller (scripted fault): sent as is, never reshaped by `errorBodies`. */
		readonly verbatim = false,
	) {
		super(
			typeof body === 'object' && body && 'message' in body
				? String((body as { message: unknown }).message)
				: `HTTP ${status}`,
		);
	}
}

export function httpError(status: number, message: string): HttpError {
	return new HttpError(status, { message });
}

export function unprocessable(issues: Issue[]): HttpError {
	return new HttpError(422, { detail: issues });
}

export function issue(loc: Loc, msg: string, type: string): Issue {
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

export function enumIssue(loc: Loc, values: readonly string[]): Issue {
	return issue(
		loc,
		`value is not a valid enumeration member; permitted: ${values.map((v) => `'${v}'`).join(', ')}`,
		'type_error.enum',
	);
}

export function msgIssue(loc: Loc, kind: keyof typeof MSG): Issue {
	return issue(loc, MSG[kind][0], MSG[kind][1]);
}
