import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { callerState } from '../callers/registry';
import type { BacklogClient } from '../transport/client';
import { hasStatus, responseBody, statusOf } from '../transport/errors';
import { cancelled, isCancelled } from '../transport/cancellation';
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

/** One run's say over its writes in a shared batch: its batch size, and whether it sends nothing more after a failure. */
export interface WriteOwner {
	batchSize: number;
	stopOnError: boolean;
	failed?: boolean;
	/**
	 * The run's own client: once n8n has cancelled its execution, its writes not yet sent are taken out of the batches
	 * still to go (a turn of the shared lanes carries several), and its client (whose requests n8n aborts) no longer
	 * sends for the others.
	 */
	client?: BacklogClient;
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
	const counted =
		/(at most|no more than|up to|maximum( of)?|max\.?|limit( is| of)?)\s*:?\s*\d+\s*(items|tasks|entries)|too many (items|tasks|entries)|batch (is )?too (large|long|big)|batch size/i;
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

/**
 * Statuses that may be about one item of a batch rather than the whole request (a value the server refuses, a
 * reference it cannot find, a conflict). Sent for several executions, such a batch is split until only the items that
 * cause it fail: no execution gets another's failure, nor the server's text about another's values.
 */
const ITEM_STATUSES = [400, 403, 404, 409];

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

/** Sends the writes as one request (/tasks/batch, or /tasks/{uid} for one); the error is the request's, as it came. */
async function attempt(client: BacklogClient, writes: Planned[]): Promise<Attempt> {
	try {
		if (writes.length === 1) return { results: [{ task: await sendOne(client, writes[0]) }] };
		const response = await client.request<{ items?: IDataObject[] }>({
			method: writes[0].method,
			path: '/tasks/batch',
			body: { items: writes.map((write) => ({ ...sentBody(write), uid: write.uid })) },
			itemIndex: writes[0].itemIndex,
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
 * Where a refusal points at one item of a batch: `items[3]`, `items.3` (a detail's `loc` joined), `items/3`, a `loc`
 * holding `"items", 3`, `item 3`, `index 3`.
 */
const NAMES_AN_ITEM =
	/\bitems?\s*(?:\[\s*\d|[./#:]\s*\d|\s+#?\d)|"items",\s*\d|\b(?:index|position)\s*:?\s*\d/i;

/** The text strings of a write (4 characters or more: shorter ones say too little to be what a message quotes). */
function textsOf(value: unknown, into: string[] = []): string[] {
	if (typeof value === 'string' && value.length >= 4) into.push(value);
	else if (value && typeof value === 'object')
		for (const entry of Object.values(value as IDataObject)) textsOf(entry, into);
	return into;
}

/**
 * Whether both halves' refusal is the request's, not one write's: the same status and message, and either a 403 (the
 * token may not write) or a message that names no item nor quotes a value sent. Two bad values at the same index of
 * each half are refused with the same message too (`items[1].fields.title: …`): every write would get it, the
 * value in it.
 */
function requestRefused(first: unknown, second: unknown, writes: Planned[]): boolean {
	if (!(first instanceof NodeApiError && second instanceof NodeApiError)) return false;
	if (statusOf(first) !== statusOf(second) || first.message !== second.message) return false;
	if (statusOf(first) === 403) return true;
	// What the server said (our own "PUT /tasks/batch failed with …" around it would match short values).
	const text = JSON.stringify(responseBody(first) ?? first.message);
	return (
		!NAMES_AN_ITEM.test(text) &&
		!writes.some((write) => textsOf(sentBody(write)).some((value) => text.includes(value)))
	);
}

/**
 * Sends one batch. A batch is written whole or not at all, so when the service refuses it the batch is taken apart
 * until each write gets its own answer: a 422 fails the items it names and sends the others again (or is halved when it
 * names none); a refusal of the batch's length sends it again in smaller batches (sizeDown); a 400, 403, 404 or 409 on
 * the writes of several runs is halved until it falls on one run's writes (isolate). Any other failure fails every
 * write of the batch: none is reported as done.
 */
async function writeBatch(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const first = await attempt(client, writes);
	if ('results' in first) return first;
	return await settle(client, writes, first.error);
}

/** The answers of writes whose request failed with `error` (see writeBatch). */
async function settle(
	client: BacklogClient,
	writes: Planned[],
	error: unknown,
): Promise<BatchOutcome> {
	const fail = (reason: unknown) => ({ results: writes.map(() => ({ error: reason as Error })) });
	if (writes.length === 1) return fail(error);
	const smaller = tooLarge(error, writes.length);
	if (smaller !== undefined) return await sizeDown(client, writes, smaller);
	if (hasStatus(error, 422)) return await splitInvalid(client, writes, error);
	if (hasStatus(error, ...ITEM_STATUSES) && ownersOf(writes) > 1)
		return await isolate(client, writes);
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

/**
 * The writes of several runs refused with a status that may be about one of them: sent again in halves, each half
 * settled on its own, so that one bad write costs a few requests, not one per run. When both halves are refused alike
 * with a refusal about the request (a token that may not write, say: requestRefused), every write gets it, and
 * nothing is split further.
 */
async function isolate(client: BacklogClient, writes: Planned[]): Promise<BatchOutcome> {
	const half = Math.ceil(writes.length / 2);
	const parts = [writes.slice(0, half), writes.slice(half)];
	const tries = [await attempt(client, parts[0]), await attempt(client, parts[1])];
	if (
		'error' in tries[0] &&
		'error' in tries[1] &&
		requestRefused(tries[0].error, tries[1].error, writes)
	) {
		const { error } = tries[0];
		return { results: writes.map(() => ({ error: error as Error })) };
	}
	const outcomes: BatchOutcome[] = [];
	for (const [index, tried] of tries.entries())
		outcomes.push('results' in tried ? tried : await settle(client, parts[index], tried.error));
	return { results: outcomes.flatMap((outcome) => outcome.results) };
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
 * its requests are aborted: the other runs' writes of a request that failed so go again with a live run's client
 * (PUT and PATCH with the same values are idempotent, so a write that landed before the abort is not doubled).
 */
export async function writeAll(
	client: BacklogClient,
	writes: Planned[],
	batchSize: number,
): Promise<WriteResult[]> {
	const results: WriteResult[] = new Array(writes.length);
	let pending = writes.map((_, index) => index);
	let sender = client;
	const sizes = await batchSizeMemory(client);
	while (pending.length > 0) {
		sender = liveSender(
			sender,
			pending.map((at) => writes[at]),
		);
		const size = Math.max(1, Math.min(Math.floor(batchSize), sizes.accepted));
		const slice = pending.slice(0, size);
		pending = pending.slice(size);
		const sending = slice.filter((at) => {
			const { owner } = writes[at];
			if (owner?.client && isCancelled(owner.client))
				results[at] = { error: cancelled(owner.client) };
			else if (owner?.stopOnError && owner.failed) results[at] = { error: notSent() };
			else return true;
			return false;
		});
		const { answers, again } = await sendBatch(
			sender,
			sending.map((at) => writes[at]),
			sizes,
		);
		const written: string[] = [];
		const goAgain: number[] = [];
		for (const [index, at] of sending.entries()) {
			if (again[index]) {
				goAgain.push(at);
				continue;
			}
			const answer = answers[index];
			const result =
				writes[at].method === 'PUT' && 'task' in answer
					? answeredPut(writes[at], answer.task)
					: answer;
			results[at] = result;
			const { owner } = writes[at];
			if ('error' in result && owner) owner.failed = true;
			else if ('task' in result) written.push(writes[at].uid);
		}
		await sawTasks(sender, written);
		pending = [...goAgain, ...pending];
	}
	return results;
}

/**
 * One batch of writes, its tasks read again first where asked (Planned.reread), and those that already hold their
 * values answered without a request (Planned.unlessHeld). `again` marks the writes of other live runs whose request
 * failed because n8n cancelled the sender's run: they are to be sent again with another client.
 */
async function sendBatch(
	sender: BacklogClient,
	writes: Planned[],
	sizes: BatchSizeMemory,
): Promise<{ answers: WriteResult[]; again: boolean[] }> {
	const goesAgain = (write: Planned, result: WriteResult) =>
		'error' in result &&
		isCancelled(sender) &&
		write.owner?.client !== undefined &&
		!isCancelled(write.owner.client);
	let batch = writes;
	const at = now();
	if (batch.some((write) => needsReread(write, at))) {
		try {
			batch = await reread(sender, batch);
		} catch (error) {
			// Not read, not written: the batch's items fail with the read's error.
			const answers = writes.map(() => ({ error: error as Error }));
			return { answers, again: writes.map((write, index) => goesAgain(write, answers[index])) };
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
	const answers = batch.map((write, index) =>
		held[index] ? { task: write.current! } : outcome.results[next++],
	);
	return { answers, again: batch.map((write, index) => goesAgain(write, answers[index])) };
}

/**
 * The client to send with: this one, or once n8n has cancelled its execution (and so aborts its requests), the client
 * of a run whose writes are still to go, which then carries the others' as well.
 */
function liveSender(client: BacklogClient, writes: Planned[]): BacklogClient {
	if (!isCancelled(client)) return client;
	const live = writes.find((write) => write.owner?.client && !isCancelled(write.owner.client))
		?.owner?.client;
	return live ?? client;
}
