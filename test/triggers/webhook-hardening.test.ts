/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- test code, never ships */
/**
 * Task Backlog Trigger hardening: the secret in a credential of its own (old workflows keep their parameter),
 * repeats of an accepted delivery start nothing, and "Include Headers" never outputs a secret.
 * Requests go over real HTTP to the node's webhook() run in n8n's real WebhookContext (see harness.ts).
 */
import { randomUUID } from 'node:crypto';

import type {
	ICredentialDataDecryptedObject,
	ICredentialTestFunctions,
	IDataObject,
	INodeParameters,
} from 'n8n-workflow';

import { TaskBacklogWebhookApi } from '../../credentials/TaskBacklogWebhookApi.credentials';
import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { firstDelivery } from '../../nodes/TaskBacklogTrigger/replay';
import {
	nowSeconds,
	postRaw,
	signedHeaders,
	useWebhookReceivers,
	type WebhookReceiver,
} from './harness';

const SECRET = 'whsec-credential-9f2e';
let counter = 0;

/** A payload unique to each call, so that only deliberate repeats are repeats. */
const event = (type = 'task.completed') => ({
	type,
	data: {
		task: { uid: '3c90c3cc-0d44-4b50-8888-8dd25736052a', fields: { title: `Ticket ${++counter}` } },
	},
	sentAt: new Date().toISOString(),
});

const post = postRaw;

/** Signed over `timestamp.body` (or the body alone when `coversTimestamp` is false). */
const signed = (
	raw: string,
	options: { secret?: string; timestamp?: string; coversTimestamp?: boolean } = {},
) => signedHeaders(options.secret ?? SECRET, raw, options);

const listen = useWebhookReceivers(() => new TaskBacklogTrigger());

/** The trigger from a fresh copy of its module: a new process, with nothing of this one's memory. */
function freshTrigger(): TaskBacklogTrigger {
	let Fresh: typeof TaskBacklogTrigger | undefined;
	jest.isolateModules(() => {
		Fresh = (
			jest.requireActual('../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node') as {
				TaskBacklogTrigger: typeof TaskBacklogTrigger;
			}
		).TaskBacklogTrigger;
	});
	return new Fresh!();
}

const webhookCredential = (data: ICredentialDataDecryptedObject = {}) => ({
	secret: SECRET,
	signatureCoversTimestamp: true,
	...data,
});

