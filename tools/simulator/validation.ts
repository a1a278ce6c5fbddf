// Validation of request bodies and query-string parameters, answered as FastAPI does: 422 with a list of issues.
import { extraKeyIssues } from './readings';
import type { Issue, Loc } from './query';
import {
	STATUSES,
	STATUS_GLOBAL,
	enumIssue,
	isPlainObject,
	isUuid,
	issue,
	msgIssue,
	parseDate,
	unprocessable,
} from './helpers';
import type { TaskFields } from './types';

export type Kind =
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
export const TASK_BODY: Record<string, Kind> = {
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

export const COMMENT_BODY: Record<string, Kind> = {
	uid: 'uid',
	archived: 'bool',
	task_uid: 'uid',
	author_uid: 'uuidNullable',
	text: 'text',
	blocks: 'blocks',
	created_at: 'dateOptional',
	updated_at: 'dateOptional',
};

export type Clean = Record<string, unknown>;

export function validateShape(
	spec: Record<string, Kind>,
	body: unknown,
	loc: Loc,
): { clean: Clean; issues: Issue[] } {
	const clean: Clean = {};
	const issues: Issue[] = [];
	if (!isPlainObject(body)) {
		issues.push(
			body === undefined || body === null ? msgIssue(loc, 'missing') : msgIssue(loc, 'dict'),
		);
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

export type Mode = 'create' | 'replace' | 'patch';

export function titleIssue(
	fields: Record<string, unknown>,
	loc: Loc,
	required: boolean,
): Issue | undefined {
	const at = [...loc, 'fields', 'title'];
	if (!('title' in fields) || fields.title === undefined)
		return required ? msgIssue(at, 'missing') : undefined;
	const t = fields.title;
	if (t === null) return msgIssue(at, 'none');
	if (typeof t !== 'string') return msgIssue(at, 'str');
	if (t.trim() === '')
		return issue(
			at,
			'ensure this value has at least 1 characters',
			'value_error.any_str.min_length',
		);
	return undefined;
}

/**
 * Validates a task body. `create` needs fields.title; `replace` (PUT batch over an existing task) needs it only when
 * fields are given, since they replace the whole object; `patch` only checks a title that is present.
 * `rejectUnknown` (reading `unknownKeys: reject`) makes keys outside the body list 422s instead of being dropped.
 */
export function validateTaskBody(
	body: unknown,
	loc: Loc,
	mode: Mode,
	rejectUnknown = false,
): { clean: Clean; issues: Issue[] } {
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

export function mergeFields(base: TaskFields, patch: Record<string, unknown>): TaskFields {
	const out: TaskFields = { ...base };
	for (const [k, v] of Object.entries(patch)) {
		// A key patched to null is removed: the only way to drop a custom field.
		if (v === null) delete out[k];
		else out[k] = v;
	}
	return out;
}

export function blockText(blocks: unknown[]): string {
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

// Query-string parameters

export function parseBoolParam(v: string | null, loc: Loc, fallback: boolean): boolean {
	if (v === null || v === '') return fallback;
	const s = v.toLowerCase();
	if (['true', '1', 'yes', 'on'].includes(s)) return true;
	if (['false', '0', 'no', 'off'].includes(s)) return false;
	throw unprocessable([msgIssue(loc, 'bool')]);
}

export function parseExpand(values: unknown[], allowed: readonly string[], loc: Loc): string[] {
	const out: string[] = [];
	const issues: Issue[] = [];
	values
		.flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
		.forEach((v, i) => {
			if (typeof v === 'string' && v.trim() === '') return;
			const s = typeof v === 'string' ? v.trim() : v;
			if (typeof s !== 'string' || !allowed.includes(s))
				issues.push(enumIssue([...loc, i], allowed));
			else if (!out.includes(s)) out.push(s);
		});
	if (issues.length) throw unprocessable(issues);
	return out;
}

export function expandParams(sp: URLSearchParams): string[] {
	// `expand=a&expand=b`, `expand=a,b` and `expand[]=a` (n8n's bracket array format) are all accepted.
	return [...sp.getAll('expand'), ...sp.getAll('expand[]')];
}
