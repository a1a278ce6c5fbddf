import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../transport/client';
import type { Planned, WriteOwner, WriteResult } from './send';
import { notSent, readTasksByUid, showsOurValues, writeAll } from './send';
import { cancelSignal } from '../transport/client';
import { now } from '../callers/registry';

export type { WriteResult } from './send';
export { isNotSent } from './send';

// A run's writes go plan → (direct | shared) → send: this file plans them (writeTasks) and names the two ways they go
// (TaskGateway: directGateway, below, or sharedGateway in sharing/coalesce.ts, as the router picks); both send through
// send.ts.

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

export interface WriteOptions {
	/** How the reads and writes are sent: this execution's own requests (the default) or shared (sharing/). */
	gateway?: TaskGateway;
	/** Items per request to /tasks/batch; 1 sends each write to /tasks/{uid}. */
	batchSize: number;
	/** Send nothing more after a batch failed (the node stops at the first error without Continue On Fail). */
	stopOnError?: boolean;
	/** Current tasks the caller has already read (Sync Backlog's listing): not read again. A uid mapped to undefined was read and has no task. */
	known?: Map<string, IDataObject | undefined>;
	/**
	 * When the reads behind `known` were sent (now(), callers/registry.ts): what this process wrote since is newer than them (sharing/coalesce.ts), so
	 * a PUT of a task believed absent is not sent over a task another execution created meanwhile.
	 */
	knownAt?: number;
	/**
	 * Read the custom fields of the tasks a PATCH batch sends again just before sending it (Sync Backlog, whose listing
	 * may be minutes old): a key set meanwhile by someone else is kept even where PATCH replaces `fields`.
	 */
	rereadBeforePatch?: boolean;
}