describe('the webhook secret in the Task Backlog Webhook credential', () => {
	it('a version 1 node saved with the secret as a parameter keeps verifying with it (Secret Source defaults to Node Parameters there)', async () => {
		const r = await listen({
			typeVersion: 1,
			parameters: { authentication: 'hmacSha256', secret: SECRET, signatureCoversTimestamp: true },
		});
		const raw = JSON.stringify(event());
		const good = await post(r.url, raw, signed(raw));
		const bad = await post(r.url, raw, signed(raw, { secret: 'other' }));
		expect([good.status, bad.status]).toEqual([200, 401]);
		expect(r.executions()).toHaveLength(1);
	});

	it('a new (version 1.1) node reads the secret and the signing scheme from the credential by default', async () => {
		const r = await listen({
			typeVersion: 1.1,
			// A secret left among the parameters is not used once the source is the credential.
			parameters: { authentication: 'hmacSha256', secret: 'stale-parameter-secret' },
			webhookCredentials: webhookCredential(),
		});
		const raw = JSON.stringify(event());
		const good = await post(r.url, raw, signed(raw));
		const stale = await post(r.url, raw, signed(raw, { secret: 'stale-parameter-secret' }));
		const bodyOnly = await post(r.url, raw, signed(raw, { coversTimestamp: false }));
		expect([good.status, stale.status, bodyOnly.status]).toEqual([200, 401, 401]);
		expect(r.executions()).toHaveLength(1);
	});

	it("the credential's header names are used: a shared secret in a custom header", async () => {
		const r = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'sharedSecret' },
			webhookCredentials: webhookCredential({ headerName: 'X-Hook-Key' }),
		});
		const raw = JSON.stringify(event());
		const good = await post(r.url, raw, { 'x-hook-key': SECRET });
		const defaultHeader = await post(r.url, raw, { 'x-backlog-secret': SECRET });
		expect([good.status, defaultHeader.status]).toEqual([200, 401]);
	});

	it('a version 1 node can be moved to the credential by setting Secret Source to Credential', async () => {
		const r = await listen({
			typeVersion: 1,
			parameters: { authentication: 'hmacSha256', secretSource: 'credential' },
			webhookCredentials: webhookCredential(),
		});
		const raw = JSON.stringify(event());
		expect((await post(r.url, raw, signed(raw))).status).toBe(200);
	});

	it('an empty secret in the credential fails visibly, naming the credential', async () => {
		const r = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'hmacSha256' },
			webhookCredentials: { secret: '' },
		});
		const raw = JSON.stringify(event());
		const response = await post(r.url, raw, signed(raw));
		expect(response.status).toBe(500);
		expect(String((r.calls[0].error as Error).message)).toMatch(
			/Task Backlog Webhook credential's Secret is empty/,
		);
	});

	it('the credential is declared by the node for signed requests only, and its test checks it is usable', async () => {
		const node = new TaskBacklogTrigger();
		const [declared] = node.description.credentials!;
		expect(declared).toMatchObject({
			name: new TaskBacklogWebhookApi().name,
			testedBy: 'webhookSecretTest',
		});
		expect(declared.displayOptions?.show).toEqual({
			authentication: ['sharedSecret', 'hmacSha256'],
			secretSource: ['credential'],
		});
		const test = node.methods.credentialTest.webhookSecretTest;
		const context = {} as ICredentialTestFunctions;
		const credential = (data: IDataObject) =>
			({ id: '1', name: 'c', type: 'taskBacklogWebhookApi', data }) as never;
		expect((await test.call(context, credential({ secret: '' }))).status).toBe('Error');
		expect(
			(
				await test.call(
					context,
					credential({ secret: 's', signatureCoversTimestamp: true, timestampHeader: '' }),
				)
			).status,
		).toBe('Error');
		expect((await test.call(context, credential({ secret: 's' }))).status).toBe('OK');
	});
});

