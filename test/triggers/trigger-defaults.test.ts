/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- test code, never ships */
/**
 * Safer defaults for new Task Backlog Triggers (node version 1.2), while triggers saved with versions 1 and 1.1
 * keep theirs: n8n stores a node's parameters and a credential's fields only where they differ from the default,
 * so a saved trigger reads the defaults of its own version. Requests go over real HTTP to the node's webhook() in
 * n8n's real WebhookContext (see harness.ts); parameters get their defaults as n8n's Workflow gives them.
 */
import { createHmac } from 'node:crypto';

import type {
	ICredentialDataDecryptedObject,
	INodeParameters,
	INodeProperties,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { TaskBacklogWebhookApi } from '../../credentials/TaskBacklogWebhookApi.credentials';
import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { postRaw, signedHeaders, useWebhookReceivers } from './harness';

const KEY = 'defaults-test-key-5b21';
let counter = 0;

/** A payload unique to each call, so that Drop Repeated Deliveries never takes one for another. */
const event = () =>
	JSON.stringify({
		type: 'task.completed',
		data: { task: { uid: `a7c1e0f4-${++counter}`, fields: { title: `Ticket ${counter}` } } },
	});

const seconds = (offset = 0) => String(Math.floor(Date.now() / 1000) + offset);
const digest = (signed: string) =>
	`sha256=${createHmac('sha256', KEY).update(signed).digest('hex')}`;

/** Signed over `timestamp.body` (a service that signs the timestamp) or over the body alone. */
const signedOver = (raw: string, over: 'timestamp' | 'body', timestamp = seconds()) =>
	signedHeaders(KEY, raw, { timestamp, coversTimestamp: over === 'timestamp' });

/** The status n8n answers a POST of these bytes. */
const post = async (url: string, raw: string, headers: Record<string, string> = {}) =>
	(await postRaw(url, raw, headers)).status;

const receive = useWebhookReceivers(() => new TaskBacklogTrigger());
const listen = (
	typeVersion: number,
	parameters: INodeParameters,
	webhookCredentials?: ICredentialDataDecryptedObject,
) => receive({ typeVersion, parameters, ...(webhookCredentials && { webhookCredentials }) });

/** A captured request: its body and signature, made while its timestamp was fresh, ten minutes ago. */
function capturedLongAgo() {
	const raw = event();
	const then = signedOver(raw, 'body', seconds(-600));
	return { raw, signature: then['x-backlog-signature'] };
}

const description = (): INodeTypeDescription => new TaskBacklogTrigger().description;

/** The parameters n8n gives a trigger of this version saved with `saved` (defaults filled in, hidden ones left out). */
const resolved = (typeVersion: number, saved: INodeParameters) =>
	NodeHelpers.getNodeParameters(
		description().properties,
		saved,
		true,
		false,
		{ typeVersion },
		description(),
	) as INodeParameters;

/** Whether n8n's editor shows the property to a trigger of this version with these parameters. */
const shown = (property: INodeProperties, typeVersion: number, saved: INodeParameters) =>
	NodeHelpers.displayParameter(
		resolved(typeVersion, saved),
		property,
		{ typeVersion },
		description(),
	);

describe('a new trigger (version 1.2, the default version)', () => {
	it('is the version n8n adds; 1 and 1.1 stay declared for saved workflows', () => {
		expect(description().version).toEqual([1, 1.1, 1.2]);
		expect(description().defaultVersion).toBe(1.2);
	});

	it('with Authentication None (still the default) shows a notice that anyone who knows the URL can start the workflow', async () => {
		expect(resolved(1.2, {}).authentication).toBe('none');
		const notices = description().properties.filter(
			(property) => property.type === 'notice' && /anyone who knows/i.test(property.displayName),
		);
		expect(notices).toHaveLength(1);
		const [notice] = notices;
		expect(notice.displayName).toMatch(/Production URL can start this workflow/);
		expect(shown(notice, 1.2, {})).toBe(true);
		expect(shown(notice, 1.2, { authentication: 'hmacSha256' })).toBe(false);
		expect(shown(notice, 1.2, { authentication: 'sharedSecret' })).toBe(false);
		// What the notice says is what happens: an unsigned request starts the workflow.
		const r = await listen(1.2, {});
		expect(await post(r.url, event())).toBe(200);
		expect(r.executions()).toHaveLength(1);
	});

	it('has Signature Covers Timestamp on by default, on the node whatever the Secret Source, with a hint that the service must sign the timestamp too', () => {
		expect(resolved(1.2, { authentication: 'hmacSha256' }).signatureCoversTimestamp).toBe(true);
		expect(
			resolved(1.2, { authentication: 'hmacSha256', secretSource: 'parameters' })
				.signatureCoversTimestamp,
		).toBe(true);
		const [property] = description().properties.filter(
			(candidate) =>
				candidate.name === 'signatureCoversTimestamp' &&
				shown(candidate, 1.2, { authentication: 'hmacSha256' }),
		);
		expect(property.default).toBe(true);
		expect(property.hint).toMatch(/service must sign the timestamp too/);
		expect(property.hint).toMatch(/does not say how it signs/);
	});

	it('refuses a captured body and signature re-sent with a fresh timestamp after the replay window (401), and accepts a signature over the timestamp', async () => {
		// The credential leaves Signature Covers Timestamp unset, as a credential saved with it off does.
		const r = await listen(1.2, { authentication: 'hmacSha256' }, { secret: KEY });
		const good = event();
		const { raw, signature } = capturedLongAgo();
		const replayed = await post(r.url, raw, {
			'x-backlog-timestamp': seconds(),
			'x-backlog-signature': signature,
		});
		expect([await post(r.url, good, signedOver(good, 'timestamp')), replayed]).toEqual([200, 401]);
		expect(r.executions()).toHaveLength(1);
	});

	it('covers the timestamp by default with Secret Source Node Parameters too', async () => {
		const r = await listen(1.2, {
			authentication: 'hmacSha256',
			secretSource: 'parameters',
			secret: KEY,
		});
		const raw = event();
		expect(await post(r.url, raw, signedOver(raw, 'body'))).toBe(401);
		expect(await post(r.url, raw, signedOver(raw, 'timestamp'))).toBe(200);
	});

	it("with the node's Signature Covers Timestamp turned off, accepts a service that signs the body alone", async () => {
		const r = await listen(
			1.2,
			{ authentication: 'hmacSha256', signatureCoversTimestamp: false },
			{ secret: KEY },
		);
		const raw = event();
		expect(await post(r.url, raw, signedOver(raw, 'body'))).toBe(200);
	});

	it("the credential's Signature Covers Timestamp on still requires it: the node's off never weakens the credential", async () => {
		const r = await listen(
			1.2,
			{ authentication: 'hmacSha256', signatureCoversTimestamp: false },
			{ secret: KEY, signatureCoversTimestamp: true },
		);
		const raw = event();
		expect(await post(r.url, raw, signedOver(raw, 'body'))).toBe(401);
		expect(await post(r.url, raw, signedOver(raw, 'timestamp'))).toBe(200);
	});

	it('fails visibly when the credential has no Timestamp Header to cover, saying how to fix it', async () => {
		const r = await listen(
			1.2,
			{ authentication: 'hmacSha256' },
			{ secret: KEY, timestampHeader: '' },
		);
		const raw = event();
		expect(await post(r.url, raw, { 'x-backlog-signature': digest(raw) })).toBe(500);
		expect(String((r.calls[0].error as Error).message)).toMatch(
			/Signature Covers Timestamp needs a Timestamp Header/,
		);
	});
});

describe('a saved trigger keeps the defaults of its version', () => {
	it.each([1, 1.1])(
		'version %s with its defaults (Authentication None) starts the workflow for an unsigned request, as before',
		async (typeVersion) => {
			expect(resolved(typeVersion, {}).authentication).toBe('none');
			const r = await listen(typeVersion, {});
			expect(await post(r.url, event())).toBe(200);
			expect(r.executions()).toHaveLength(1);
		},
	);

	it('version 1 with HMAC in its parameters checks the body alone by default, as before (timestamp not covered)', async () => {
		expect(resolved(1, { authentication: 'hmacSha256' }).signatureCoversTimestamp).toBe(false);
		const r = await listen(1, { authentication: 'hmacSha256', secret: KEY });
		const raw = event();
		expect(await post(r.url, raw, signedOver(raw, 'body'))).toBe(200);
		// And a captured body and signature with a fresh timestamp still starts it: the weakness 1.2 removes.
		const captured = capturedLongAgo();
		expect(
			await post(r.url, captured.raw, {
				'x-backlog-timestamp': seconds(),
				'x-backlog-signature': captured.signature,
			}),
		).toBe(200);
	});

	it('version 1.1 with a credential that leaves Signature Covers Timestamp unset checks the body alone, as before', async () => {
		const r = await listen(1.1, { authentication: 'hmacSha256' }, { secret: KEY });
		const raw = event();
		expect(await post(r.url, raw, signedOver(raw, 'body'))).toBe(200);
		expect(r.executions()).toHaveLength(1);
	});

	it('version 1.1 shows no node-level Signature Covers Timestamp while the secret is in the credential (the credential decides)', () => {
		const visible = description().properties.filter(
			(property) =>
				property.name === 'signatureCoversTimestamp' &&
				shown(property, 1.1, { authentication: 'hmacSha256' }),
		);
		expect(visible).toHaveLength(0);
		expect(
			resolved(1.1, { authentication: 'hmacSha256', secretSource: 'parameters' })
				.signatureCoversTimestamp,
		).toBe(false);
	});

	it("the credential's Signature Covers Timestamp keeps its default off (n8n stores a credential's default values as nothing, so a new default would change saved credentials)", () => {
		const field = new TaskBacklogWebhookApi().properties.find(
			(property) => property.name === 'signatureCoversTimestamp',
		);
		expect(field?.default).toBe(false);
		expect(field?.description).toMatch(/version 1\.2 and later also have it on the node/);
	});
});
