import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IHookFunctions,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { WEBHOOK_CREDENTIAL_TYPE } from '../shared/credentialTypes';

import { acceptedEvents, eventKind, eventsOf, KNOWN_EVENTS } from './events';
import { deliveryKey, firstDelivery } from './replay';
import type { Headers, VerificationMethod, VerificationSettings } from './verify';
import { verifyRequest } from './verify';

/** Headers never copied into the output by "Include Headers", besides the configured secret and signature headers. */
const PRIVATE_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/** How long a delivery is remembered when the request carries no usable timestamp window. */
const DEFAULT_REMEMBER_MS = 300_000;

const SIGNED = ['sharedSecret', 'hmacSha256'];

/** What the service gets back for every request it may stop resending: quick and small. */
const RECEIVED = { received: true };

const eventTitle = (kind: string) =>
	kind
		.split('.')
		.map((part) => part.charAt(0).toUpperCase() + part.slice(1))
		.join(' ');

/**
 * "Secret Source", defined once per node version: a new parameter's default also applies to workflows saved before
 * it existed, so version 1 defaults to where those workflows keep their secret (the node's parameters).
 */
function secretSourceProperty(
	defaultSource: 'credential' | 'parameters',
	versions: Array<number | { _cnd: { gte: number } }>,
	description: string,
): INodeProperties {
	return {
		displayName: 'Secret Source',
		name: 'secretSource',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Credential',
				value: 'credential',
				description: 'The secret and header names are kept in a Task Backlog Webhook credential (encrypted)',
			},
			{
				name: 'Node Parameters (Legacy)',
				value: 'parameters',
				description: 'The secret is a parameter of this node, stored in clear in the workflow',
			},
		],
		default: defaultSource,
		displayOptions: { show: { '@version': versions, authentication: SIGNED } },
		description,
	};
}

