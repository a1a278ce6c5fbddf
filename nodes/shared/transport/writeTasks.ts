import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from './client';
import { responseBody } from './errors';
import { readTasksByUid } from './queryTasks';

/**
 * One task write requested by one input item.
 * - `create`: a new task with a client-chosen uid (so a retry can never make a second one); a taken uid is an error;
 * - `upsert`: the task ends with these values whether it existed or not, its other custom fields kept;
 * - `patch`: only the given keys (and custom fields) change on an existing task.
 */
export interface TaskWrite {
	mode: 'create' | 'upsert' | 'patch';
	uid: string;
	body: IDataObject;
	itemIndex: number;
}

export type WriteResult = { task: IDataObject } | { error: Error };

export interface WriteOptions {
	/** Items per request to /tasks/batch; 1 sends each write to /tasks/{uid}. */
	batchSize: number;
	/** Send nothing more after a batch failed (the node stops at the first error without Continue On Fail). */
	stopOnError?: boolean;
	/** Current tasks the caller has already read (Sync Backlog's listing): not read again. A uid mapped to undefined was read and has no task. */
	known?: Map<string, IDataObject | undefined>;
	/**
	 * Read the custom fields of the tasks a PATCH batch sends again just before sending it (Sync Backlog, whose listing
	 * may be minutes old): a key set meanwhile by someone else is kept even where PATCH replaces `fields`.
	 */
	rereadBeforePatch?: boolean;
}

function sameValue(actual: unknown, wanted: unknown): boolean {
	if (typeof actual === 'string' && typeof wanted === 'string') {
		if (actual === wanted) return true;
		const [a, b] = [Date.parse(actual), Date.parse(wanted)];
		return /^\d{4}-\d\d-\d\d/.test(wanted) && !Number.isNaN(a) && a === b;
	}
	if (actual && wanted && typeof actual === 'object' && typeof wanted === 'object') {
		if (Array.isArray(actual) !== Array.isArray(wanted)) return false;
		const keys = new Set([...Object.keys(actual), ...Object.keys(wanted)]);
		return [...keys].every((key) =>
			sameValue((actual as IDataObject)[key], (wanted as IDataObject)[key]),
		);
	}
	return actual === wanted || (actual == null && wanted == null);
}

/**
 * Whether the task carries the values of the body, `fields` compared key by key. With `shownOnly`, a task property
 * the task does not show is left out: `assignee_email` and `status_global` are written but are not part of a task's
 * response (spec 2.2), so no answer can show them.
 */
function carries(task: IDataObject, body: IDataObject, shownOnly: boolean): boolean {
	return Object.entries(body).every(([key, wanted]) => {
		if (key === 'fields' && wanted && typeof wanted === 'object') {
			const fields = (task.fields ?? {}) as IDataObject;
			return Object.entries(wanted).every(([name, value]) => sameValue(fields[name], value));
		}
		return (shownOnly && !(key in task)) || sameValue(task[key], wanted);
	});
}

/** Nothing to write: the task holds every value of the body (a value it does not show cannot be known, so it is sent). */
export const hasValues = (task: IDataObject, body: IDataObject): boolean => carries(task, body, false);

/**
 * Our own write: every value the task shows is the one we sent. Create decides with it that a task with its uid is its
 * own earlier attempt (a retry), not someone else's; a value the answer does not echo would otherwise make it so.
 */
const showsOurValues = (task: IDataObject, body: IDataObject): boolean => carries(task, body, true);

/** The custom fields of `wanted` whose value the task does not hold already: what a write has to change. */
export function changedFields(task: IDataObject | undefined, wanted: IDataObject): IDataObject {
	const current = (task?.fields ?? {}) as IDataObject;
	const changed: IDataObject = {};
	for (const [name, value] of Object.entries(wanted)) {
		if (!(name in current) || !sameValue(current[name], value)) changed[name] = value;
	}
	return changed;
}

type Method = 'PUT' | 'PATCH';

/** One request's worth of work: the values to write for a uid, and the write (input item) it answers. */
interface Planned {
	method: Method;
	uid: string;
	/** What the write sets; a PATCH sends it over the task's `current` custom fields (see sentBody). */
	body: IDataObject;
	/** The task as last read, for a PATCH: its custom fields are sent along, so none is lost where PATCH replaces. */
	current?: IDataObject;
	itemIndex: number;
	/** For a PUT: what to do when the answer shows the task existed after all (created meanwhile by someone else). */
	ifExisted?: 'patch' | 'fail';
}

