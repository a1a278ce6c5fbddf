import type { Icon, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The secret the Task Backlog Service signs (or authenticates) its webhooks with, and the headers it uses.
 * Kept in a credential so that it is stored encrypted and never appears in the workflow JSON; the Task Backlog
 * Trigger reads it when "Secret Source" is "Credential". Nothing is sent anywhere with it.
 */
export class TaskBacklogWebhookApi implements ICredentialType {
	name = 'taskBacklogWebhookApi';

	displayName = 'Task Backlog Webhook API';

	icon: Icon = { light: 'file:../icons/taskBacklog.svg', dark: 'file:../icons/taskBacklog.dark.svg' };

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
		{
			displayName: 'Shared Secret Header',
			name: 'headerName',
			type: 'string',
			default: 'x-backlog-secret',
			description: 'Header whose value must equal the secret (Authentication: Shared Secret Header)',
		},
		{
			displayName: 'Signature Header',
			name: 'signatureHeader',
			type: 'string',
			default: 'x-backlog-signature',
			description:
				'Header carrying the hex HMAC-SHA256 digest (Authentication: HMAC-SHA256 Signature); several comma-separated signatures are accepted',
		},
		{
			displayName: 'Signature Prefix',
			name: 'signaturePrefix',
			type: 'string',
			default: 'sha256=',
			description: 'Text before the digest in the signature header. Leave empty if the header holds the digest only.',
		},
		{
			displayName: 'Timestamp Header',
			name: 'timestampHeader',
			type: 'string',
			default: 'x-backlog-timestamp',
			description:
				'Header carrying the send time in unix seconds; requests without it are rejected. Leave empty if the service sends none (replays are then only caught while remembered).',
		},
		{
			displayName: 'Signature Covers Timestamp',
			name: 'signatureCoversTimestamp',
			type: 'boolean',
			default: false,
			description:
				'Whether the HMAC is computed over the timestamp, a dot and the raw body, instead of the raw body alone. Only then can a replayed body not be given a fresh timestamp.',
		},
	];
}