export class TaskBacklogTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Backlog Trigger',
		name: 'taskBacklogTrigger',
		icon: { light: 'file:../../icons/taskBacklog.svg', dark: 'file:../../icons/taskBacklog.dark.svg' },
		group: ['trigger'],
		// 1.1: the secret comes from the Task Backlog Webhook credential by default. Workflows saved with version 1
		// keep reading it from the node's own parameters, as they always did.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: '={{($parameter["events"] || []).join(", ") || "All events"}}',
		description: 'Starts the workflow when the Task Backlog Service sends an event to this webhook',
		defaults: { name: 'Task Backlog Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'taskBacklogWebhookApi',
				required: true,
				testedBy: 'webhookSecretTest',
				displayOptions: { show: { authentication: SIGNED, secretSource: ['credential'] } },
			},
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'webhook',
			},
		],
		eventTriggerDescription: 'Waiting for the Task Backlog Service to send an event',
		activationMessage:
			'Events sent to the Production URL now start this workflow. The service must have been asked to send them there.',
		properties: [
			{
				displayName:
					"The service's webhooks are experimental and it has no API to register them: ask the Task Backlog Service to send events to this node's Production URL (and to the Test URL while you test)",
				name: 'registrationNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				options: KNOWN_EVENTS.map((kind) => ({ name: eventTitle(kind), value: kind })),
				default: [],
				description:
					'Event kinds that start the workflow; other kinds are acknowledged and dropped. Leave empty (and Other Events empty) to accept every event.',
			},
			{
				displayName: 'Other Events',
				name: 'otherEvents',
				type: 'string',
				default: '',
				placeholder: 'e.g. task.archived, task.commented',
				description: 'Comma-separated event kinds not in the list above, for kinds the service adds later',
			},
			{
				displayName: 'Authentication',
				name: 'authentication',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'HMAC-SHA256 Signature',
						value: 'hmacSha256',
						description: 'The service signs the raw body (and optionally a timestamp) with a shared secret',
					},
					{
						name: 'None',
						value: 'none',
						description: 'Accept every request to the URL',
					},
					{
						name: 'Shared Secret Header',
						value: 'sharedSecret',
						description: 'The service sends a shared secret in a header',
					},
				],
				default: 'none',
				description:
					'How to check that a request comes from the service. A request that fails the check gets 401 and starts nothing.',
			},
			// One parameter, two definitions told apart by node version (see secretSourceProperty).
			secretSourceProperty('parameters', [1], 'Where the secret agreed with the service is kept. Prefer Credential.'),
			secretSourceProperty('credential', [{ _cnd: { gte: 1.1 } }], 'Where the secret agreed with the service is kept'),
			{
				displayName: 'Secret',
				name: 'secret',
				type: 'string',
				typeOptions: { password: true },
				default: '',
				required: true,
				displayOptions: { show: { authentication: SIGNED, secretSource: ['parameters'] } },
				description:
					'The secret agreed with the service. Stored in clear in the workflow: prefer Secret Source "Credential".',
			},
			{
				displayName: 'Header Name',
				name: 'headerName',
				type: 'string',
				default: 'x-backlog-secret',
				displayOptions: { show: { authentication: ['sharedSecret'], secretSource: ['parameters'] } },
				description: 'Header whose value must equal the secret',
			},
			{
				displayName: 'Signature Header',
				name: 'signatureHeader',
				type: 'string',
				default: 'x-backlog-signature',
				displayOptions: { show: { authentication: ['hmacSha256'], secretSource: ['parameters'] } },
				description: 'Header carrying the hex HMAC-SHA256 digest; several comma-separated signatures are accepted',
			},
			{
				displayName: 'Signature Prefix',
				name: 'signaturePrefix',
				type: 'string',
				default: 'sha256=',
				displayOptions: { show: { authentication: ['hmacSha256'], secretSource: ['parameters'] } },
				description: 'Text before the digest in the signature header. Leave empty if the header holds the digest only.',
			},
			{
				displayName: 'Timestamp Header',
				name: 'timestampHeader',
				type: 'string',
				default: 'x-backlog-timestamp',
				displayOptions: { show: { authentication: ['hmacSha256'], secretSource: ['parameters'] } },
				description:
					'Header carrying the send time in unix seconds; requests without it are rejected. Leave empty if the service sends none (replays are then only caught while remembered).',
			},
			{
				displayName: 'Replay Window (Seconds)',
				name: 'replayWindowSeconds',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 300,
				displayOptions: { show: { authentication: ['hmacSha256'] } },
				description:
					'Requests whose timestamp is further than this from now are rejected, and a request already accepted is not accepted again within it. 0 turns the age check off (repeats are then remembered for 5 minutes).',
			},
			{
				displayName: 'Signature Covers Timestamp',
				name: 'signatureCoversTimestamp',
				type: 'boolean',
				default: false,
				displayOptions: { show: { authentication: ['hmacSha256'], secretSource: ['parameters'] } },
				description:
					'Whether the HMAC is computed over the timestamp, a dot and the raw body, instead of the raw body alone. Only then can a replayed body not be given a fresh timestamp.',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Event Type Field',
						name: 'eventField',
						type: 'string',
						default: 'type',
						placeholder: 'e.g. type or data.event',
						description:
							'Dot path of the field in the payload that names the event kind, used to filter on Events',
					},
					{
						displayName: 'Include Headers',
						name: 'includeHeaders',
						type: 'boolean',
						default: false,
						description:
							'Whether to output {headers, body} instead of the payload alone, e.g. to read the x-backlog-event header. The secret and signature headers, Authorization and Cookie are left out.',
					},
					{
						displayName: 'Drop Repeated Deliveries',
						name: 'dropRepeats',
						type: 'boolean',
						default: true,
						description:
							'Whether a signed request identical to one already accepted within the replay window is acknowledged (200) without starting the workflow again. Applies to HMAC-SHA256 Signature.',
					},
				],
			},
		],
	};

	methods = {
		credentialTest: {
			// The service has nothing to ask about a webhook secret: the test checks the credential is usable.
			async webhookSecretTest(
				this: ICredentialTestFunctions,
				credential: ICredentialsDecrypted,
			): Promise<INodeCredentialTestResult> {
				const data = credential.data ?? {};
				if (!String(data.secret ?? '')) return { status: 'Error', message: 'The Secret is empty' };
				if (data.signatureCoversTimestamp === true && !String(data.timestampHeader ?? '').trim()) {
					return { status: 'Error', message: 'Signature Covers Timestamp needs a Timestamp Header' };
				}
				return {
					status: 'OK',
					message: 'The secret is set. It is checked on every request the service sends to the trigger.',
				};
			},
		},
	};

	// The service has no API to register or remove a webhook (spec section 6), so there is nothing remote to
	// create: the lifecycle records which URL this activation serves, and logs it as the one to give the service.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const webhookData = this.getWorkflowStaticData('node');
				return webhookData.webhookUrl === this.getNodeWebhookUrl('default');
			},
			async create(this: IHookFunctions): Promise<boolean> {
				const webhookData = this.getWorkflowStaticData('node');
				const url = this.getNodeWebhookUrl('default');
				webhookData.webhookUrl = url;
				this.logger.info(`Task Backlog Trigger listens at ${url}; the service must be asked to send events there`);
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				const webhookData = this.getWorkflowStaticData('node');
				delete webhookData.webhookUrl;
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject();
		const headers = this.getHeaderData() as Headers;
		// n8n keeps the request's exact bytes in rawBody (1.x and 2.x both read them before parsing the JSON of a
		// version-1 webhook node), and the signature is over those bytes. Re-serialising the parsed body only
		// matches a sender that used compact JSON in the same key order, so it is a last resort for a host that
		// does not keep rawBody.
		const rawBody = Buffer.isBuffer(request.rawBody)
			? request.rawBody
			: Buffer.from(JSON.stringify(this.getBodyData() ?? {}), 'utf8');

		const method = this.getNodeParameter('authentication', 'none') as VerificationMethod;
		const options = this.getNodeParameter('options', {}) as IDataObject;
		let settings: VerificationSettings | undefined;
		if (method !== 'none') {
			settings = await verificationSettings(this, method);
			const now = Date.now();
			const verdict = verifyRequest(settings, headers, rawBody, now);
			if (!verdict.ok) {
				// Logged so that a misconfigured secret can be found; the request starts no execution.
				this.logger.warn(`Task Backlog Trigger rejected a request: ${verdict.reason}`);
				this.getResponseObject().status(401).json({ received: false, error: 'Unauthorized' });
				return { noWebhookResponse: true };
			}
			if (verdict.signature && options.dropRepeats !== false) {
				const scope = `${this.getWorkflow().id ?? ''}/${this.getNode().id}`;
				const key = deliveryKey([verdict.signature.digest]);
				if (!firstDelivery(scope, this.getWorkflowStaticData('node'), key, now, rememberMs(settings, verdict.signature.sentAtMs, now))) {
					// Acknowledged so that the service stops resending it; the first copy already started the workflow.
					this.logger.info('Task Backlog Trigger acknowledged a repeated delivery without starting the workflow');
					return { webhookResponse: { ...RECEIVED, duplicate: true } };
				}
			}
		}

		const accepted = acceptedEvents(this.getNodeParameter('events', []), this.getNodeParameter('otherEvents', ''));
		const eventField = String(options.eventField ?? 'type').trim() || 'type';
		const events = eventsOf(this.getBodyData(), rawBody).filter((event) => {
			if (accepted.size === 0) return true;
			const kind = eventKind(event, eventField);
			return kind !== undefined && accepted.has(kind);
		});
		// Acknowledged with 200 so the service does not resend it, but no execution starts.
		if (events.length === 0) return { webhookResponse: { ...RECEIVED, ignored: true } };

		const shownHeaders = options.includeHeaders ? publicHeaders(this, headers, settings) : undefined;
		const items: INodeExecutionData[] = events.map((event) => ({
			json: shownHeaders ? { headers: shownHeaders, body: event } : event,
		}));
		return { webhookResponse: RECEIVED, workflowData: [items] };
	}
}

