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
		...Object.values(webhookHeaderFields('credential')),
	];
}
