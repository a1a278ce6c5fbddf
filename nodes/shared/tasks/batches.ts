import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

import { callerState } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { hasStatus, responseBody, statusOf } from '../transport/errors';
import { cancelled, isCancelled } from '../transport/client';
import { readTasksByUid, sawTasks } from './readByUid';
import { hasValues, showsOurValues } from './values';
import { now } from '../clock';

/**
 * Sending planned writes in batches: /tasks/batch (or /tasks/{uid} for one), the batch size a server accepts learnt
 * per caller, a 422 split to the items it names, and the answer read by uid.
 */

/**
 * What a write got: the task as the service answered, or an error. `existed`: the answer to a PUT does not show the
 * values sent, so the task was there already (created meanwhile by someone else) and the server kept its values.
 */
export type WriteResult = { task: IDataObject; existed?: true } | { error: Error };

export type Method = 'PUT' | 'PATCH';

/** One request's worth of work: the values to write for a uid, and the write (input item) it answers. */
export interface Planned {
	method: Method;
	uid: string;
	/** What the write sets; a PATCH sends it over the task's `current` custom fields (see sentBody). */
	body: IDataObject;
	/** The task as last read, for a PATCH: its custom fields are sent along, so none is lost where PATCH replaces. */
	current?: IDataObject;
	/** When the read the plan rests on was sent (clock.ts now()): a write of the same task by another execution since is newer. */
	readAt?: number;
	itemIndex: number;
	/** For a PUT: what to do when the answer shows the task existed after all (created meanwhile by someone else). */
	ifExisted?: 'patch' | 'fail';
	/**
	 * For a PATCH of Create or Update: not sent, and answered with the task, when the task already holds the values as
	 * last read or written. Decided when its batch is sent, not when it was planned, so that a write of the same task by
	 * an execution that came first (sharing/coalesce.ts) is seen: skipped at planning, a write that sets the values back would
	 * be lost behind that one.
	 */
	unlessHeld?: boolean;
	/**
	 * For a PATCH: its task is read again just before its batch is sent, and sent over what that read shows (Sync
	 * Backlog, whose listing may be minutes old): a key set meanwhile by someone else is kept even where PATCH replaces
	 * `fields`.
	 */
	reread?: boolean;
	/** The run that asked for the write: writes of several runs may share a batch (see sharing/coalesce.ts). */
	owner?: WriteOwner;
}

/**
 * One run's say over its writes in a shared batch: its batch size, and whether it sends nothing more after a failure.
 * Never its client or context: a shared batch is sent by the run the lane elected to send it (sharing/lane.ts).
 */
export interface WriteOwner {
	batchSize: number;
	stopOnError: boolean;
	failed?: boolean;
	/**
	 * n8n's cancel signal of the run: once it fires, its writes not yet sent are taken out of the batches still to go
	 * (a turn of the shared lanes carries several).
	 */
	signal?: AbortSignal;
}

/**
 * A PUT answered with `task` (see WriteResult.existed). Decided as each batch is answered, while the next one waits for
 * its turn at the rate limit, rather than for every write after the last answer.
 */
export const answeredPut = (write: Planned, task: IDataObject): WriteResult =>
	showsOurValues(task, write.body) ? { task } : { task, existed: true };

/** The body of a PATCH that keeps every custom field it was not asked to change, whether the server merges or replaces. */
function sentBody({ body, current }: Planned): IDataObject {
	if (!body.fields || !current) return body;
	return {
		...body,
		fields: { ...((current.fields ?? {}) as IDataObject), ...(body.fields as IDataObject) },
	};
}

const NOT_SENT = 'Not sent: an earlier item of this node failed';

/** The answer of a write held back because another of its run failed first (without Continue On Fail). */
export const notSent = () => new Error(NOT_SENT);

/** Whether an error only says the write was held back after another failed (see notSent): it is not the cause. */
export const isNotSent = (error: Error) => error.message === NOT_SENT;

/** The batch size the server accepted for a caller, if it refused a longer batch: a server may cap batches without documenting it. */
export interface BatchSizeMemory {
	accepted: number;
}