/**
 * How long an accepted delivery could be accepted again: until its timestamp leaves the replay window when the
 * signature covers the timestamp; otherwise (a fresh timestamp can be put on an old body) for one window.
 */
function rememberMs(settings: VerificationSettings, sentAtMs: number | undefined, nowMs: number): number {
	const windowMs = settings.replayWindowSeconds * 1000;
	if (windowMs <= 0) return DEFAULT_REMEMBER_MS;
	if (settings.signatureCoversTimestamp && sentAtMs !== undefined) return Math.max(sentAtMs + windowMs - nowMs, 0) + 1000;
	return windowMs;
}

/** The request headers without those that carry the secret, a signature or someone's session. */
function publicHeaders(ctx: IWebhookFunctions, headers: Headers, settings: VerificationSettings | undefined): IDataObject {
	const text = (name: string, fallback: string) => {
		const value = ctx.getNodeParameter(name, fallback);
		return typeof value === 'string' ? value : fallback;
	};
	const hidden = new Set(
		[
			...PRIVATE_HEADERS,
			'x-backlog-secret',
			'x-backlog-signature',
			text('headerName', 'x-backlog-secret'),
			text('signatureHeader', 'x-backlog-signature'),
			settings?.secretHeader ?? '',
			settings?.signatureHeader ?? '',
		]
			.map((name) => name.trim().toLowerCase())
			.filter((name) => name !== ''),
	);
	return Object.fromEntries(
		Object.entries(headers).filter(([name]) => !hidden.has(name.toLowerCase())),
	) as IDataObject;
}

