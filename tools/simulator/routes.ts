/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The API's routes: which method and path go to which handler (under /api/v1, after auth, rate limit and faults).
import type * as http from 'node:http';

import {
	HttpError,
	TASK_EXPANDS,
	httpError,
	isUuid,
	msgIssue,
	unprocessable,
	uuidFromName,
} from './helpers';
import { batch } from './batch';
import { createComment, getComment, listComments, patchComment } from './comments';
import { listTasks, queryTasks } from './listing';
import type { Store } from './store';
import { createTask, deleteTask, mustTask, patchTask, putTask, renderTask } from './tasks';
import { expandParams, parseExpand } from './validation';

export interface Ctx {
	method: string;
	seg: string[];
	sp: URLSearchParams;
	body: unknown;
	token: string;
	headers: http.IncomingHttpHeaders;
}

export interface Result {
	status?: number;
	body: unknown;
}

export const pathUid = (v: string, name: string): string => {
	if (!isUuid(v)) throw unprocessable([msgIssue(['path', name], 'uuid')]);
	return v.toLowerCase();
};

export const route = (store: Store, ctx: Ctx): Result => {
	const { method, seg, sp, body } = ctx;
	const allow = (methods: string[]): void => {
		if (!methods.includes(method))
			throw new HttpError(405, { message: 'Method Not Allowed' }, { allow: methods.join(', ') });
	};
	if (seg.length === 2 && seg[0] === 'accounts' && seg[1] === 'me') {
		allow(['GET']);
		return {
			body: {
				uid: uuidFromName('task-backlog-simulator:account'),
				name: 'Simulated account',
				user: {
					...store.userFor(store.tokenUser(ctx.token), 'super_admin'),
					email: 'admin@simulated.example',
				},
			},
		};
	}
	if (seg[0] !== 'tasks') throw httpError(404, 'Not Found');
	if (seg.length === 1) {
		allow(['GET', 'POST']);
		if (method === 'GET') return { body: listTasks(store, sp) };
		return { body: createTask(store, body) };
	}
	if (seg.length === 2 && seg[1] === 'query') {
		allow(['POST']);
		return { body: queryTasks(store, sp, body) };
	}
	if (seg.length === 2 && seg[1] === 'batch') {
		allow(['POST', 'PUT', 'PATCH']);
		return { body: batch(store, method as 'POST' | 'PUT' | 'PATCH', body) };
	}
	if (seg.length === 2) {
		allow(['GET', 'PUT', 'PATCH', 'DELETE']);
		const uid = pathUid(seg[1], 'uid');
		if (method === 'GET') {
			const expand = parseExpand(expandParams(sp), TASK_EXPANDS, ['query', 'expand']);
			return { body: renderTask(store, mustTask(store, uid), expand) };
		}
		if (method === 'PUT') return { body: putTask(store, uid, body) };
		if (method === 'PATCH') return { body: patchTask(store, uid, body) };
		return { body: deleteTask(store, uid) };
	}
	if (seg[2] !== 'comments' || seg.length > 4) throw httpError(404, 'Not Found');
	if (seg.length === 3) {
		allow(['GET', 'POST']);
		const taskUid = pathUid(seg[1], method === 'GET' ? 'uid' : 'task_uid');
		if (method === 'POST') return { body: createComment(store, ctx, taskUid, undefined, body) };
		return { body: listComments(store, taskUid, sp) };
	}
	allow(['GET', 'PUT', 'PATCH']);
	const taskUid = pathUid(seg[1], 'task_uid');
	const uid = pathUid(seg[3], 'uid');
	if (method === 'GET') return { body: getComment(store, taskUid, uid, sp) };
	if (method === 'PUT') return { body: createComment(store, ctx, taskUid, uid, body) };
	return { body: patchComment(store, taskUid, uid, body) };
};
