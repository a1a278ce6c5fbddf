/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- test code, never ships */
/**
 * Issue 44: the webhook trigger's repeat key is the event's own id whatever the payload's shape (a top-level id is the
 * event's unless it is the uid of the task the event is about), else kind + task uid + updated_at +
 * internal_updated_at (else the task's content) + the comment's uid where the event is about one, else the signed
 * bytes. Before: a flat event `{id, type, uid}` was taken for the task itself and its id dropped as the task's, so
 * the event re-sent with a new timestamp or re-serialized started a second execution; two comment events on one task
 * version whose top-level id is the task uid were taken for one, and the second was dropped.
 */
import { randomUUID } from 'node:crypto';

import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { eventIdentity } from '../../nodes/TaskBacklogTrigger/replay';
import {
	nowSeconds,
	postRaw,
	signedHeaders,
	useWebhookReceivers,
	type WebhookReceiver,
} from './harness';

const SECRET = 'whsec-repeat-key-2b9e';
const secondsAgo = (seconds: number) => String(Number(nowSeconds()) - seconds);
const post = postRaw;

/** Signed over `timestamp.body` (or the body alone). */
const signed = (raw: string, timestamp = nowSeconds(), coversTimestamp = true) =>
	signedHeaders(SECRET, raw, { timestamp, coversTimestamp });

const receive = useWebhookReceivers(() => new TaskBacklogTrigger());
const listen = (coversTimestamp = true) =>
	receive({
		parameters: {
			authentication: 'hmacSha256',
			secret: SECRET,
			signatureCoversTimestamp: coversTimestamp,
		},
	});

/** Sends `first`, then `again` with a later timestamp and its own signature; both must be accepted (200). */
async function sendTwice(r: WebhookReceiver, first: string, again: string, coversTimestamp = true) {
	const answers = [
		await post(r.url, first, signed(first, secondsAgo(5), coversTimestamp)),
		await post(r.url, again, signed(again, nowSeconds(), coversTimestamp)),
	];
	expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
	return answers;
}

describe('a flat event is recognised by its own id', () => {
	/** A flat event: the payload names the task by its uid, and carries the event's own id at the top. */
	const flatEvent = () => ({
		id: `evt_${randomUUID()}`,
		type: 'task.completed',
		uid: randomUUID(),
		status: 'DONE',
	});

	it('a flat event re-sent with a new timestamp starts one execution', async () => {
		const r = await listen();
		const raw = JSON.stringify(flatEvent());
		const answers = await sendTwice(r, raw, raw);
		expect(answers[1].body).toEqual({ received: true, duplicate: true });
		expect(r.executions()).toHaveLength(1);
	});

	it('a flat event re-serialized (keys reordered, other whitespace) starts one execution', async () => {
		// Signed over the body alone: only the serialisation changes the signature.
		const r = await listen(false);
		const event = flatEvent();
		const reordered = JSON.stringify(
			{ status: event.status, uid: event.uid, type: event.type, id: event.id },
			null,
			2,
		);
		await sendTwice(r, JSON.stringify(event), reordered, false);
		expect(r.executions()).toHaveLength(1);
	});

	it('two flat events with different ids about the same task both start executions', async () => {
		const r = await listen();
		const event = flatEvent();
		const other = { ...event, id: `evt_${randomUUID()}` };
		await sendTwice(r, JSON.stringify(event), JSON.stringify(other));
		expect(r.executions()).toHaveLength(2);
	});

	it("a flat event whose id is its task's uid is keyed by the task's version, not by that id", async () => {
		const r = await listen();
		const uid = randomUUID();
		const change = (updatedAt: string) =>
			JSON.stringify({ id: uid, uid, type: 'task.updated', updated_at: updatedAt });
		await sendTwice(r, change('2024-05-01T10:00:00Z'), change('2024-05-01T11:00:00Z'));
		expect(r.executions()).toHaveLength(2);
	});

	it('a flat event naming its task by task_uid keeps its id as the event id', () => {
		const identity = eventIdentity(
			{ id: 'evt_1', type: 'task.commented', task_uid: 'task-1' },
			'type',
		);
		expect(identity).toBe(JSON.stringify(['id', 'task.commented', 'evt_1']));
	});
});

describe('comment events are told apart by the comment', () => {
	const commentEvent = (uid: string, comment: Record<string, unknown>) =>
		JSON.stringify({
			id: uid,
			type: 'task.commented',
			data: {
				task: { uid, status: 'TODO', updated_at: '2024-05-01T10:00:00Z' },
				comment,
			},
			sentAt: new Date().toISOString(),
		});

	it('two different comment events on one task whose top-level id is the task uid both start executions', async () => {
		const r = await listen();
		const uid = randomUUID();
		const first = commentEvent(uid, { uid: randomUUID(), text: 'First' });
		const second = commentEvent(uid, { uid: randomUUID(), text: 'Second' });
		const answers = await sendTwice(r, first, second);
		expect(answers.map((answer) => answer.body)).toEqual([{ received: true }, { received: true }]);
		expect(r.executions()).toHaveLength(2);
	});

	it('two comment events without a comment uid on one task version both start executions when the comments differ', async () => {
		const r = await listen();
		const uid = randomUUID();
		await sendTwice(r, commentEvent(uid, { text: 'First' }), commentEvent(uid, { text: 'Second' }));
		expect(r.executions()).toHaveLength(2);
	});

	it('the same comment event re-sent (a new sentAt, re-signed) starts one execution', async () => {
		const r = await listen();
		const uid = randomUUID();
		const comment = { uid: randomUUID(), text: 'Once' };
		await sendTwice(r, commentEvent(uid, comment), commentEvent(uid, comment));
		expect(r.executions()).toHaveLength(1);
	});
});
