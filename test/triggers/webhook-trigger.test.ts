/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
import { createHmac } from 'node:crypto';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import type { INodeParameters } from 'n8n-workflow';

import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { startSimulator, type Simulator } from '../../tools/simulator/simulator';
import {
	hookContext,
	nowSeconds,
	postRaw,
	startWebhookReceiver,
	type WebhookReceiver,
} from './harness';

const SECRET = 'whsec-test-1b7d';

const hmacParameters: INodeParameters = {
	authentication: 'hmacSha256',
	secret: SECRET,
	signatureCoversTimestamp: true,
};

const event = (type = 'task.completed', uid = '3c90c3cc-0d44-4b50-8888-8dd25736052a') => ({
	type,
	data: {
		task: {
			uid,
			status: type === 'task.completed' ? 'DONE' : 'TODO',
			fields: { title: 'Ticket 42' },
		},
	},
	info: {},
	sentAt: new Date().toISOString(),
});

function sign(raw: string, timestamp: string | undefined, secret = SECRET) {
	const signed = timestamp === undefined ? raw : `${timestamp}.${raw}`;
	return `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`;
}

const post = postRaw;

/** A request signed as the simulator (and presumably the service) signs: timestamp header, HMAC over ts.body. */
async function postSigned(
	url: string,
	payload: unknown,
	options: { timestamp?: string; secret?: string } = {},
) {
	const raw = JSON.stringify(payload);
	const timestamp = options.timestamp ?? nowSeconds();
	return await post(url, raw, {
		'x-backlog-timestamp': timestamp,
		'x-backlog-signature': sign(raw, timestamp, options.secret),
	});
}

// Nodes log through n8n's Logger (this.logger); rejections are logged there, and checked below.
const logger = Container.get(Logger);
let logSpies: jest.SpyInstance[] = [];
beforeEach(() => {
	logSpies = (['warn', 'info'] as const).map((level) =>
		jest.spyOn(logger, level).mockImplementation(() => {}),
	);
});
afterEach(() => logSpies.forEach((spy) => spy.mockRestore()));
const logged = () =>
	logSpies.flatMap((spy) => spy.mock.calls.map((call) => call.map(String).join(' '))).join('\n');