/**
 * What this caller learnt of the server's batch size (callers/registry.ts): learnt once for the caller's executions,
 * not again by each with a refused batch of its own.
 */
export async function batchSizeMemory(client: BacklogClient): Promise<BatchSizeMemory> {
	return callerState(await client.callerKey()).part('batchSize', () => ({ accepted: Infinity }));
}

/**
 * Whether an error says the batch was too long, and the size to try next: a 413, or a 422 about the `items` list
 * itself ("ensure this value has at most 50 items", a `loc` ending at `items`), never one item's message ("fields.title:
 * value too long"), which names the item that fails, not the batch.
 */
function tooLarge(error: unknown, count: number): number | undefined {
	if (!(error instanceof NodeApiError)) return undefined;
	const body = responseBody(error);
	const text = `${error.message} ${typeof body === 'string' ? body : JSON.stringify(body ?? '')}`;
	if (
		!hasStatus(error, 413) &&
		!(hasStatus(error, 422) && aboutTheList(body, text) && failingItems(error, count).size === 0)
	) {
		return undefined;
	}
	const stated = Number(/at most (\d+)/i.exec(text)?.[1]);
	const next =
		Number.isInteger(stated) && stated >= 1 && stated < count ? stated : smallerSize(count);
	return Math.max(1, next);
}

/**
 * The batch size to try after `count` was refused without a number: the largest round size (1, 2, 2.5 or 5 × a power
 * of ten: limits are set as 25, 50, 100 …) from half of `count` up, else half. Halving alone learns a limit of 50 as
 * 33 from a refused 66 (the shared turns of a burst are of any length), and sends every later batch a third short.
 */
function smallerSize(count: number): number {
	const half = Math.floor(count / 2);
	for (let power = 10 ** Math.floor(Math.log10(count)); power >= 1; power /= 10)
		for (const step of [5, 2.5, 2, 1]) {
			const size = step * power;
			if (Number.isInteger(size) && size < count && size >= half) return size;
		}
	return half;
}

/** A 422 about the length of the `items` list: a detail located at `items` itself, or a message counting items. */
function aboutTheList(body: unknown, text: string): boolean {
	const detail =
		body && typeof body === 'object' && Array.isArray((body as IDataObject).detail)
			? ((body as IDataObject).detail as IDataObject[])
			: [];
	const located = detail.some(
		(entry) => Array.isArray(entry?.loc) && entry.loc[entry.loc.length - 1] === 'items',
	);
	// Linear in the message's length: nothing before the number can match the same spaces two ways (a 422 quotes what
	// it refused, and a quoted title of "max" and 100,000 spaces must not hold n8n's main loop).
	const counted =
		/(?:at most|no more than|up to|maximum(?: of)?|max\.?|limit(?: is| of)?)\s*(?::\s*)?\d+\s*(?:items|tasks|entries)|too many (?:items|tasks|entries)|batch (?:is )?too (?:large|long|big)|batch size/i;
	return located || counted.test(text);
}

async function sendOne(client: BacklogClient, write: Planned): Promise<IDataObject> {
	const path = `/tasks/${write.uid}`;
	const body = write.method === 'PUT' ? { ...write.body, uid: write.uid } : sentBody(write);
	return await client.request<IDataObject>({
		method: write.method,
		path,
		body,
		itemIndex: write.itemIndex,
	});
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
			description:
				'Run the node again: the write is idempotent (same uid), so a task already written is not written twice.',
		},
	);
}

/** How many runs (WriteOwner) these writes belong to; writes without an owner count as one. */
const ownersOf = (writes: Planned[]) => new Set(writes.map((write) => write.owner)).size;

/** One request's outcome: an answer for every write, or the error of the request as a whole. */
type Attempt = { results: WriteResult[] } | { error: unknown };

/** What a batch's writes got, and the batch size learnt on the way (see sizeDown). */
interface BatchOutcome {
	results: WriteResult[];
	/** Set when the batch was refused for its length and every write then went in batches of at most this size. */
	acceptedSize?: number;
}

