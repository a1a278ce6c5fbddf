/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Comments of a task: create (POST, or PUT as an idempotent create), read, list, patch.
import type * as http from 'node:http';
import { randomUUID } from 'node:crypto';

import { deepEqual } from './query';
import {
	COMMENT_EXPANDS,
	httpError,
	isPlainObject,
	isUuid,
	issue,
	msgIssue,
	unprocessable,
} from './helpers';
import { paginate, type Ordering } from './pagination';
import type { Store } from './store';
import { mustTask } from './tasks';
import type { Page, TaskComment, TextBlock } from './types';
import {
	COMMENT_BODY,
	blockText,
	expandParams,
	parseExpand,
	validateShape,
	type Clean,
} from './validation';
import { clampLimit } from './listing';

export const renderComments = (
	store: Store,
	list: TaskComment[],
	expand: string[],
): TaskComment[] =>
	expand.length
		? list.map((c) => {
				const out: TaskComment = { ...c };
				if (expand.includes('task')) {
					const t = store.tasks.get(c.task_uid);
					if (t) out.task = t;
				}
				if (expand.includes('author'))
					out.author = c.author_uid ? store.userFor(c.author_uid) : null;
				return out;
			})
		: list;

/** The request a comment is created by: its headers (Service-User) and bearer token. */
interface Caller {
	headers: http.IncomingHttpHeaders;
	token: string;
}

export const authorFor = (store: Store, ctx: Caller): string => {
	const su = ctx.headers['service-user'];
	return typeof su === 'string' && isUuid(su) ? su.toLowerCase() : store.tokenUser(ctx.token);
};

export const validateComment = (body: unknown, taskUid: string, creating: boolean): Clean => {
	const { clean, issues } = validateShape(COMMENT_BODY, body, ['body']);
	if (isPlainObject(body) && creating) {
		const blocks = clean.blocks as unknown[] | undefined;
		const text = clean.text as string | undefined;
		if (
			(text === undefined || text.trim() === '') &&
			!blocks?.length &&
			!issues.some((i) => i.loc[1] === 'text')
		) {
			issues.push(
				text === undefined
					? msgIssue(['body', 'text'], 'missing')
					: issue(
							['body', 'text'],
							'ensure this value has at least 1 characters',
							'value_error.any_str.min_length',
						),
			);
		}
	}
	if (clean.task_uid !== undefined && clean.task_uid !== taskUid) {
		issues.push(
			issue(['body', 'task_uid'], 'task_uid in body does not match the path', 'value_error'),
		);
	}
	if (issues.length) throw unprocessable(issues);
	return clean;
};

export const createComment = (
	store: Store,
	ctx: Caller,
	taskUid: string,
	uid: string | undefined,
	body: unknown,
): TaskComment => {
	mustTask(store, taskUid);
	const clean = validateComment(body, taskUid, true);
	if (uid && clean.uid !== undefined && clean.uid !== uid) {
		throw unprocessable([
			issue(['body', 'uid'], 'uid in body does not match the path', 'value_error'),
		]);
	}
	const cuid = uid ?? (clean.uid as string | undefined) ?? randomUUID();
	const existing = store.comments.get(cuid);
	if (existing) {
		if (uid) return existing; // PUT: idempotent create, later calls are no-ops
		// Reading postExisting: `replace` overwrites an existing comment, as it does a task, instead of answering 409.
		if (store.R.postExisting !== 'replace') throw httpError(409, `Comment ${cuid} already exists`);
	}
	const stamp = store.takeStamp(store.peekStamp());
	const blocks = (clean.blocks as TextBlock[] | undefined) ?? [];
	const c: TaskComment = {
		uid: cuid,
		archived: (clean.archived as boolean | undefined) ?? false,
		task_uid: taskUid,
		author_uid:
			clean.author_uid !== undefined ? (clean.author_uid as string | null) : authorFor(store, ctx),
		text: (clean.text as string | undefined) || blockText(blocks),
		blocks,
		created_at: (clean.created_at as string | undefined) ?? stamp,
		updated_at: stamp,
	};
	store.comments.set(cuid, c);
	store.changed();
	return c;
};

export const mustComment = (store: Store, taskUid: string, uid: string): TaskComment => {
	const c = store.comments.get(uid);
	if (!c || c.task_uid !== taskUid) throw httpError(404, `Comment ${uid} not found`);
	return c;
};

export const patchComment = (
	store: Store,
	taskUid: string,
	uid: string,
	body: unknown,
): TaskComment => {
	mustTask(store, taskUid);
	const c = mustComment(store, taskUid, uid);
	const clean = validateComment(body, taskUid, false);
	if (clean.uid !== undefined && clean.uid !== uid) {
		throw unprocessable([
			issue(['body', 'uid'], 'uid in body does not match the path', 'value_error'),
		]);
	}
	const next: TaskComment = { ...c };
	for (const k of ['archived', 'author_uid', 'text', 'blocks'] as const) {
		if (clean[k] !== undefined) (next as unknown as Record<string, unknown>)[k] = clean[k];
	}
	if (clean.blocks !== undefined && clean.text === undefined)
		next.text = blockText(next.blocks) || next.text;
	if (store.R.updatedAt === 'everyWrite' || !deepEqual(c, next)) {
		next.updated_at = store.takeStamp(store.peekStamp());
		store.comments.set(uid, next);
		store.changed();
	}
	return store.comments.get(uid) ?? next;
};

const commentOrdering: Ordering<TaskComment> = {
	sig: 'comments',
	key: (c) => [c.created_at, c.uid],
	dirs: [1, 1],
};

export const listComments = (
	store: Store,
	taskUid: string,
	sp: URLSearchParams,
): Page<TaskComment> => {
	mustTask(store, taskUid);
	const limit = clampLimit(store, sp.get('limit'), ['query', 'limit']);
	const expand = parseExpand(expandParams(sp), COMMENT_EXPANDS, ['query', 'expand']);
	const list = [...store.comments.values()].filter((c) => c.task_uid === taskUid);
	const page = paginate(list, commentOrdering, limit, sp.get('cursor') ?? undefined);
	return { items: renderComments(store, page.items, expand), meta: page.meta };
};

export const getComment = (
	store: Store,
	taskUid: string,
	uid: string,
	sp: URLSearchParams,
): TaskComment => {
	mustTask(store, taskUid);
	const expand = parseExpand(expandParams(sp), COMMENT_EXPANDS, ['query', 'expand']);
	return renderComments(store, [mustComment(store, taskUid, uid)], expand)[0];
};
