import type { Icon, ICredentialType, INodeProperties } from 'n8n-workflow';

import { webhookHeaderFields } from '../nodes/shared/webhookHeaders';

/**
 * The secret the Task Backlog Service signs (or authenticates) its webhooks with, and the headers it uses.
 * Kept in a credential so that it is stored encrypted and never appears in the workflow JSON; the Task Backlog
 * Trigger reads it when "Secret Source" is "Credential". Nothing is sent anywhere with it.
 */
export class TaskBacklogWebhookApi implements ICredentialType {
	name = 'taskBacklogWebhookApi';

	displayName = 'Task Backlog Webhook API';

	icon: Icon = {
		light: 'file:../icons/taskBacklog.svg',
		dark: 'file:../icons/taskBacklog.dark.svg',
	};

	documentationUrl = 'https://github.com/task-backlog/n8n-nodes-task-backlog#webhook-credential';

	properties: INodeProperties[] = [
		{
			displayName: 'Secret',
			name: 'secret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'The secret agreed with the Task Backlog Service for its webhooks',
		},
		// The same fields as the trigger's legacy parameters, defined once in nodes/shared.
		...Object.values(headerFields()),
	];
}

/**
 * The shared header fields, with what Signature Covers Timestamp means for each trigger version. Its default stays
 * off: n8n stores a credential's fields only where they differ from the default, so a credential saved with it off
 * holds nothing for it, and a new default would turn it on under the triggers already using it.
 */
function headerFields() {
	const fields = webhookHeaderFields('credential');
	return {
		...fields,
		signatureCoversTimestamp: {
			...fields.signatureCoversTimestamp,
			description:
				'Whether the HMAC is computed over the timestamp, a dot and the raw body, instead of the raw body alone. Only then can a replayed body not be given a fresh timestamp. Task Backlog Triggers of version 1.2 and later also have it on the node, on by default: the signature must cover the timestamp when either is on.',
		},
	};
}