describe('repeated deliveries', () => {
	const hmacNode: INodeParameters = {
		authentication: 'hmacSha256',
		secret: SECRET,
		signatureCoversTimestamp: true,
	};

	it('the same signed request delivered twice starts one execution; the repeat is acknowledged with 200', async () => {
		const r = await listen({ parameters: hmacNode });
		const raw = JSON.stringify(event());
		const headers = signed(raw);
		const first = await post(r.url, raw, headers);
		const again = await post(r.url, raw, headers);
		expect(first).toEqual({ status: 200, body: { received: true } });
		expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
		expect(r.executions()).toHaveLength(1);
	});

	it('two identical requests arriving at the same time start one execution', async () => {
		const r = await listen({ parameters: hmacNode });
		const raw = JSON.stringify(event());
		const headers = signed(raw);
		const answers = await Promise.all([
			post(r.url, raw, headers),
			post(r.url, raw, headers),
			post(r.url, raw, headers),
		]);
		expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
		expect(r.executions()).toHaveLength(1);
	});

	it('a captured body and signature replayed with a fresh timestamp starts nothing when the signature covers only the body', async () => {
		const r = await listen({ parameters: { authentication: 'hmacSha256', secret: SECRET } });
		const raw = JSON.stringify(event());
		const first = await post(
			r.url,
			raw,
			signed(raw, { coversTimestamp: false, timestamp: String(Number(nowSeconds()) - 30) }),
		);
		const replay = await post(r.url, raw, signed(raw, { coversTimestamp: false }));
		expect([first.status, replay.status]).toEqual([200, 200]);
		expect(replay.body).toEqual({ received: true, duplicate: true });
		expect(r.executions()).toHaveLength(1);
	});

	it('different events, and an event without id or updated_at re-signed with a new timestamp, each start their own execution', async () => {
		const r = await listen({ parameters: hmacNode });
		const raw = JSON.stringify(event());
		await post(r.url, raw, signed(raw, { timestamp: String(Number(nowSeconds()) - 5) }));
		await post(r.url, raw, signed(raw));
		const other = JSON.stringify(event());
		await post(r.url, other, signed(other));
		expect(r.executions()).toHaveLength(3);
	});

	it('the repeat is still caught by another process (or after a restart), through the workflow static data', async () => {
		const staticData: IDataObject = {};
		const raw = JSON.stringify(event());
		const headers = signed(raw);
		const first = await listen({ parameters: hmacNode, staticData });
		await post(first.url, raw, headers);

		// A fresh copy of the node module: nothing of the first process's memory, only the saved static data.
		const second = await listen({
			nodeType: freshTrigger(),
			parameters: hmacNode,
			staticData: JSON.parse(JSON.stringify(staticData)) as IDataObject,
		});
		const again = await post(second.url, raw, headers);
		expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
		expect(second.executions()).toHaveLength(0);

		// The control: the same fresh process without the static data would have started it.
		const third = await listen({ nodeType: freshTrigger(), parameters: hmacNode, staticData: {} });
		await post(third.url, raw, headers);
		expect(third.executions()).toHaveLength(1);
	});

	it('with Drop Repeated Deliveries off, a repeat starts the workflow again', async () => {
		const r = await listen({ parameters: { ...hmacNode, options: { dropRepeats: false } } });
		const raw = JSON.stringify(event());
		const headers = signed(raw);
		await post(r.url, raw, headers);
		await post(r.url, raw, headers);
		expect(r.executions()).toHaveLength(2);
	});

	it('what is remembered in static data is a short hash per delivery, never the secret or a signature', async () => {
		const staticData: IDataObject = {};
		const r = await listen({ parameters: hmacNode, staticData });
		for (let i = 0; i < 20; i++) {
			const raw = JSON.stringify(event());
			await post(r.url, raw, signed(raw));
		}
		const stored = Object.keys((staticData.acceptedDeliveries ?? {}) as IDataObject);
		expect(stored).toHaveLength(20);
		expect(stored.every((key) => /^[0-9a-f]{32}$/.test(key))).toBe(true);
		expect(JSON.stringify(staticData)).not.toContain(SECRET);
		expect(JSON.stringify(staticData)).not.toMatch(/sha256=/);
	});

	it('remembered deliveries expire after their window, and at most 500 are kept in static data', () => {
		const stored: IDataObject = {};
		const t0 = 1_700_000_000_000;
		expect(firstDelivery('wf/a', stored, 'k1', t0, 60_000)).toBe(true);
		expect(firstDelivery('wf/a', stored, 'k1', t0 + 59_000, 60_000)).toBe(false);
		expect(firstDelivery('wf/a', stored, 'k1', t0 + 61_000, 60_000)).toBe(true);
		// Another trigger node (scope) has its own memory.
		expect(firstDelivery('wf/b', {}, 'k1', t0 + 61_000, 60_000)).toBe(true);
		for (let i = 0; i < 700; i++)
			firstDelivery('wf/c', stored, `key-${i}`, t0 + 70_000 + i, 600_000);
		const kept = Object.keys(stored.acceptedDeliveries as IDataObject);
		expect(kept).toHaveLength(500);
		// The oldest are forgotten first.
		expect(kept).toContain('key-699');
		expect(kept).not.toContain('key-0');
	});
});

