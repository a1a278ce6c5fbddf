// Tasks: staging a write (every batch item is staged before any is written), committing it (child counters,
// webhook events), rendering with expansions, and the single-task endpoints.
import { randomUUID } from 'node:crypto';

import { deepEqual, type Loc } from './query';
import {
	DAY_MS,
	httpError,
	isPlainObject,
	isUuid,
	issue,
	unprocessable,
	uuidFromName,
} from './helpers';
import { cmpKeys } from './pagination';
import type { Store } from './store';
import type { Task, TaskBody, TaskComment, TaskFields } from './types';
import { mergeFields, validateTaskBody, type Clean, type Mode } from './validation';

export interface Staged {
	uid: string;
	prev: Task | undefined;
	next: Task;
	changed: boolean;
}

export const blankTask = (uid: string, stamp: string): Task => ({
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
export const stageTask = (
	store: Store,
	prev: Task | undefined,
	uid: string,
	body: Clean,
	mode: Mode,
	stampMs?: number,
): Staged => {
	const nowMs = stampMs ?? store.peekStamp();
	const now = new Date(nowMs).toISOString();
	const next: Task = prev ? structuredClone(prev) : blankTask(uid, now);
	const t = next as unknown as Record<string, unknown>;
	const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(body, k);
	// Reading `updatedAtFrom: body`: a caller's updated_at is kept (e.g. its ticket's, hours old); internal_updated_at
	// stays the server's own stamp. Reading `server`: updated_at is the server's.
	const callerUpdatedAt =
		store.R.updatedAtFrom === 'body' && typeof body.updated_at === 'string'
			? new Date(Date.parse(body.updated_at)).toISOString()
			: undefined;
	if (!prev && store.R.internalStamps === 'null') {
		next.internal_created_at = null;
		next.internal_updated_at = null;
	}
	for (const [k, v] of Object.entries(body)) {
		switch (k) {
			// uid comes from the path or the store; status_global has no stated effect; updated_at: see above.
			case 'uid':
			case 'status_global':
			case 'assignee_email':
			case 'updated_at':
				break;
			case 'created_at':
				if (!prev) next.created_at = v as string;
				break;
			case 'fields':
				next.fields =
					mode === 'patch'
						? mergeFields(next.fields, v as Record<string, unknown>)
						: { ...(v as TaskFields) };
				break;
			default:
				t[k] = v;
		}
	}
	if (typeof body.assignee_email === 'string' && !has('assignee_uid')) {
		const email = body.assignee_email.trim().toLowerCase();
		const au = uuidFromName(`task-backlog-simulator:email:${email}`);
		store.users.set(au, email);
		next.assignee_uid = au;
	}
	if (!prev && !has('due_at'))
		next.due_at = new Date(Date.parse(next.created_at) + 7 * DAY_MS).toISOString();
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
	if (callerUpdatedAt !== undefined) next.updated_at = callerUpdatedAt;
	const isChange = !prev || store.R.updatedAt === 'everyWrite' || !deepEqual(prev, next);
	if (isChange) {
		const stamp = store.takeStamp(nowMs);
		next.updated_at = callerUpdatedAt ?? stamp;
		if (store.R.internalStamps === 'filled') next.internal_updated_at = stamp;
	}
	return { uid, prev, next, changed: isChange };
};

export const recount = (store: Store, parentUid: string): void => {
	const parent = store.tasks.get(parentUid);
	if (!parent) return;
	let n = 0;
	let done = 0;
	for (const t of store.tasks.values()) {
		if (t.parent_uid === parentUid) {
			n++;
			if (t.status === 'DONE') done++;
		}
	}
	parent.num_children = n;
	parent.num_children_done = done;
};

export const eventKind = (prev: Task | undefined, next: Task): string => {
	if (!prev) return 'task.created';
	if (prev.status !== next.status) {
		if (next.status === 'DONE') return 'task.completed';
		if (next.status === 'STARTED') return 'task.started';
		return prev.status === 'DONE' ? 'task.reopened' : 'task.paused';
	}
	if (prev.assignee_uid !== next.assignee_uid)
		return next.assignee_uid ? 'task.assigned' : 'task.unassigned';
	return 'task.updated';
};

/** Writes staged store.tasks, refreshes child counters, then emits one event per real change. */
export const commit = (store: Store, staged: Staged[], silent = false): void => {
	const parents = new Set<string>();
	for (const s of staged) {
		if (!s.changed) continue;
		store.tasks.set(s.uid, s.next);
		if (s.next.parent_uid) {
			store.hasParentLinks = true;
			parents.add(s.next.parent_uid);
		}
		if (s.prev?.parent_uid) parents.add(s.prev.parent_uid);
		// A parent created after its children must count them.
		if (!s.prev && store.hasParentLinks) parents.add(s.uid);
	}
	parents.forEach((uid) => recount(store, uid));
	if (staged.some((s) => s.changed)) store.changed();
	if (silent) return;
	for (const s of staged) if (s.changed) store.emit(eventKind(s.prev, s.next), s.next);
};

// ---- rendering with expansions
export const sortByCreation = <T extends { created_at: string; uid: string }>(a: T, b: T): number =>
	cmpKeys([a.created_at, a.uid], [b.created_at, b.uid], [1, 1]);

export const renderTasks = (store: Store, list: Task[], expand: string[]): Task[] => {
	if (!expand.length) return list;
	let commentsByTask: Map<string, TaskComment[]> | undefined;
	let childrenByParent: Map<string, Task[]> | undefined;
	if (expand.includes('comments')) {
		commentsByTask = new Map();
		for (const c of store.comments.values()) {
			const l = commentsByTask.get(c.task_uid) ?? [];
			l.push(c);
			commentsByTask.set(c.task_uid, l);
		}
	}
	if (expand.includes('children')) {
		childrenByParent = new Map();
		for (const t of store.tasks.values()) {
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
		if (expand.includes('parent'))
			out.parent = t.parent_uid ? (store.tasks.get(t.parent_uid) ?? null) : null;
		if (expand.includes('assignee'))
			out.assignee = t.assignee_uid ? store.userFor(t.assignee_uid) : null;
		return out;
	});
};
export const renderTask = (store: Store, t: Task, expand: string[] = []): Task =>
	renderTasks(store, [t], expand)[0];

export const mustTask = (store: Store, uid: string): Task => {
	const t = store.tasks.get(uid);
	if (!t) throw httpError(404, `Task ${uid} not found`);
	return t;
};

export const checkBodyUid = (clean: Clean, uid: string, loc: Loc): void => {
	if (clean.uid !== undefined && clean.uid !== uid) {
		throw unprocessable([
			issue([...loc, 'uid'], 'uid in body does not match the path', 'value_error'),
		]);
	}
};

export const rejectUnknown = (store: Store): boolean => store.R.unknownKeys === 'reject';
/** PATCH mode under reading patchFields: `replace` sets fields to exactly the object sent (title required). */
export const patchMode = (store: Store): Mode =>
	store.R.patchFields === 'replace' ? 'replace' : 'patch';

export const createTask = (store: Store, body: unknown): Task => {
	const uid0 = isPlainObject(body) && isUuid(body.uid) ? body.uid.toLowerCase() : undefined;
	// Reading postExisting: `replace` overwrites an existing task like a PUT replace instead of answering 409.
	const overwrite =
		uid0 !== undefined && store.tasks.has(uid0) && store.R.postExisting === 'replace';
	const { clean, issues } = validateTaskBody(
		body,
		['body'],
		overwrite ? 'replace' : 'create',
		rejectUnknown(store),
	);
	if (issues.length) throw unprocessable(issues);
	const uid = (clean.uid as string | undefined) ?? randomUUID();
	const existing = store.tasks.get(uid);
	if (existing && !overwrite) throw httpError(409, `Task ${uid} already exists`);
	const s = stageTask(store, existing, uid, clean, existing ? 'replace' : 'create');
	commit(store, [s]);
	return store.tasks.get(uid) ?? s.next;
};

export const putTask = (store: Store, uid: string, body: unknown): Task => {
	const existing = store.tasks.get(uid);
	// Reading putExisting: `noop` is spec 4.2 rule 1 (later PUTs are no-ops); `replace` is 4.5 rule 1 ("creates or
	// updates"), applied like PUT /store.tasks/batch: given top-level properties replace, fields replaced whole.
	const replace = existing !== undefined && store.R.putExisting === 'replace';
	const { clean, issues } = validateTaskBody(
		body,
		['body'],
		existing ? (replace ? 'replace' : 'patch') : 'create',
		rejectUnknown(store),
	);
	if (replace && clean.parent_uid === uid)
		issues.push(issue(['body', 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
	if (issues.length) throw unprocessable(issues);
	checkBodyUid(clean, uid, ['body']);
	if (existing && !replace) return existing;
	const s = stageTask(store, existing, uid, clean, existing ? 'replace' : 'create');
	commit(store, [s]);
	return store.tasks.get(uid) ?? s.next;
};

export const patchTask = (store: Store, uid: string, body: unknown): Task => {
	const existing = mustTask(store, uid);
	const mode = patchMode(store);
	const { clean, issues } = validateTaskBody(body, ['body'], mode, rejectUnknown(store));
	if (clean.parent_uid === uid)
		issues.push(issue(['body', 'parent_uid'], 'a task cannot be its own parent', 'value_error'));
	if (issues.length) throw unprocessable(issues);
	checkBodyUid(clean, uid, ['body']);
	const s = stageTask(store, existing, uid, clean, mode);
	commit(store, [s]);
	return store.tasks.get(uid) ?? s.next;
};

export const deleteTask = (store: Store, uid: string): Task => {
	const t = mustTask(store, uid);
	store.tasks.delete(uid);
	for (const [cu, c] of store.comments) if (c.task_uid === uid) store.comments.delete(cu);
	if (t.parent_uid) recount(store, t.parent_uid);
	store.changed();
	store.emit('task.deleted', t);
	return t;
};

export const seedTasks = (
	store: Store,
	n: number,
	make?: (i: number) => Partial<TaskBody>,
): Task[] => {
	const out: Task[] = [];
	for (let i = 0; i < n; i++) {
		const extra = make?.(i) ?? {};
		const body = { ...extra, fields: { title: `Seeded task ${i + 1}`, ...(extra.fields ?? {}) } };
		const { clean, issues } = validateTaskBody(body, ['seed', i], 'create');
		if (issues.length) throw new Error(`seedTasks: invalid task ${i}: ${JSON.stringify(issues)}`);
		const uid = (clean.uid as string | undefined) ?? randomUUID();
		if (store.tasks.has(uid)) throw new Error(`seedTasks: task ${uid} already exists`);
		const s = stageTask(store, undefined, uid, clean, 'create');
		commit(store, [s], true);
		out.push(s.next);
	}
	return out;
};