/**
 * Sends the writes as one request (/tasks/batch, or /tasks/{uid} for one); the error is the request's, as it came.
 * Writes of several runs go once, without retries (ApiRequest.shared): a failure is split by run (splitByOwner).
 */
async function attempt(client: BacklogClient, writes: Planned[]): Promise<Attempt> {
	const shared = ownersOf(writes) > 1;
	try {
		if (writes.length === 1) return { results: [{ task: await sendOne(client, writes[0]) }] };
		const response = await client.request<{ items?: IDataObject[] }>({
			method: writes[0].method,
			path: '/tasks/batch',
			body: { items: writes.map((write) => ({ ...sentBody(write), uid: write.uid })) },
			itemIndex: writes[0].itemIndex,
			shared,
		});
		const returned = Array.isArray(response?.items) ? response.items : [];
		const byUid = new Map(returned.map((task) => [String(task.uid).toLowerCase(), task]));
		// By uid only: a task at the same position may be another one, and its values would be taken for this item's.
		return {
			results: writes.map((write) => {
				const task = byUid.get(write.uid);
				return task ? { task } : { error: notInAnswer(client, write) };
			}),
		};
	} catch (error) {
		return { error };
	}
}

/**
 * Sends one batch. A batch is written whole or not at all, so when the service refuses it the batch is taken apart
 * until each write gets its own answer: a refusal of the batch's length sends it again in smaller batches (sizeDown);
 * a 422 naming items fails those and sends the others again; the writes of several runs are split by run
 * (splitByOwner), whatever the status and message, so that a run only ever gets the error of a request that carried
 * nothing but its own writes; one run's 422 naming no item is halved. Anything else fails every write of the batch
 * (one run's own): none is reported as done.
 */
async function writeBatch(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const first = await attempt(client, writes);
	if ('results' in first) return first;
	return await settle(client, writes, first.error);
}

/**
 * The answers of writes whose request failed with `error` (see writeBatch); `level`: how many splits by run in a row
 * failed as an outage would (splitByOwner).
 */
async function settle(
	client: BacklogClient,
	writes: Planned[],
	error: unknown,
	level = 1,
): Promise<BatchOutcome> {
	const fail = (reason: unknown) => ({ results: writes.map(() => ({ error: reason as Error })) });
	// n8n aborted the sender's requests: the other runs' writes go again with a live run's client (writeAll).
	if (writes.length === 1 || isCancelled(client)) return fail(error);
	const smaller = tooLarge(error, writes.length);
	if (smaller !== undefined) return await sizeDown(client, writes, smaller);
	if (hasStatus(error, 422) && failingItems(error, writes.length).size > 0)
		return await splitInvalid(client, writes, error);
	// A 401 is the credential's, and a 429 that outlasted the attempts is the token's: every run of it has it alike.
	if (hasStatus(error, 401, 429)) return fail(error);
	if (ownersOf(writes) > 1) return await splitByOwner(client, writes, level);
	if (hasStatus(error, 422)) return await inHalves(client, writes);
	return fail(error);
}

/** Writes in halves: each half gets its own answer, whatever the other got. */
async function inHalves(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const half = Math.ceil(writes.length / 2);
	const outcomes = [
		await writeBatch(client, writes.slice(0, half)),
		await writeBatch(client, writes.slice(half)),
	];
	return { results: outcomes.flatMap((outcome) => outcome.results) };
}

/** A failure that may pass by itself: a 5xx the spec calls transient, or no answer at all (a network error). */
export const transient = (error: unknown) =>
	statusOf(error) === undefined || hasStatus(error, 500, 502, 503, 504);

/**
 * The writes of several runs, whose request failed: sent again in two halves of whole runs, each half once, until a
 * part holds one run's writes, which is then sent with that run's client and retried under its policy
 * (writeBatch). No message, status or quoted value decides who is at fault: one write refused on every try among 50
 * runs costs 2 × ceil(log2 50) requests and its run's attempts. When both halves fail with a transient status (an
 * outage, not one write), the split waits as a retry would before going further.
 */
