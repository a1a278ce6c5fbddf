/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * The Task Backlog Trigger's output never carries a header that the Webhook credential or the trigger's settings
 * name as the secret or signature header, whatever the Authentication: with None and Include Headers on, n8n gives
 * the node neither the credential nor the hidden header settings, so the names verification used are remembered with
 * the workflow, and a header whose name says it carries a secret is left out in every mode.
 * Requests go over real HTTP to the node's webhook() in n8n's real WebhookContext (test/triggers/harness.ts).
 */
import { createHmac } from 'node:crypto';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';

import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { startWebhookReceiver, type TriggerSetup, type WebhookReceiver } from '../triggers/harness';

const SECRET = 'whsec-output-4b7d';
let counter = 0;
const event = () => ({
	type: 'task.completed',
	data: { task: { uid: '3c90c3cc-0d44-4b50-8888-8dd25736052a' } },
	n: ++counter,
});

const credential = (fields: ICredentialDataDecryptedObject = {}) => ({
	secret: SECRET,
	headerName: 'x-backlog-secret',
	signatureHeader: 'x-backlog-signature',
	signaturePrefix: 'sha256=',
	timestampHeader: 'x-backlog-timestamp',
	signatureCoversTimestamp: false,
	...fields,
});

const receivers: WebhookReceiver[] = [];
let spies: jest.SpyInstance[] = [];
beforeEach(() => {
	const logger = Container.get(Logger);
	spies = (['warn', 'info'] as const).map((level) =>
		jest.spyOn(logger, level).mockImplementation(() => {}),
	);
});
afterEach(async () => {
	spies.forEach((spy) => spy.mockRestore());
	await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
});

async function listen(setup: Omit<TriggerSetup, 'nodeType'>) {
	const receiver = await startWebhookReceiver({ nodeType: new TaskBacklogTrigger(), ...setup });
	receivers.push(receiver);
	return receiver;
}

/** Posts one event with `headers`; returns the headers of the item it started. */
async function deliver(receiver: WebhookReceiver, headers: Record<string, string>) {
	const raw = JSON.stringify(event());
	const response = await fetch(receiver.url, {
		method: 'POST',
		headers: {
			'content-type': 'application/json',
			'x-backlog-event': 'task.completed',
			...headers,
		},
		body: raw,
	});
	expect(response.status).toBe(200);
	const items = receiver.executions().at(-1)!;
	expect(items).toHaveLength(1);
	return { json: items[0].json, headers: items[0].json.headers as IDataObject };
}

const includeHeaders = { options: { includeHeaders: true } };

describe('Authentication None with Include Headers on', () => {
	it.each([
		'X-Hook-Key',
		'X-Webhook-Token',
		'X-Service-Secret',
		'X-Hub-Signature-256',
		'X-Api-Key',
		'X-Auth',
	])(
		'a header whose name says it carries a secret (%s) never reaches the output, whatever its value',
		async (name) => {
			const receiver = await listen({
				typeVersion: 1.1,
				parameters: { authentication: 'none', ...includeHeaders },
			});
			const item = await deliver(receiver, { [name]: SECRET, 'x-request-id': 'req-1' });
			expect(item.headers).not.toHaveProperty(name.toLowerCase());
			expect(item.headers['x-request-id']).toBe('req-1');
			expect(item.headers['x-backlog-event']).toBe('task.completed');
			expect(JSON.stringify(item.json)).not.toContain(SECRET);
		},
	);

	it('a header the Webhook credential names as the secret header never reaches the output after a switch to None, whatever its name', async () => {
		const staticData: IDataObject = {};
		const webhookCredentials = credential({ headerName: 'X-Shared' });
		const verifying = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'sharedSecret' },
			webhookCredentials,
			staticData,
		});
		await deliver(verifying, { 'x-shared': SECRET });

		// The same node, its Authentication set to None: the credential stays assigned but n8n no longer gives it out.
		const open = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'none', ...includeHeaders },
			webhookCredentials,
			staticData,
		});
		const item = await deliver(open, { 'x-shared': SECRET, 'x-other': 'kept' });
		expect(item.headers).not.toHaveProperty('x-shared');
		expect(item.headers['x-other']).toBe('kept');
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});

	it("a header the trigger's own settings (version 1, Node Parameters) name as the secret header never reaches the output after a switch to None", async () => {
		const staticData: IDataObject = {};
		const verifying = await listen({
			typeVersion: 1,
			parameters: { authentication: 'sharedSecret', secret: SECRET, headerName: 'X-Shared' },
			staticData,
		});
		await deliver(verifying, { 'x-shared': SECRET });
		const open = await listen({
			typeVersion: 1,
			parameters: { authentication: 'none', headerName: 'X-Shared', ...includeHeaders },
			staticData,
		});
		const item = await deliver(open, { 'x-shared': SECRET });
		expect(item.headers).not.toHaveProperty('x-shared');
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});
});

describe('every Authentication hides both names the credential gives', () => {
	it("with HMAC-SHA256, the credential's shared-secret header is left out as well as its signature header", async () => {
		const webhookCredentials = credential({ headerName: 'X-Shared', signatureHeader: 'X-Sig' });
		const receiver = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'hmacSha256', replayWindowSeconds: 0, ...includeHeaders },
			webhookCredentials: { ...webhookCredentials, timestampHeader: '' },
		});
		const raw = JSON.stringify(event());
		const signature = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
		const response = await fetch(receiver.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-sig': signature, 'x-shared': SECRET },
			body: raw,
		});
		expect(response.status).toBe(200);
		const [[item]] = receiver.executions();
		const headers = item.json.headers as IDataObject;
		expect(headers).not.toHaveProperty('x-sig');
		expect(headers).not.toHaveProperty('x-shared');
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});

	it('with Shared Secret Header, the signature header is left out as well', async () => {
		const receiver = await listen({
			typeVersion: 1.1,
			parameters: { authentication: 'sharedSecret', ...includeHeaders },
			webhookCredentials: credential({ headerName: 'X-Shared', signatureHeader: 'X-Sig' }),
		});
		const item = await deliver(receiver, { 'x-shared': SECRET, 'x-sig': 'sha256=abc' });
		expect(item.headers).not.toHaveProperty('x-shared');
		expect(item.headers).not.toHaveProperty('x-sig');
		expect(JSON.stringify(item.json)).not.toContain(SECRET);
	});
});