describe('a repeated delivery is recognised by the event it carries', () => {
	const hmacNode: INodeParameters = {
		authentication: 'hmacSha256',
		secret: SECRET,
		signatureCoversTimestamp: true,
	};
	const secondsAgo = (seconds: number) => String(Number(nowSeconds()) - seconds);

	/** An event of a task (a fresh task each call, so that no other test's event is the same), as the service sends. */
	const taskEvent = (
		options: { type?: string; uid?: string; updatedAt?: string; extra?: IDataObject } = {},
	) => ({
		type: options.type ?? 'task.completed',
		data: {
			task: {
				uid: options.uid ?? randomUUID(),
				status: 'DONE',
				fields: { title: `Ticket ${++counter}` },
				updated_at: options.updatedAt ?? '2024-05-01T10:00:00Z',
			},
		},
		info: {},
		sentAt: new Date().toISOString(),
		...options.extra,
	});

	/** Sends the payload as it is, then `again` (a re-stamped or re-serialised copy); returns both answers. */
	async function sendTwice(r: WebhookReceiver, raw: string, again: string, coversTimestamp = true) {
		const first = await post(
			r.url,
			raw,
			signed(raw, { timestamp: secondsAgo(5), coversTimestamp }),
		);
		const second = await post(r.url, again, signed(again, { coversTimestamp }));
		// Both validly signed: a repeat is acknowledged, never turned away.
		expect([first.status, second.status]).toEqual([200, 200]);
		return [first, second];
	}

	it('the same event re-sent with a new timestamp and signature starts one execution', async () => {
		const r = await listen({ parameters: hmacNode });
		const payload = taskEvent();
		const raw = JSON.stringify(payload);
		const answers = await sendTwice(r, raw, raw);
		expect(answers).toEqual([
			{ status: 200, body: { received: true } },
			{ status: 200, body: { received: true, duplicate: true } },
		]);
		expect(r.executions()).toHaveLength(1);
	});

	it('the same event re-stamped by the sender (a new sentAt in the body, re-signed) starts one execution', async () => {
		const r = await listen({ parameters: hmacNode });
		const payload = taskEvent();
		const later = { ...payload, sentAt: new Date(Date.now() + 60_000).toISOString() };
		await sendTwice(r, JSON.stringify(payload), JSON.stringify(later));
		expect(r.executions()).toHaveLength(1);
	});

	it('the same event re-serialized (keys reordered, other whitespace) starts one execution', async () => {
		// Signed over the body alone, so that only the serialisation changes the signature.
		const r = await listen({ parameters: { authentication: 'hmacSha256', secret: SECRET } });
		const payload = taskEvent();
		const task = payload.data.task;
		const reordered = {
			sentAt: payload.sentAt,
			info: {},
			data: {
				task: {
					updated_at: task.updated_at,
					fields: task.fields,
					status: task.status,
					uid: task.uid,
				},
			},
			type: payload.type,
		};
		const again = JSON.stringify(reordered, null, 2);
		expect(again).not.toBe(JSON.stringify(payload));
		// The signature over the body alone differs too: nothing of the first request's bytes is the same.
		await sendTwice(r, JSON.stringify(payload), again, false);
		expect(r.executions()).toHaveLength(1);
	});

	it('two events of the same task with different updated_at both start executions', async () => {
		const r = await listen({ parameters: hmacNode });
		const uid = randomUUID();
		const first = taskEvent({ uid, updatedAt: '2024-05-01T10:00:00Z' });
		const second = {
			...first,
			data: { task: { ...first.data.task, updated_at: '2024-05-01T10:00:01Z' } },
		};
		const answers = await sendTwice(r, JSON.stringify(first), JSON.stringify(second));
		expect(answers.map((answer) => answer.body)).toEqual([{ received: true }, { received: true }]);
		expect(r.executions()).toHaveLength(2);
	});

	it('two changes a caller dated with the same old updated_at both start executions, told apart by internal_updated_at where the service sends it, else by the task content', async () => {
		// Spec 2.2: updated_at is writable by callers (their ticket's time); internal_updated_at is the service's own.
		const r = await listen({ parameters: hmacNode });
		const uid = randomUUID();
		const dated = (internal: string | undefined, title: string) => {
			const event = taskEvent({ uid, type: 'task.updated', updatedAt: '2020-01-01T00:00:00Z' });
			Object.assign(event.data.task, {
				fields: { title },
				...(internal && { internal_updated_at: internal }),
			});
			return JSON.stringify(event);
		};
		await sendTwice(
			r,
			dated('2024-05-01T10:00:00.100Z', 'First'),
			dated('2024-05-01T10:00:07.300Z', 'Second'),
		);
		expect(r.executions()).toHaveLength(2);

		const other = await listen({ parameters: hmacNode });
		await sendTwice(other, dated(undefined, 'First'), dated(undefined, 'Second'));
		expect(other.executions()).toHaveLength(2);
		// The same change delivered again, its time metrics grown meanwhile: one event.
		const again = await listen({ parameters: hmacNode });
		const event = taskEvent({ updatedAt: '2020-01-01T00:00:00Z' });
		const waiting = (seconds: number) =>
			JSON.stringify({
				...event,
				data: { task: { ...event.data.task, queue_time: seconds, wait_time: seconds } },
			});
		await sendTwice(again, waiting(60), waiting(120));
		expect(again.executions()).toHaveLength(1);
	});

	it('two kinds of event for the same task version both start executions', async () => {
		const r = await listen({ parameters: hmacNode });
		const started = taskEvent({ type: 'task.started' });
		const assigned = { ...started, type: 'task.assigned' };
		await sendTwice(r, JSON.stringify(started), JSON.stringify(assigned));
		expect(r.executions()).toHaveLength(2);
	});

	it.each(['id', 'event_id', 'eventId'])(
		'an event carrying its own id (%s) is recognised by it: re-sent with the task re-read, it starts one execution',
		async (field) => {
			const r = await listen({ parameters: hmacNode });
			const id = `evt_${randomUUID()}`;
			const payload = taskEvent({ extra: { [field]: id } });
			// The service rebuilt the event from the task's newer state when it re-sent it; the id says it is the same.
			const resent = {
				...payload,
				data: { task: { ...payload.data.task, updated_at: '2024-05-01T10:05:00Z' } },
			};
			await sendTwice(r, JSON.stringify(payload), JSON.stringify(resent));
			expect(r.executions()).toHaveLength(1);
		},
	);

	it('two events with different ids both start executions, even for the same task version', async () => {
		const r = await listen({ parameters: hmacNode });
		const payload = taskEvent({ extra: { id: `evt_${randomUUID()}` } });
		const other = { ...payload, id: `evt_${randomUUID()}` };
		await sendTwice(r, JSON.stringify(payload), JSON.stringify(other));
		expect(r.executions()).toHaveLength(2);
	});

	it("an id that is the task's own uid is not taken for the event's id", async () => {
		const r = await listen({ parameters: hmacNode });
		const uid = randomUUID();
		const first = taskEvent({ uid, updatedAt: '2024-05-01T10:00:00Z', extra: { id: uid } });
		const second = {
			...first,
			data: { task: { ...first.data.task, updated_at: '2024-05-01T11:00:00Z' } },
		};
		await sendTwice(r, JSON.stringify(first), JSON.stringify(second));
		expect(r.executions()).toHaveLength(2);
	});

	it.each([
		['without id or updated_at', { type: 'task.completed', data: { task: { uid: 'u' } } }],
		['without a task uid', { type: 'task.completed', data: { task: { updated_at: 't' } } }],
		['without an event kind', { data: { task: { uid: 'u', updated_at: 't' } } }],
	])('an event %s is keyed by its bytes', async (_case, shape) => {
		const r = await listen({ parameters: hmacNode });
		// Unique bytes per test; the same bytes re-signed with a new timestamp are another delivery.
		const raw = JSON.stringify({ ...shape, sentAt: `${new Date().toISOString()} #${++counter}` });
		await sendTwice(r, raw, raw);
		expect(r.executions()).toHaveLength(2);
		// The same request (bytes, timestamp and signature) again is still a repeat.
		const headers = signed(raw, { timestamp: secondsAgo(10) });
		await post(r.url, raw, headers);
		const again = await post(r.url, raw, headers);
		expect(again.body).toEqual({ received: true, duplicate: true });
		expect(r.executions()).toHaveLength(3);
	});

	it('a repeat must still be validly signed: a re-sent event with a wrong signature gets 401', async () => {
		const r = await listen({ parameters: hmacNode });
		const raw = JSON.stringify(taskEvent());
		await post(r.url, raw, signed(raw));
		const forged = await post(r.url, raw, signed(raw, { secret: 'not-the-secret' }));
		expect(forged.status).toBe(401);
		expect(r.executions()).toHaveLength(1);
	});

	it('a batch of events re-sent in another order starts one execution', async () => {
		const r = await listen({ parameters: hmacNode });
		const a = taskEvent();
		const b = taskEvent({ type: 'task.assigned' });
		await sendTwice(r, JSON.stringify([a, b]), JSON.stringify([b, a]));
		expect(r.executions()).toHaveLength(1);
	});

	it('the event is remembered across processes through static data, as a short hash', async () => {
		const staticData: IDataObject = {};
		const payload = taskEvent();
		const first = await listen({ parameters: hmacNode, staticData });
		const raw = JSON.stringify(payload);
		await post(first.url, raw, signed(raw, { timestamp: secondsAgo(5) }));
		const second = await listen({
			nodeType: freshTrigger(),
			parameters: hmacNode,
			staticData: JSON.parse(JSON.stringify(staticData)) as IDataObject,
		});
		const again = await post(second.url, raw, signed(raw));
		expect(again.body).toEqual({ received: true, duplicate: true });
		const stored = Object.keys(staticData.acceptedDeliveries as IDataObject);
		expect(stored.every((key) => /^[0-9a-f]{32}$/.test(key))).toBe(true);
		expect(JSON.stringify(staticData)).not.toContain(payload.data.task.uid);
	});

	it('the parameters say what a repeat is recognised by', () => {
		const options = new TaskBacklogTrigger().description.properties.find(
			(property) => property.name === 'options',
		)!.options as Array<{ name: string; description?: string; hint?: string }>;
		const dropRepeats = options.find((option) => option.name === 'dropRepeats')!;
		const said = `${dropRepeats.description} ${dropRepeats.hint}`;
		for (const key of [/\bid\b/, /event_id/, /eventId/, /updated_at/, /signed bytes/])
			expect(said).toMatch(key);
	});
});