async function splitByOwner(
	client: BacklogClient,
	writes: Planned[],
	level: number,
): Promise<BatchOutcome> {
	const runs = new Map<WriteOwner | undefined, number[]>();
	writes.forEach((write, index) => {
		const run = runs.get(write.owner);
		if (run) run.push(index);
		else runs.set(write.owner, [index]);
	});
	const groups = [...runs.values()];
	const half = Math.ceil(groups.length / 2);
	const halves = [groups.slice(0, half).flat(), groups.slice(half).flat()];
	const parts = halves.map((indexes) => indexes.map((index) => writes[index]));
	const results: WriteResult[] = new Array(writes.length);
	const settleLater: number[] = [];
	const errors: unknown[] = [];
	for (const [at, part] of parts.entries()) {
		if (ownersOf(part) === 1) {
			// Sent with the sender's client: a lane's executions share their retry policy (sharing/coalesce.ts).
			const own = await writeBatch(client, part);
			halves[at].forEach((index, position) => (results[index] = own.results[position]));
			continue;
		}
		const tried = await attempt(client, part);
		if ('results' in tried)
			halves[at].forEach((index, position) => (results[index] = tried.results[position]));
		else {
			settleLater.push(at);
			errors[at] = tried.error;
		}
	}
	const outage = settleLater.length === 2 && errors.every(transient);
	if (outage) await sleep(client.backoffMs(level));
	for (const at of settleLater) {
		const outcome = await settle(client, parts[at], errors[at], outage ? level + 1 : 1);
		halves[at].forEach((index, position) => (results[index] = outcome.results[position]));
	}
	return { results };
}

/**
 * A batch refused for its length, sent again in batches of `size`. The size is learnt (acceptedSize) only when every
 * write then went through: a 413 that persists down to one write is about that write (too large a value), which
 * fails alone, and says nothing of the batch size.
 */
async function sizeDown(
	client: BacklogClient,
	writes: Planned[],
	size: number,
): Promise<BatchOutcome> {
	const outcomes: BatchOutcome[] = [];
	for (let start = 0; start < writes.length; start += size)
		outcomes.push(await writeBatch(client, writes.slice(start, start + size)));
	const results = outcomes.flatMap((outcome) => outcome.results);
	if (results.some((result) => 'error' in result)) return { results };
	const learnt = outcomes.map((outcome) => outcome.acceptedSize ?? size);
	return { results, acceptedSize: Math.min(...learnt) };
}

/** A 422: the items it names fail with its reason, the others are sent again; naming none, the batch is halved. */
async function splitInvalid(
	client: BacklogClient,
	writes: Planned[],
	error: NodeApiError,
): Promise<BatchOutcome> {
	const failing = failingItems(error, writes.length);
	if (failing.size === 0) return await inHalves(client, writes);
	const rest = writes.filter((_, index) => !failing.has(index));
	const restResults = rest.length > 0 ? (await writeBatch(client, rest)).results : [];
	let next = 0;
	return {
		results: writes.map((write, index) => {
			const reason = failing.get(index);
			if (reason === undefined) return restResults[next++];
			const itemError = new NodeApiError(
				error.node,
				{ status: 422, message: reason },
				{
					message: `The service rejected task ${write.uid} (422 Unprocessable Entity): ${reason}`,
					description: 'Correct the field named in the message in this input item.',
					httpCode: '422',
					itemIndex: write.itemIndex,
				},
			);
			return { error: itemError };
		}),
	};
}

/**
 * How old the read a PATCH rests on may be when its batch goes. A PATCH sends the task's custom fields along
 * (sentBody): read longer ago (it waited for a shared turn, or behind the run's earlier batches), a field someone set
 * meanwhile would be sent back to its old value, whether the server merges `fields` or replaces it. Such a task is
 * read again first (one bulk read for the batch).
 */
export const STALE_READ_MS = 1000;

/** Whether a write's task is read again just before its batch is sent (Planned.reread, or a stale read). */
const needsReread = (write: Planned, at: number) =>
	write.method === 'PATCH' &&
	write.body.fields !== undefined &&
	(write.reread === true || (write.readAt !== undefined && at - write.readAt > STALE_READ_MS));

