import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IHookFunctions,
	INodeCredentialTestResult,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { asBoolean, booleanSetting } from '../shared/parameters';

import { SIGNED, triggerProperties } from './description';
import { acceptedEvents, eventKind, eventsOf } from './events';
import { outputItems } from './output';
import { firstDelivery, rememberMs, replayKey } from './replay';
import { verificationSettings } from './settings';
import type { Headers, VerificationMethod, VerificationSettings } from './verify';
import { verifyRequest } from './verify';

/** What the service gets back for every request it may stop resending: quick and small. */
const RECEIVED = { received: true };

export class TaskBacklogTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Backlog Trigger',
		name: 'taskBacklogTrigger',
		icon: {
			light: 'file:../../icons/taskBacklog.svg',
			dark: 'file:../../icons/taskBacklog.dark.svg',
		},
		group: ['trigger'],
		// 1.1: the secret comes from the Task Backlog Webhook credential by default. Workflows saved with version 1
		// keep reading it from the node's own parameters, as they always did.
		// 1.2: Signature Covers Timestamp is a node parameter, on by default. Triggers saved with 1 or 1.1 keep it off
		// unless they set it (in their parameters or their credential), as before.
		version: [1, 1.1, 1.2],
		defaultVersion: 1.2,
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
		properties: triggerProperties(),
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
				// The same reading as the trigger's (booleanSetting): "true" is on, unset off, anything else refused.
				const coversTimestamp = asBoolean(data.signatureCoversTimestamp, false);
				if (coversTimestamp === undefined) {
					return {
						status: 'Error',
						message: `Signature Covers Timestamp is ${JSON.stringify(data.signatureCoversTimestamp)}: it must be true or false`,
					};
				}
				if (coversTimestamp && !String(data.timestampHeader ?? '').trim()) {
					return {
						status: 'Error',
						message: 'Signature Covers Timestamp needs a Timestamp Header',
					};
				}
				return {
					status: 'OK',
					message:
						'The secret is set. It is checked on every request the service sends to the trigger.',
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
				this.logger.info(
					`Task Backlog Trigger listens at ${url}; the service must be asked to send events there`,
				);
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
		const eventField = String(options.eventField ?? 'type').trim() || 'type';
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
			// An expression's "false" is off (`!== false` took it for on); neither true nor false fails visibly.
			const dropRepeats = booleanSetting(this.getNode(), options.dropRepeats, {
				label: 'Options › Drop Repeated Deliveries',
				fallback: true,
				description: 'Set Drop Repeated Deliveries under Options to true or false.',
			});
			if (verdict.signature && dropRepeats) {
				const scope = `${this.getWorkflow().id ?? ''}/${this.getNode().id}`;
				// The event's id, else its kind, task uid and stamps, else the signed bytes (see replay.ts).
				const { key, byEvent } = replayKey(
					eventsOf(this.getBodyData(), rawBody),
					eventField,
					verdict.signature.digest,
				);
				if (
					!firstDelivery(
						scope,
						this.getWorkflowStaticData('node'),
						key,
						now,
						rememberMs(settings, verdict.signature.sentAtMs, now, byEvent),
					)
				) {
					// Acknowledged so that the service stops resending it; the first copy already started the workflow.
					this.logger.info(
						'Task Backlog Trigger acknowledged a repeated delivery without starting the workflow',
					);
					return { webhookResponse: { ...RECEIVED, duplicate: true } };
				}
			}
		}

		const accepted = acceptedEvents(
			this.getNodeParameter('events', []),
			this.getNodeParameter('otherEvents', ''),
		);
		const events = eventsOf(this.getBodyData(), rawBody).filter((event) => {
			if (accepted.size === 0) return true;
			const kind = eventKind(event, eventField);
			return kind !== undefined && accepted.has(kind);
		});
		// Acknowledged with 200 so the service does not resend it, but no execution starts.
		if (events.length === 0) return { webhookResponse: { ...RECEIVED, ignored: true } };

		// An expression's text "false" is off (Boolean("false") was on); neither true nor false fails visibly.
		const includeHeaders = booleanSetting(this.getNode(), options.includeHeaders, {
			label: 'Options › Include Headers',
			fallback: false,
			description: 'Set Include Headers under Options to true or false.',
		});
		const items = outputItems(this, events, headers, settings, includeHeaders);
		return { webhookResponse: RECEIVED, workflowData: [items] };
	}
}
