import type { INodeProperties } from 'n8n-workflow';

import { EVENT_HEADER, webhookHeaderFields } from '../shared/webhookHeaders';

import { KNOWN_EVENTS } from './events';

/** The Authentication methods that check a secret. */
export const SIGNED = ['sharedSecret', 'hmacSha256'];

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
				description:
					'The secret and header names are kept in a Task Backlog Webhook credential (encrypted)',
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

/**
 * The Task Backlog Trigger's parameters. Built on each call, as the class field they were part of: n8n may add to a
 * loaded node's properties in place, so no two node instances share them.
 */
export function triggerProperties(): INodeProperties[] {
	const legacyHeaders = webhookHeaderFields('parameters');
	return [
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
			description:
				'Comma-separated event kinds not in the list above, for kinds the service adds later',
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
					description:
						'The service signs the raw body (and optionally a timestamp) with a shared secret',
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
		{
			// Shown in every version: a notice is not stored and changes nothing a saved trigger does.
			displayName:
				'Anyone who knows the Production URL can start this workflow, with any data: with Authentication None nothing checks that a request comes from the service. Choose Shared Secret Header or HMAC-SHA256 Signature if the service can send a secret or sign its events.',
			name: 'unauthenticatedNotice',
			type: 'notice',
			default: '',
			displayOptions: { show: { authentication: ['none'] } },
		},
		// One parameter, two definitions told apart by node version (see secretSourceProperty).
		secretSourceProperty(
			'parameters',
			[1],
			'Where the secret agreed with the service is kept. Prefer Credential.',
		),
		secretSourceProperty(
			'credential',
			[{ _cnd: { gte: 1.1 } }],
			'Where the secret agreed with the service is kept',
		),
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
		// Defined once with the credential's fields, so the legacy parameters and the credential cannot drift apart.
		legacyHeaders.headerName,
		legacyHeaders.signatureHeader,
		legacyHeaders.signaturePrefix,
		legacyHeaders.timestampHeader,
		{
			displayName: 'Replay Window (Seconds)',
			name: 'replayWindowSeconds',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 300,
			displayOptions: { show: { authentication: ['hmacSha256'] } },
			description:
				'Requests whose timestamp is further than this from now are rejected, and an event already accepted is not accepted again within it (see Drop Repeated Deliveries). 0 turns the age check off (repeats are then remembered for 5 minutes).',
		},
		// Versions 1 and 1.1: off by default, and a node parameter only with Secret Source "Node Parameters (Legacy)"
		// (with "Credential", the credential's field decides). A saved trigger stores only values that differ from the
		// default, so this default cannot change under it.
		{
			...legacyHeaders.signatureCoversTimestamp,
			displayOptions: {
				show: {
					'@version': [1, 1.1],
					authentication: ['hmacSha256'],
					secretSource: ['parameters'],
				},
			},
		},
		// Version 1.2 on: on by default, and a node parameter whatever the Secret Source (the credential's field keeps
		// its default off, which credentials saved before store as nothing: changing it would change them).
		{
			...legacyHeaders.signatureCoversTimestamp,
			default: true,
			displayOptions: {
				show: { '@version': [{ _cnd: { gte: 1.2 } }], authentication: ['hmacSha256'] },
			},
			description:
				"Whether the HMAC is computed over the timestamp, a dot and the raw body, instead of the raw body alone. Only then can a captured body and signature not be re-sent with a fresh timestamp once the replay window has passed. Also on when the Webhook credential's Signature Covers Timestamp is on.",
			hint: "The service must sign the timestamp too (HMAC of timestamp, '.', raw body, with the timestamp sent in the Timestamp Header). Its documentation does not say how it signs: ask it, and turn this off if it signs the body alone (every request would get 401).",
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
					description: `Whether to output {headers, body} instead of the payload alone, e.g. to read the ${EVENT_HEADER} header. The secret and signature headers, Authorization and Cookie are left out.`,
				},
				{
					displayName: 'Drop Repeated Deliveries',
					name: 'dropRepeats',
					type: 'boolean',
					default: true,
					description:
						'Whether a signed request repeating an event already accepted within the replay window is acknowledged (200) without starting the workflow again, even re-signed or re-serialized. The same event has the same event ID, else the same kind, task uid and task updated_at (and comment uid), else the same signed bytes. Applies to HMAC-SHA256 Signature.',
					hint: "A repeat is recognised by the top-level field id, event_id or eventId (unless it is the task's uid); without one, by the event kind and the task's uid, updated_at and internal_updated_at if sent (data.task, task, data or the payload itself), with the comment's uid if it is about one; without those, by the signed bytes",
				},
			],
		},
	];
}
