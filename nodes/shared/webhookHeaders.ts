import type { INodeProperties } from 'n8n-workflow';

// The headers the Task Backlog Service sends with its events, defined once: the Task Backlog Webhook API credential
// (credentials/TaskBacklogWebhookApi.credentials.ts) shows these fields, and the Task Backlog Trigger keeps them as
// its legacy parameters (Secret Source "Node Parameters (Legacy)") under the same names, so a workflow moves from one
// to the other by copying the values. The Secret field itself stays written out in the credential and in the node,
// where the registry's lint checks that it is a password field.

/** Header carrying the shared secret, when none is configured or the configured one is empty. */
export const DEFAULT_SECRET_HEADER = 'x-backlog-secret';

/** Header carrying the HMAC-SHA256 signature, when none is configured or the configured one is empty. */
export const DEFAULT_SIGNATURE_HEADER = 'x-backlog-signature';

/** Text before the hex digest in the signature header, when none is configured. */
export const DEFAULT_SIGNATURE_PREFIX = 'sha256=';

/** Header carrying the send time, when none is configured (an empty one means the requests are not dated). */
export const DEFAULT_TIMESTAMP_HEADER = 'x-backlog-timestamp';

/** Header naming the event kind; nothing is configured for it, the trigger's Include Headers option shows it. */
export const EVENT_HEADER = 'x-backlog-event';

/** The credential's header fields after the Secret, which are also the trigger's legacy parameters. */
export type WebhookHeaderField =
	| 'headerName'
	| 'signatureHeader'
	| 'signaturePrefix'
	| 'timestampHeader'
	| 'signatureCoversTimestamp';

/**
 * The fields as the credential shows them (`'credential'`, always shown), or as the trigger's legacy parameters
 * (`'parameters'`, shown only while Secret Source is "Node Parameters (Legacy)" and for the Authentication they
 * apply to). Built on each call, so that no two node or credential instances share a property object. Listed in the
 * credential's order.
 */
export function webhookHeaderFields(
	where: 'credential' | 'parameters',
): Record<WebhookHeaderField, INodeProperties> {
	const credential = where === 'credential';
	const shownFor = (authentication: string[]) =>
		credential
			? {}
			: { displayOptions: { show: { authentication, secretSource: ['parameters'] } } };
	return {
		headerName: {
			displayName: credential ? 'Shared Secret Header' : 'Header Name',
			name: 'headerName',
			type: 'string',
			default: DEFAULT_SECRET_HEADER,
			...shownFor(['sharedSecret']),
			// The credential serves both Authentication methods, so its descriptions say which one a header is for.
			description: credential
				? 'Header whose value must equal the secret (Authentication: Shared Secret Header)'
				: 'Header whose value must equal the secret',
		},
		signatureHeader: {
			displayName: 'Signature Header',
			name: 'signatureHeader',
			type: 'string',
			default: DEFAULT_SIGNATURE_HEADER,
			...shownFor(['hmacSha256']),
			description: credential
				? 'Header carrying the hex HMAC-SHA256 digest (Authentication: HMAC-SHA256 Signature); several comma-separated signatures are accepted'
				: 'Header carrying the hex HMAC-SHA256 digest; several comma-separated signatures are accepted',
		},
		signaturePrefix: {
			displayName: 'Signature Prefix',
			name: 'signaturePrefix',
			type: 'string',
			default: DEFAULT_SIGNATURE_PREFIX,
			...shownFor(['hmacSha256']),
			description:
				'Text before the digest in the signature header. Leave empty if the header holds the digest only.',
		},
		timestampHeader: {
			displayName: 'Timestamp Header',
			name: 'timestampHeader',
			type: 'string',
			default: DEFAULT_TIMESTAMP_HEADER,
			...shownFor(['hmacSha256']),
			description:
				'Header carrying the send time in unix seconds; requests without it are rejected. Leave empty if the service sends none (replays are then only caught while remembered).',
		},
		signatureCoversTimestamp: {
			displayName: 'Signature Covers Timestamp',
			name: 'signatureCoversTimestamp',
			type: 'boolean',
			default: false,
			...shownFor(['hmacSha256']),
			description:
				'Whether the HMAC is computed over the timestamp, a dot and the raw body, instead of the raw body alone. Only then can a replayed body not be given a fresh timestamp.',
		},
	};
}
