// POST, PUT and PATCH /tasks/batch: every item is validated and staged before any is written.
import { randomUUID } from 'node:crypto';

import type { Issue, Loc } from './query';
import { PlainText } from './readings';
import { HttpError, isPlainObject, isUuid, issue, msgIssue, unprocessable } from './helpers';
import type { Store } from './store';
import { commit, patchMode, rejectUnknown, stageTask, type Staged } from './tasks';
import type { Page, Task } from './types';
import { validateTaskBody, type Mode } from './validation';

export const batch = (
	store: Store,
	method: 'POST' | 'PUT' | 'PATCH',
	body: unknown,
): Page<Task> => {
	if (!isPlainObject(body))
		throw unprocessable([
			msgIssue(['body'], body === undefined || body === null ? 'missing' : 'dict'),
		]);
	const items = body.items;
	if (items === undefined || items === null)
		throw unprocessable([msgIssue(['body', 'items'], 'missing')]);
	if (!Array.isArray(items)) throw unprocessable([msgIssue(['body', 'items'], 'list')]);
	const max = store.R.maxBatchSize;
	if (items.length > max) {
		// Reading batchTooLarge: `413` is a plain-text answer that does not say the limit.
		if (store.R.batchTooLarge === '413')
			throw new HttpError(413, new PlainText('Request Entity Too Large'));
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
	const view = (uid: string): Task | undefined => overlay.get(uid) ?? store.tasks.get(uid);
	const staged: Staged[] = [];
	const issues: Issue[] = [];
	const seen = new Set<string>();
	// Reading batchStamp: `perBatch` gives every task written by this request the same instant.
	const batchMs = store.R.batchStamp === 'perBatch' ? store.peekStamp() : undefined;
	items.forEach((item, i) => {
		const loc: Loc = ['body', 'items', i];
		const uid0 = isPlainObject(item) && isUuid(item.uid) ? item.uid.toLowerCase() : undefined;
		const existing = uid0 ? view(uid0) : undefined;
		// Readings batchPutExisting (`noop`: existing store.tasks are left as stored, the body only validated as a PATCH
		// would be) and postExisting (`replace`: POST over an existing uid overwrites it like PUT batch).
		const putNoop =
			method === 'PUT' && existing !== undefined && store.R.batchPutExisting === 'noop';
		const postOverwrite =
			method === 'POST' && existing !== undefined && store.R.postExisting === 'replace';
		const mode: Mode =
			method === 'PATCH'
				? patchMode(store)
				: putNoop
					? 'patch'
					: (method === 'PUT' && existing) || postOverwrite
						? 'replace'
						: 'create';
		const { clean, issues: its } = validateTaskBody(item, loc, mode, rejectUnknown(store));
		if (
			method === 'PATCH' &&
			isPlainObject(item) &&
			(item.uid === undefined || item.uid === null)
		) {
			its.push(msgIssue([...loc, 'uid'], 'missing'));
		}
		// Reading duplicateUids: `reject` refuses the whole batch when a uid comes again (named at the later item).
		if (uid0 !== undefined && store.R.duplicateUids === 'reject') {
			if (seen.has(uid0))
				its.unshift(issue([...loc, 'uid'], 'duplicate uid in batch', 'value_error.duplicate'));
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
		const s = stageTask(store, existing, uid, clean, mode, batchMs);
		overlay.set(uid, s.next);
		staged.push(s);
	});
	if (issues.length) throw unprocessable(issues);
	commit(store, staged);
	return {
		items: staged.map((s) => store.tasks.get(s.uid) ?? s.next),
		meta: {
			limit: staged.length,
			total_count: staged.length,
			self_cursor: '',
			prev_cursor: '',
			next_cursor: '',
		},
	};
};
