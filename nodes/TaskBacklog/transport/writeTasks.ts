import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { BacklogClient } from './client';
import { responseBody } from './errors';

/**
 * One task write requested by one input item.
 * - `create`: a new task with a client-chosen uid (so a retry can never make a second one);
 * - `upsert`: the task ends with these values whether it existed or not;
 * - `patch`: only the given keys change on an existing task.
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

/** Whether the task already carries every value of the body (`fields` compared key by key). */
export function hasValues(task: IDataObject, body: IDataObject): boolean {
	return Object.entries(body).every(([key, wanted]) => {
		if (key === 'fields' && wanted && typeof wanted === 'object') {
			const fields = (task.fields ?? {}) as IDataObject;
			return Object.entries(wanted).every(([name, value]) => sameValue(fields[name], value));
		}
		return sameValue(task[key], wanted);
	});
}

async function writeOne(client: BacklogClient, write: TaskWrite): Promise<IDataObject> {
	const path = `/tasks/${write.uid}`;
	const { itemIndex } = write;
	if (write.mode === 'patch') {
		return await client.request({ method: 'PATCH', path, body: write.body, itemIndex });
	}
	const body = { ...write.body, uid: write.uid };
	const task = await client.request<IDataObject>({ method: 'PUT', path, body, itemIndex });
	// PUT /tasks/{uid} leaves an existing task as it was (spec 4.2 rule 1): bring it to the wanted values.
	if (write.mode === 'upsert' && !hasValues(task, write.body)) {
		return await client.request({ method: 'PATCH', path, body: write.body, itemIndex });
	}
	return task;
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

function isStatus(error: unknown, status: number): boolean {
	return error instanceof NodeApiError && error.httpCode === String(status);
}

/**
 * Sends one batch. A batch is written whole or not at all, so when the service rejects it (422) the items it
 * names are failed and the others are sent again; when it names none, the batch is halved until each item
 * gets its own answer. Any other failure fails every item of the batch: none is reported as done.
 */
async function writeBatch(client: BacklogClient, writes: TaskWrite[]): Promise<WriteResult[]> {
	if (writes.length === 1) {
		try {
			return [{ task: await writeOne(client, writes[0]) }];
		} catch (error) {
			return [{ error }];
		}
	}
	const method = writes[0].mode === 'patch' ? 'PATCH' : 'PUT';
	const items = writes.map((write) => ({ ...write.body, uid: write.uid }));
	try {
		const response = await client.request<{ items?: IDataObject[] }>({
			method,
			path: '/tasks/batch',
			body: { items },
			itemIndex: writes[0].itemIndex,
		});
		const returned = Array.isArray(response?.items) ? response.items : [];
		const byUid = new Map(returned.map((task) => [String(task.uid), task]));
		return writes.map((write, position) => {
			const task = byUid.get(write.uid) ?? returned[position];
			return task
				? { task }
				: { error: new Error(`The batch response did not include task ${write.uid}`) };
		});
	} catch (error) {
		if (!isStatus(error, 422)) return writes.map(() => ({ error }));
		const failing = failingItems(error, writes.length);
		if (failing.size === 0) {
			const half = Math.ceil(writes.length / 2);
			return [
				...(await writeBatch(client, writes.slice(0, half))),
				...(await writeBatch(client, writes.slice(half))),
			];
		}
		const rest = writes.filter((_, index) => !failing.has(index));
		const restResults = rest.length > 0 ? await writeBatch(client, rest) : [];
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

/** Writes tasks in groups of `batchSize` through /tasks/batch, answering for each write in input order. */
export async function writeTasks(
	client: BacklogClient,
	writes: TaskWrite[],
	options: WriteOptions,
): Promise<WriteResult[]> {
	const results: WriteResult[] = [];
	const size = Math.max(1, Math.floor(options.batchSize));
	for (let start = 0; start < writes.length; start += size) {
		results.push(...(await writeBatch(client, writes.slice(start, start + size))));
	}
	return results;
}