describe('Task Backlog Trigger (webhook)', () => {
	let receiver: WebhookReceiver | undefined;
	let sim: Simulator | undefined;

	afterEach(async () => {
		await sim?.stop();
		await receiver?.stop();
		sim = undefined;
		receiver = undefined;
	});

	const listen = async (parameters: INodeParameters) =>
		(receiver = await startWebhookReceiver({ nodeType: new TaskBacklogTrigger(), parameters }));

	/** A request to the simulator's API, which must succeed. */
	const api = async (method: string, path: string, body: unknown) => {
		const response = await fetch(`${sim!.url}${path}`, {
			method,
			headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		expect(response.status).toBe(200);
		return (await response.json()) as { uid: string };
	};

	it('a valid signed event starts an execution with the payload', async () => {
		const r = await listen(hmacParameters);
		const payload = event('task.completed');

		const response = await postSigned(r.url, payload);

		expect(response).toEqual({ status: 200, body: { received: true } });
		expect(r.executions()).toHaveLength(1);
		expect(r.executions()[0]).toEqual([{ json: payload }]);
	});

	it('a bad or missing signature gets 401 and no execution', async () => {
		const r = await listen(hmacParameters);
		const raw = JSON.stringify(event());
		const ts = nowSeconds();

		const attempts: Array<Record<string, string>> = [
			// no signature at all
			{ 'x-backlog-timestamp': ts },
			// signed with another secret
			{ 'x-backlog-timestamp': ts, 'x-backlog-signature': sign(raw, ts, 'another-secret') },
			// signature of the body alone, while the trigger expects it to cover the timestamp
			{ 'x-backlog-timestamp': ts, 'x-backlog-signature': sign(raw, undefined) },
			// garbage of the right shape
			{ 'x-backlog-timestamp': ts, 'x-backlog-signature': `sha256=${'0'.repeat(64)}` },
			// no timestamp, so nothing to check the age of
			{ 'x-backlog-signature': sign(raw, ts) },
		];
		for (const headers of attempts) {
			const response = await post(r.url, raw, headers);
			expect(response.status).toBe(401);
			expect(response.body).toEqual({ received: false, error: 'Unauthorized' });
		}
		// A body changed after signing (the signature itself is valid for the original).
		const tampered = raw.replace('Ticket 42', 'Ticket 43');
		const response = await post(r.url, tampered, {
			'x-backlog-timestamp': ts,
			'x-backlog-signature': sign(raw, ts),
		});
		expect(response.status).toBe(401);

		expect(r.executions()).toHaveLength(0);
		expect(r.calls.every((call) => call.status === 401 && call.workflowData === undefined)).toBe(
			true,
		);
		// The reason is logged for whoever has to fix the configuration, never the secret.
		expect(logged()).toMatch(/rejected a request: signature does not match/);
		expect(logged()).toMatch(/rejected a request: missing x-backlog-signature header/);
		expect(logged()).not.toContain(SECRET);
	});

	it('a replay outside the window is rejected', async () => {
		const r = await listen({ ...hmacParameters, replayWindowSeconds: 300 });
		const payload = event();

		const old = await postSigned(r.url, payload, {
			timestamp: String(Math.floor(Date.now() / 1000) - 301),
		});
		const future = await postSigned(r.url, payload, {
			timestamp: String(Math.floor(Date.now() / 1000) + 400),
		});
		// The old request's body and signature, with a fresh timestamp: the signature covers the time, so no.
		const raw = JSON.stringify(payload);
		const oldTs = String(Math.floor(Date.now() / 1000) - 3600);
		const refreshed = await post(r.url, raw, {
			'x-backlog-timestamp': nowSeconds(),
			'x-backlog-signature': sign(raw, oldTs),
		});
		const recent = await postSigned(r.url, payload, {
			timestamp: String(Math.floor(Date.now() / 1000) - 60),
		});

		expect([old.status, future.status, refreshed.status, recent.status]).toEqual([
			401, 401, 401, 200,
		]);
		expect(r.executions()).toHaveLength(1);
	});

	it('a signature over the body alone is accepted when the trigger is set so, with the age still checked', async () => {
		const r = await listen({
			authentication: 'hmacSha256',
			secret: SECRET,
			signatureCoversTimestamp: false,
		});
		const raw = JSON.stringify(event());

		const fresh = await post(r.url, raw, {
			'x-backlog-timestamp': nowSeconds(),
			'x-backlog-signature': sign(raw, undefined),
		});
		const stale = await post(r.url, raw, {
			'x-backlog-timestamp': String(Math.floor(Date.now() / 1000) - 1000),
			'x-backlog-signature': sign(raw, undefined),
		});

		expect([fresh.status, stale.status]).toEqual([200, 401]);
	});

	it('without a timestamp header configured, a bare signature with no prefix is checked on the body', async () => {
		const r = await listen({
			authentication: 'hmacSha256',
			secret: SECRET,
			timestampHeader: '',
			signatureHeader: 'X-Signature',
			signaturePrefix: '',
		});
		const raw = JSON.stringify(event());
		const digest = createHmac('sha256', SECRET).update(raw).digest('hex');

		const good = await post(r.url, raw, { 'x-signature': digest });
		// Several signatures (e.g. while the service rotates its secret): one valid is enough.
		const rotated = await post(r.url, raw, {
			'x-signature': `${'a'.repeat(64)}, ${digest.toUpperCase()}`,
		});
		const bad = await post(r.url, raw, {
			'x-signature': digest.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
		});

		expect([good.status, rotated.status, bad.status]).toEqual([200, 200, 401]);
	});

	it('a shared secret header must match exactly', async () => {
		const r = await listen({ authentication: 'sharedSecret', secret: SECRET });
		const raw = JSON.stringify(event());

		const good = await post(r.url, raw, { 'x-backlog-secret': SECRET });
		const wrong = await post(r.url, raw, { 'x-backlog-secret': `${SECRET}x` });
		const missing = await post(r.url, raw, {});

		expect([good.status, wrong.status, missing.status]).toEqual([200, 401, 401]);
		expect(r.executions()).toHaveLength(1);
	});

	it('with no authentication every request is accepted', async () => {
		const r = await listen({});
		const response = await post(r.url, JSON.stringify(event('task.updated')), {});
		expect(response).toEqual({ status: 200, body: { received: true } });
		expect(r.executions()).toHaveLength(1);
	});

	it('an empty secret fails visibly instead of rejecting every event silently', async () => {
		const r = await listen({ authentication: 'hmacSha256', secret: '' });
		const response = await postSigned(r.url, event());
		expect(response.status).toBe(500);
		expect(String((r.calls[0].error as Error).message)).toMatch(/Secret is empty/);
		expect(r.executions()).toHaveLength(0);
	});

	it('an event kind not in the list is dropped', async () => {
		const r = await listen({ ...hmacParameters, events: ['task.completed', 'task.reopened'] });

		const updated = await postSigned(r.url, event('task.updated'));
		const noType = await postSigned(r.url, { data: { task: {} } });
		const completed = await postSigned(r.url, event('task.completed'));

		// Dropped events are still acknowledged, so the service does not resend them.
		expect(updated).toEqual({ status: 200, body: { received: true, ignored: true } });
		expect(noType).toEqual({ status: 200, body: { received: true, ignored: true } });
		expect(completed).toEqual({ status: 200, body: { received: true } });
		expect(r.executions()).toHaveLength(1);
		expect(r.executions()[0][0].json.type).toBe('task.completed');
	});

	it('the event kind is read from a configurable field, and kinds outside the list can be typed in', async () => {
		const r = await listen({
			otherEvents: 'ticket.closed, ticket.merged',
			options: { eventField: 'meta.kind' },
		});

		const merged = await post(
			r.url,
			JSON.stringify({ meta: { kind: 'ticket.merged' }, id: 1 }),
			{},
		);
		const opened = await post(
			r.url,
			JSON.stringify({ meta: { kind: 'ticket.opened' }, id: 2 }),
			{},
		);
		const topLevelType = await post(r.url, JSON.stringify({ type: 'ticket.closed', id: 3 }), {});

		expect([merged.body, opened.body, topLevelType.body]).toEqual([
			{ received: true },
			{ received: true, ignored: true },
			{ received: true, ignored: true },
		]);
		expect(r.executions().map((items) => items[0].json.id)).toEqual([1]);
	});

	it('includes the request headers when asked', async () => {
		const r = await listen({ ...hmacParameters, options: { includeHeaders: true } });
		const payload = event();
		await postSigned(r.url, payload);
		const [[item]] = r.executions();
		expect(item.json.body).toEqual(payload);
		expect((item.json.headers as Record<string, string>)['x-backlog-timestamp']).toMatch(/^\d+$/);
	});

	it('with Include Headers given as the text "false" by an expression, the output is the payload alone, no headers', async () => {
		const r = await listen({ ...hmacParameters, options: { includeHeaders: '={{ "false" }}' } });
		const payload = event();
		await postSigned(r.url, payload);
		const [[item]] = r.executions();
		expect(item.json).toEqual(payload);
		expect(item.json.headers).toBeUndefined();
	});

	it('Include Headers from an expression neither true nor false fails visibly, naming the option', async () => {
		const r = await listen({ ...hmacParameters, options: { includeHeaders: '={{ "no" }}' } });
		const response = await postSigned(r.url, event());
		expect(response.status).toBe(500);
		expect(String((r.calls[0].error as Error).message)).toMatch(/Include Headers is "no"/);
		expect(r.executions()).toHaveLength(0);
	});

	it('a JSON body sent without a JSON content type is still read (and verified on its raw bytes)', async () => {
		const r = await listen(hmacParameters);
		const raw = JSON.stringify(event());
		const ts = nowSeconds();
		const response = await fetch(r.url, {
			method: 'POST',
			headers: {
				'content-type': 'text/plain',
				'x-backlog-timestamp': ts,
				'x-backlog-signature': sign(raw, ts),
			},
			body: raw,
		});
		expect(response.status).toBe(200);
		expect(r.executions()[0][0].json).toEqual(JSON.parse(raw));
	});

	it('closing a task in the simulator delivers a signed event the trigger accepts', async () => {
		const r = await listen({ ...hmacParameters, events: ['task.completed'] });
		sim = await startSimulator({ webhooks: [{ url: r.url, secret: SECRET, signTimestamp: true }] });

		const task = await api('POST', '/tasks', { fields: { title: 'Close me', ticket_id: 'T-1' } });
		await api('PATCH', `/tasks/${task.uid}`, { status: 'DONE' });
		await sim.flushDeliveries();

		// Both events were delivered and acknowledged; only the completion started an execution.
		expect(sim.deliveries.map((d) => [(d.event as { type: string }).type, d.status])).toEqual([
			['task.created', 200],
			['task.completed', 200],
		]);
		expect(r.executions()).toHaveLength(1);
		const [[item]] = r.executions();
		expect(item.json).toMatchObject({
			type: 'task.completed',
			data: { task: { uid: task.uid, status: 'DONE' } },
		});
	});

	it("the service's event re-sent later (a new sentAt and timestamp, re-signed) starts one execution; the task's next change starts another", async () => {
		const r = await listen({ ...hmacParameters, events: ['task.completed', 'task.updated'] });
		sim = await startSimulator({ webhooks: [{ url: r.url, secret: SECRET, signTimestamp: true }] });
		const task = await api('POST', '/tasks', { fields: { title: 'Resend me' } });
		await api('PATCH', `/tasks/${task.uid}`, { status: 'DONE' });
		await sim.flushDeliveries();
		expect(r.executions()).toHaveLength(1);

		// The simulator's own payload, re-stamped as a service resending it would: what the trigger must recognise.
		const delivered = sim.deliveries.find(
			(delivery) => (delivery.event as { type: string }).type === 'task.completed',
		)!.event as { sentAt: string };
		const resent = { ...delivered, sentAt: new Date(Date.now() + 30_000).toISOString() };
		const again = await postSigned(r.url, resent, { timestamp: String(Number(nowSeconds()) + 1) });
		expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
		expect(r.executions()).toHaveLength(1);

		await api('PATCH', `/tasks/${task.uid}`, { fields: { title: 'Resend me, changed' } });
		await sim.flushDeliveries();
		expect((sim.deliveries.at(-1)?.event as { type: string }).type).toBe('task.updated');
		expect(r.executions()).toHaveLength(2);
	});

	it('the simulator signing the body alone is accepted by a trigger set to that scheme, and rejected with the wrong secret', async () => {
		const good = await listen({ authentication: 'hmacSha256', secret: SECRET });
		const bad = await startWebhookReceiver({
			nodeType: new TaskBacklogTrigger(),
			parameters: { authentication: 'hmacSha256', secret: 'not-the-secret' },
		});
		try {
			sim = await startSimulator({
				webhooks: [
					{ url: good.url, secret: SECRET },
					{ url: bad.url, secret: SECRET },
				],
			});
			const response = await fetch(`${sim.url}/tasks`, {
				method: 'POST',
				headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
				body: JSON.stringify({ fields: { title: 'Hello' } }),
			});
			expect(response.status).toBe(200);
			await sim.flushDeliveries();

			expect(sim.deliveries.map((d) => [d.url, d.status])).toEqual(
				expect.arrayContaining([
					[good.url, 200],
					[bad.url, 401],
				]),
			);
			expect(good.executions()).toHaveLength(1);
			expect(bad.executions()).toHaveLength(0);
		} finally {
			await bad.stop();
		}
	});
});

describe('Task Backlog Trigger webhook lifecycle', () => {
	it('has nothing to register remotely and says so in its description', () => {
		const node = new TaskBacklogTrigger();
		expect(node.description.webhooks).toEqual([
			{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' },
		]);
		expect(node.description.inputs).toEqual([]);
		// The only credential is the webhook secret's own: nothing is sent to the service.
		expect(node.description.credentials?.map((credential) => credential.name)).toEqual([
			'taskBacklogWebhookApi',
		]);
		expect(JSON.stringify(node.description.properties)).toMatch(/no API to register/);
	});

	it('records the production URL on activation and forgets it on deactivation, without calling the service', async () => {
		const node = new TaskBacklogTrigger();
		const { context, staticData } = hookContext({ nodeType: node, parameters: {} });
		const methods = node.webhookMethods.default;

		expect(await methods.checkExists.call(context)).toBe(false);
		expect(await methods.create.call(context)).toBe(true);
		expect(staticData().webhookUrl).toBe(
			'http://localhost:5678/webhook/b5a1c7e2-3f5d-4a8e-9c1b-2d7e6f0a9b31/webhook',
		);
		expect(await methods.checkExists.call(context)).toBe(true);
		expect(await methods.delete.call(context)).toBe(true);
		expect(await methods.checkExists.call(context)).toBe(false);
	});
});