/** Later values win; custom fields are merged key by key, as applying the writes one after the other would. */
function mergeBodies(earlier: IDataObject, later: IDataObject): IDataObject {
	const merged: IDataObject = { ...earlier, ...later };
	if (earlier.fields || later.fields) {
		merged.fields = { ...((earlier.fields ?? {}) as IDataObject), ...((later.fields ?? {}) as IDataObject) };
	}
	return merged;
}

/** The body of a PATCH that keeps every custom field it was not asked to change, whether the server merges or replaces. */
function sentBody({ body, current }: Planned): IDataObject {
	if (!body.fields || !current) return body;
	return { ...body, fields: { ...((current.fields ?? {}) as IDataObject), ...(body.fields as IDataObject) } };
}

function takenError(client: BacklogClient, uid: string, current: IDataObject, itemIndex: number): Error {
	const title = ((current.fields ?? {}) as IDataObject).title;
	return new NodeOperationError(
		client.ctx.getNode(),
		`Item ${itemIndex}: a task with UID ${uid}${typeof title === 'string' ? ` ("${title}")` : ''} already exists; Create never changes an existing task`,
		{ itemIndex, description: 'Use Create or Update to change it, or leave the UID empty to create a new task.' },
	);
}

/** Batch size the server accepted, per client (one run): a server may cap batches without documenting it. */
const acceptedBatchSize = new WeakMap<BacklogClient, number>();

/**
 * Whether an error says the batch was too long, and the size to try next: a 413, or a 422 about the `items` list
 * itself ("ensure this value has at most 50 items", a `loc` ending at `items`), never one item's message ("fields.title:
 * value too long"), which names the item that fails, not the batch.
 */
function tooLarge(error: unknown, count: number): number | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	const body = responseBody(error);
	const text = `${error.message} ${typeof body === 'string' ? body : JSON.stringify(body ?? '')}`;
	if (error.httpCode !== '413' && !(error.httpCode === '422' && aboutTheList(body, text) && failingItems(error, count).size === 0)) {
		return undefined;
	}
	const stated = Number(/at most (\d+)/i.exec(text)?.[1]);
	const next = Number.isInteger(stated) && stated >= 1 && stated < count ? stated : Math.floor(count / 2);
	return Math.max(1, next);
}

/** A 422 about the length of the `items` list: a detail located at `items` itself, or a message counting items. */
function aboutTheList(body: unknown, text: string): boolean {
	const detail = body && typeof body === 'object' && Array.isArray((body as IDataObject).detail) ? ((body as IDataObject).detail as IDataObject[]) : [];
	const located = detail.some((entry) => Array.isArray(entry?.loc) && entry.loc[entry.loc.length - 1] === 'items');
	const counted = /(at most|no more than|up to|maximum( of)?|max\.?|limit( is| of)?)\s*:?\s*\d+\s*(items|tasks|entries)|too many (items|tasks|entries)|batch (is )?too (large|long|big)|batch size/i;
	return located || counted.test(text);
}

async function sendOne(client: BacklogClient, write: Planned): Promise<IDataObject> {
	const path = `/tasks/${write.uid}`;
	const body = write.method === 'PUT' ? { ...write.body, uid: write.uid } : sentBody(write);
	return await client.request<IDataObject>({ method: write.method, path, body, itemIndex: write.itemIndex });
}

/** Indexes of the batch items a 422 names, e.g. `loc: ["body", "items", 3, "fields", "title"]`. */
function failingItems(error: Error, count: number): Map<number, string> {
	const failing = new Map<number, string>();
	const body = (responseBody(error) ?? {}) as IDataObject;
	const detail = Array.isArray(body.detail) ? (body.detail as IDataObject[]) : [];
	for (const entry of detail) {
		const loc = Array.isArray(entry?.loc) ? entry.loc : [];
		const at = loc.findIndex((part) => part === 'items');
		const index = Number(loc[at + 1]);
		if (at < 0 || !Number.isInteger(index) || index < 0 || index >= count) continue;
		const field = loc.slice(at + 2).join('.');
		const text = `${field ? `${field}: ` : ''}${String(entry.msg ?? entry.message ?? 'invalid')}`;
		failing.set(index, failing.has(index) ? `${failing.get(index)}; ${text}` : text);
	}
	return failing;
}