describe('Include Headers', () => {
	it('outputs neither the configured secret and signature headers nor authorization and cookie', async () => {
		const r = await listen({
			parameters: {
				authentication: 'hmacSha256',
				secret: SECRET,
				signatureCoversTimestamp: true,
				signatureHeader: 'X-Custom-Signature',
				options: { includeHeaders: true },
			},
		});
		const raw = JSON.stringify(event());
		const { 'x-backlog-signature': signature, ...rest } = signed(raw);
		await post(r.url, raw, {
			...rest,
			'x-custom-signature': signature,
			'x-backlog-secret': SECRET,
			authorization: 'Bearer someone-else',
			cookie: 'session=abc',
			'x-backlog-event': 'task.completed',
		});
		const [[item]] = r.executions();
		const headers = item.json.headers as IDataObject;
		for (const name of ['x-custom-signature', 'x-backlog-secret', 'authorization', 'cookie'])
			expect(headers).not.toHaveProperty(name);
		expect(headers['x-backlog-event']).toBe('task.completed');
		expect(headers['x-backlog-timestamp']).toMatch(/^\d+$/);
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});

	it("a shared secret sent in the credential's header is not output", async () => {
		const r = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'sharedSecret', options: { includeHeaders: true } },
			webhookCredentials: webhookCredential({ headerName: 'X-Hook-Key' }),
		});
		await post(r.url, JSON.stringify(event()), { 'x-hook-key': SECRET });
		const [[item]] = r.executions();
		expect(item.json.headers).not.toHaveProperty('x-hook-key');
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});
});