/** Reads again, just before their batch is sent, the tasks whose custom fields a PATCH sends along (needsReread). */
async function reread(client: BacklogClient, batch: Planned[]): Promise<Planned[]> {
	const at = now();
	const uids = batch.filter((write) => needsReread(write, at)).map((write) => write.uid);
	if (uids.length === 0) return batch;
	const fresh = await readTasksByUid(client, uids, batch[0].itemIndex);
	return batch.map((write) => ({ ...write, current: fresh.get(write.uid) ?? write.current }));
}

/**
 * Sends the planned writes of one method in batches of at most `batchSize` (or the smaller size the server
 * accepted, learnt for the caller: batchSizeMemory), each write answered in order. A write whose owner stops on error and
 * already had one is not sent. The tasks of the writes marked `reread` are read again just before their batch is sent.
 *
 * The writes may be several runs' (a shared turn, sharing/coalesce.ts), sent with one run's client. When n8n cancels that run
 * its requests are aborted, and the writes not yet answered are answered as cancelled: the shared lane sends the other
 * runs' writes again with a live run (sharing/lane.ts; PUT and PATCH with the same values are idempotent, so a write
 * that landed before the abort is not doubled).
 */
export async function writeAll(
	client: BacklogClient,
	writes: Planned[],
	batchSize: number,
): Promise<WriteResult[]> {
	const results: WriteResult[] = new Array(writes.length);
	let pending = writes.map((_, index) => index);
	const sizes = await batchSizeMemory(client);
	while (pending.length > 0) {
		if (isCancelled(client)) {
			for (const at of pending) results[at] = { error: cancelled(client) };
			break;
		}
		const size = Math.max(1, Math.min(Math.floor(batchSize), sizes.accepted));
		const slice = pending.slice(0, size);
		pending = pending.slice(size);
		const sending = slice.filter((at) => {
			const { owner } = writes[at];
			if (owner?.signal?.aborted === true) results[at] = { error: cancelled(client) };
			else if (owner?.stopOnError && owner.failed) results[at] = { error: notSent() };
			else return true;
			return false;
		});
		const answers = await sendBatch(
			client,
			sending.map((at) => writes[at]),
			sizes,
		);
		const written: string[] = [];
		for (const [index, at] of sending.entries()) {
			const answer = answers[index];
			const result =
				writes[at].method === 'PUT' && 'task' in answer
					? answeredPut(writes[at], answer.task)
					: answer;
			results[at] = result;
			const { owner } = writes[at];
			// Aborted with its sender: not the run's failure (the lane sends the others' writes again).
			if ('error' in result && owner && !isCancelled(client)) owner.failed = true;
			else if ('task' in result) written.push(writes[at].uid);
		}
		await sawTasks(client, written);
	}
	return results;
}

/**
 * One batch of writes, its tasks read again first where asked (Planned.reread), and those that already hold their
 * values answered without a request (Planned.unlessHeld).
 */
async function sendBatch(
	sender: BacklogClient,
	writes: Planned[],
	sizes: BatchSizeMemory,
): Promise<WriteResult[]> {
	let batch = writes;
	const at = now();
	if (batch.some((write) => needsReread(write, at))) {
		try {
			batch = await reread(sender, batch);
		} catch (error) {
			// Not read, not written: the batch's items fail with the read's error.
			return writes.map(() => ({ error: error as Error }));
		}
	}
	// Create or Update of a task that already holds the values, as last read or written: nothing to send.
	const held = batch.map(
		(write) =>
			write.unlessHeld === true &&
			write.current !== undefined &&
			hasValues(write.current, write.body),
	);
	const toSend = batch.filter((_, index) => !held[index]);
	const outcome = toSend.length > 0 ? await writeBatch(sender, toSend) : { results: [] };
	if (outcome.acceptedSize !== undefined)
		sizes.accepted = Math.min(sizes.accepted, outcome.acceptedSize);
	let next = 0;
	return batch.map((write, index) =>
		held[index] ? { task: write.current! } : outcome.results[next++],
	);
}