function notInAnswer(client: BacklogClient, write: Planned): Error {
	return new NodeOperationError(
		client.ctx.getNode(),
		`Item ${write.itemIndex}: the service's answer to the batch did not include task ${write.uid}, so whether it was written is not known`,
		{
			itemIndex: write.itemIndex,
			description: 'Run the node again: the write is idempotent (same uid), so a task already written is not written twice.',
		},
	);
}

function isStatus(error: unknown, status: number): boolean {
	return error instanceof NodeApiError && error.httpCode === String(status);
}

/**
 * Sends one batch. A batch is written whole or not at all, so when the service rejects it (422) the items it
 * names are failed and the others are sent again; when it names none, the batch is halved until each item
 * gets its own answer. A batch refused for its length is answered with the size to retry with. Any other
 * failure fails every item of the batch: none is reported as done.
 */
async function writeBatch(client: BacklogClient, writes: Planned[]): Promise<WriteResult[] | { retryWith: number }> {
	if (writes.length === 1) {
		try {
			return [{ task: await sendOne(client, writes[0]) }];
		} catch (error) {
			return [{ error: error as Error }];
		}
	}
	const items = writes.map((write) => ({ ...sentBody(write), uid: write.uid }));
	try {
		const response = await client.request<{ items?: IDataObject[] }>({
			method: writes[0].method,
			path: '/tasks/batch',
			body: { items },
			itemIndex: writes[0].itemIndex,
		});
		const returned = Array.isArray(response?.items) ? response.items : [];
		const byUid = new Map(returned.map((task) => [String(task.uid).toLowerCase(), task]));
		// By uid only: a task at the same position may be another one, and its values would be taken for this item's.
		return writes.map((write) => {
			const task = byUid.get(write.uid);
			return task ? { task } : { error: notInAnswer(client, write) };
		});
	} catch (error) {
		const retryWith = tooLarge(error, writes.length);
		if (retryWith !== undefined) return { retryWith };
		if (!isStatus(error, 422)) return writes.map(() => ({ error: error as Error }));
		const failing = failingItems(error as Error, writes.length);
		if (failing.size === 0) {
			const half = Math.ceil(writes.length / 2);
			return [...(await writeAll(client, writes.slice(0, half), half, false)), ...(await writeAll(client, writes.slice(half), half, false))];
		}
		const rest = writes.filter((_, index) => !failing.has(index));
		const restResults = rest.length > 0 ? await writeAll(client, rest, rest.length, false) : [];
		let next = 0;
		return writes.map((write, index) => {
			const reason = failing.get(index);
			if (reason === undefined) return restResults[next++];
			const itemError = new NodeApiError(
				(error as NodeApiError).node,
				{ status: 422, message: reason },
				{
					message: `The service rejected task ${write.uid} (422 Unprocessable Entity): ${reason}`,
					description: 'Correct the field named in the message in this input item.',
					httpCode: '422',
					itemIndex: write.itemIndex,
				},
			);
			return { error: itemError };
		});
	}
}

/** Reads again, just before their batch is sent, the tasks whose custom fields a PATCH sends along. */
async function reread(client: BacklogClient, batch: Planned[]): Promise<Planned[]> {
	const uids = batch.filter((write) => write.body.fields).map((write) => write.uid);
	if (uids.length === 0) return batch;
	const fresh = await readTasksByUid(client, uids, batch[0].itemIndex);
	return batch.map((write) => ({ ...write, current: fresh.get(write.uid) ?? write.current }));
}

/**
 * Sends the planned writes of one method in batches of at most `batchSize` (or the smaller size the server
 * accepted, learned for the rest of the run). With `stopOnError`, nothing is sent after a batch that failed.
 * With `fresh`, each batch's tasks are read again just before it is sent (WriteOptions.rereadBeforePatch).
 */
async function writeAll(client: BacklogClient, writes: Planned[], batchSize: number, stopOnError: boolean, fresh = false): Promise<WriteResult[]> {
	const results: WriteResult[] = [];
	while (results.length < writes.length) {
		if (stopOnError && results.some((result) => 'error' in result)) {
			const reason = new Error('Not sent: an earlier batch of this node failed');
			while (results.length < writes.length) results.push({ error: reason });
			break;
		}
		const size = Math.max(1, Math.min(Math.floor(batchSize), acceptedBatchSize.get(client) ?? Infinity));
		let batch = writes.slice(results.length, results.length + size);
		if (fresh) {
			try {
				batch = await reread(client, batch);
			} catch (error) {
				// Not read, not written: the batch's items fail with the read's error.
				results.push(...batch.map(() => ({ error: error as Error })));
				continue;
			}
		}
		const outcome = await writeBatch(client, batch);
		if ('retryWith' in outcome) {
			acceptedBatchSize.set(client, outcome.retryWith);
			continue;
		}
		results.push(...outcome);
	}
	return results;
}