async function verificationSettings(ctx: IWebhookFunctions, method: VerificationMethod): Promise<VerificationSettings> {
	const fromCredential = ctx.getNodeParameter('secretSource', 'parameters') === 'credential';
	const stored = fromCredential ? await ctx.getCredentials(WEBHOOK_CREDENTIAL_TYPE) : undefined;
	const read = (name: string, fallback: unknown): unknown =>
		stored ? (stored[name] ?? fallback) : ctx.getNodeParameter(name, fallback as string);
	const text = (name: string, fallback: string) => String(read(name, fallback) ?? '');
	const settings: VerificationSettings = {
		method,
		secret: text('secret', ''),
		secretHeader: text('headerName', 'x-backlog-secret').trim() || 'x-backlog-secret',
		signatureHeader: text('signatureHeader', 'x-backlog-signature').trim() || 'x-backlog-signature',
		signaturePrefix: text('signaturePrefix', 'sha256='),
		timestampHeader: method === 'hmacSha256' ? text('timestampHeader', 'x-backlog-timestamp').trim() : '',
		replayWindowSeconds: Number(ctx.getNodeParameter('replayWindowSeconds', 300)) || 0,
		signatureCoversTimestamp: read('signatureCoversTimestamp', false) === true,
	};
	// A configuration error is the workflow owner's to fix, so it fails the execution visibly instead of
	// turning every request away without a trace.
	if (!settings.secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			fromCredential ? "The Task Backlog Webhook credential's Secret is empty" : 'The Secret is empty',
			{
				description: fromCredential
					? 'Enter the secret agreed with the Task Backlog Service in the credential, or set Authentication to None.'
					: 'Enter the secret agreed with the Task Backlog Service, or set Authentication to None.',
			},
		);
	}
	if (method === 'hmacSha256' && settings.signatureCoversTimestamp && !settings.timestampHeader) {
		throw new NodeOperationError(ctx.getNode(), 'Signature Covers Timestamp needs a Timestamp Header', {
			description: 'Enter the header that carries the timestamp, or turn Signature Covers Timestamp off.',
		});
	}
	return settings;
}