function takenError(
	client: BacklogClient,
	uid: string,
	current: IDataObject,
	itemIndex: number,
): Error {
	const title = ((current.fields ?? {}) as IDataObject).title;
	return new NodeOperationError(
		client.ctx.getNode(),
		`Item ${itemIndex}: a task with UID ${uid}${typeof title === 'string' ? ` ("${title}")` : ''} already exists; Create never changes an existing task`,
		{
			itemIndex,
			description:
				'Use Create or Update to change it, or leave the UID empty to create a new task.',
		},
	);
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
export async function writeTasks(
	client: BacklogClient,
	writes: TaskWrite[],
	options: WriteOptions,
): Promise<WriteResult[]> {
	const gateway = options.gateway ?? directGateway;
	// One write per uid, and for each write the one it became (`groupOf`, by position in `unique`): no object per
	// write, as a run of 10,000 writes groups them before its first request.
	const unique: TaskWrite[] = [];
	const groupOf: number[] = new Array(writes.length);
	const groupOfUid = new Map<string, number>();
	for (let position = 0; position < writes.length; position++) {
		const write = writes[position];
		let group = groupOfUid.get(write.uid);
		if (group === undefined) {
			group = unique.push(write) - 1;
			groupOfUid.set(write.uid, group);
		} else {
			// The write is kept as it came: merging a later one makes a new object, so the caller's is never changed.
			unique[group] = { ...write, body: mergeBodies(unique[group].body, write.body) };
		}
		groupOf[position] = group;
	}
	const answers = (outcome: Map<string, WriteResult>): WriteResult[] =>
		groupOf.map((group) => {
			const { uid } = unique[group];
			// Each write's answer in input order: a uid written once answers every item that asked for it.
			return outcome.get(uid) ?? { error: new Error(`Task ${uid} was not written`) };
		});
	const needsRead = unique
		.filter((write) => write.mode !== 'patch' || write.body.fields)
		.map((write) => write.uid);
	const known = options.known ?? new Map<string, IDataObject | undefined>();
	const toRead = needsRead.filter((uid) => !known.has(uid));
	const current = new Map(known);
	const readAt = options.knownAt ?? now();
	if (toRead.length > 0) {
		try {
			for (const [uid, task] of await gateway.readTasks(client, toRead)) current.set(uid, task);
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
			patches.push({ method: 'PATCH', uid, body, current: task, readAt, itemIndex });
		} else if (!task) {
			puts.push({
				method: 'PUT',
				uid,
				body,
				itemIndex,
				readAt,
				ifExisted: write.mode === 'create' ? 'fail' : 'patch',
			});
		} else if (write.mode === 'upsert') {
			// Sent only if the task does not hold the values by the time its batch goes (Planned.unlessHeld).
			patches.push({
				method: 'PATCH',
				uid,
				body,
				current: task,
				readAt,
				itemIndex,
				unlessHeld: true,
			});
		} else if (showsOurValues(task, body)) {
			// Create: our own earlier attempt landed (e.g. before a retry).
			outcome.set(uid, { task });
		} else {
			outcome.set(uid, { error: takenError(client, uid, task, itemIndex) });
		}
	}

	const stopOnError = options.stopOnError === true;
	if (stopOnError && [...outcome.values()].some((result) => 'error' in result)) {
		// A taken uid without Continue On Fail: the node stops at it, so nothing of the run is written.
		for (const { uid } of [...puts, ...patches]) outcome.set(uid, { error: notSent() });
		return answers(outcome);
	}
	const owner: WriteOwner = {
		batchSize: options.batchSize,
		stopOnError,
		signal: cancelSignal(client),
	};
	const putResults = await gateway.sendWrites(
		client,
		puts.map((put) => ({ ...put, owner })),
	);
	const afterPut: Planned[] = [];
	puts.forEach((put, index) => {
		const result = putResults[index];
		if ('task' in result && result.existed) {
			// Created by someone else between our read and our PUT, and the server kept its values.
			if (put.ifExisted === 'fail')
				outcome.set(put.uid, { error: takenError(client, put.uid, result.task, put.itemIndex) });
			else afterPut.push({ ...put, method: 'PATCH', current: result.task, readAt: now() });
		} else outcome.set(put.uid, result);
	});
	const failedAlready = stopOnError && [...outcome.values()].some((result) => 'error' in result);
	const reread = options.rereadBeforePatch === true;
	const patchList = [...patches, ...afterPut].map((patch) => ({ ...patch, owner, reread }));
	const patchResults = failedAlready
		? patchList.map(() => ({ error: notSent() }))
		: await gateway.sendWrites(client, patchList);
	patchList.forEach((patch, index) => outcome.set(patch.uid, patchResults[index]));
	return answers(outcome);
}

/** Later values win; custom fields are merged key by key, as applying the writes one after the other would. */
export function mergeBodies(earlier: IDataObject, later: IDataObject): IDataObject {
	const merged: IDataObject = { ...earlier, ...later };
	if (earlier.fields || later.fields) {
		merged.fields = {
			...((earlier.fields ?? {}) as IDataObject),
			...((later.fields ?? {}) as IDataObject),
		};
	}
	return merged;
}

/**
 * How a planned write reaches the service, apart from what to write (writeTasks, above, decides that): the bulk read
 * the plan rests on, and the sending of the planned writes of one method. Two implementations: `directGateway`
 * (this execution's own requests) and the shared one (sharing/coalesce.ts: requests shared with the executions of
 * the same caller running at once in this process). Nothing in tasks/ imports the shared one.
 */
export interface TaskGateway {
	/** The current tasks of these uids, archived or not; a uid missing from the map has no task. */
	readTasks(client: BacklogClient, uids: string[]): Promise<Map<string, IDataObject>>;
	/** Sends planned writes of one method, each answered in order. */
	sendWrites(client: BacklogClient, writes: Planned[]): Promise<WriteResult[]>;
}

/** This execution's own requests: its reads, and its writes in batches of its own Batch Size. */
export const directGateway: TaskGateway = {
	readTasks: async (client, uids) => await readTasksByUid(client, uids),
	sendWrites: async (client, writes) =>
		writes.length === 0 ? [] : await writeAll(client, writes, writes[0].owner?.batchSize ?? 1),
};