/**
 * Writes tasks through /tasks/batch (or /tasks/{uid} for one), answering for each write in input order.
 *
 * The spec leaves open whether a PUT on an existing uid is a no-op or replaces, whether PATCH replaces `fields` or
 * merges it, and what a create with a taken uid does. So whatever the server's reading: the current tasks are read
 * in bulk first; an existing task is only ever PATCHed, with its custom fields merged on our side; a PUT only
 * creates; Create refuses a taken uid (unless the task already holds every value it shows of ours: our own earlier
 * attempt). A batch's answer is read by uid only.
 * The same uid twice in one input is one write with the later values winning.
 */
export async function writeTasks(client: BacklogClient, writes: TaskWrite[], options: WriteOptions): Promise<WriteResult[]> {
	const groups = new Map<string, { write: TaskWrite; positions: number[] }>();
	writes.forEach((write, position) => {
		const group = groups.get(write.uid);
		if (!group) groups.set(write.uid, { write: { ...write }, positions: [position] });
		else {
			group.write = { ...write, body: mergeBodies(group.write.body, write.body) };
			group.positions.push(position);
		}
	});
	const unique = [...groups.values()].map(({ write }) => write);
	const needsRead = unique.filter((write) => write.mode !== 'patch' || write.body.fields).map((write) => write.uid);
	const known = options.known ?? new Map<string, IDataObject | undefined>();
	const toRead = needsRead.filter((uid) => !known.has(uid));
	const current = new Map(known);
	if (toRead.length > 0) {
		try {
			for (const [uid, task] of await readTasksByUid(client, toRead, unique[0]?.itemIndex)) current.set(uid, task);
		} catch (error) {
			// Nothing can be written safely without the read: every write gets its error (Continue On Fail keeps them apart).
			return writes.map(() => ({ error: error as Error }));
		}
	}

	const outcome = new Map<string, WriteResult>();
	const puts: Planned[] = [];
	const patches: Planned[] = [];
	for (const write of unique) {
		const task = current.get(write.uid);
		const { uid, body, itemIndex } = write;
		if (write.mode === 'patch') {
			patches.push({ method: 'PATCH', uid, body, current: task, itemIndex });
		} else if (!task) {
			puts.push({ method: 'PUT', uid, body, itemIndex, ifExisted: write.mode === 'create' ? 'fail' : 'patch' });
		} else if (write.mode === 'create' ? showsOurValues(task, body) : hasValues(task, body)) {
			// Nothing to change (for Create: our own earlier attempt landed, e.g. before a retry).
			outcome.set(uid, { task });
		} else if (write.mode === 'create') {
			outcome.set(uid, { error: takenError(client, uid, task, itemIndex) });
		} else {
			patches.push({ method: 'PATCH', uid, body, current: task, itemIndex });
		}
	}

	const stopOnError = options.stopOnError === true;
	const putResults = await writeAll(client, puts, options.batchSize, stopOnError);
	const afterPut: Planned[] = [];
	puts.forEach((put, index) => {
		const result = putResults[index];
		if ('task' in result && !showsOurValues(result.task, put.body)) {
			// Created by someone else between our read and our PUT, and the server kept its values.
			if (put.ifExisted === 'fail') outcome.set(put.uid, { error: takenError(client, put.uid, result.task, put.itemIndex) });
			else afterPut.push({ ...put, method: 'PATCH', current: result.task });
		} else outcome.set(put.uid, result);
	});
	const failedAlready = stopOnError && [...outcome.values()].some((result) => 'error' in result);
	const patchList = [...patches, ...afterPut];
	const patchResults = failedAlready
		? patchList.map(() => ({ error: new Error('Not sent: an earlier batch of this node failed') }))
		: await writeAll(client, patchList, options.batchSize, stopOnError, options.rereadBeforePatch === true);
	patchList.forEach((patch, index) => outcome.set(patch.uid, patchResults[index]));

	const results: WriteResult[] = new Array(writes.length);
	for (const { write, positions } of groups.values()) {
		for (const position of positions) results[position] = outcome.get(write.uid) ?? { error: new Error(`Task ${write.uid} was not written`) };
	}
	return results;
}
