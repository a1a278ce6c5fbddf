import type { INode, IWebhookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { booleanSetting } from '../shared/parameters';
import {
	DEFAULT_SECRET_HEADER,
	DEFAULT_SIGNATURE_HEADER,
	DEFAULT_SIGNATURE_PREFIX,
	DEFAULT_TIMESTAMP_HEADER,
} from '../shared/webhookHeaders';

import type { VerificationMethod, VerificationSettings } from './verify';

/** The webhook credential type's name, as credentials/TaskBacklogWebhookApi.credentials.ts declares it and saved workflows store it. */
const WEBHOOK_CREDENTIAL_TYPE = 'taskBacklogWebhookApi';

/**
 * Signature Covers Timestamp (the credential's, or the node's own) through the one boolean reader: an expression's
 * "true" is on (`=== true` took it for off), unset is the fallback (off before version 1.2), anything else an error
 * naming it.
 */
export function signatureCoversTimestamp(value: unknown, node: INode, fallback = false): boolean {
	return booleanSetting(node, value, {
		label: 'Signature Covers Timestamp',
		fallback,
		description: 'Set Signature Covers Timestamp to true or false.',
	});
}

/** From this node version on, Signature Covers Timestamp is a node parameter whatever the Secret Source, on by default. */
export const COVERS_TIMESTAMP_ON_NODE = 1.2;

/** How requests are verified: from the Task Backlog Webhook credential, or from the node's legacy parameters. */
export async function verificationSettings(
	ctx: IWebhookFunctions,
	method: VerificationMethod,
): Promise<VerificationSettings> {
	const fromCredential = ctx.getNodeParameter('secretSource', 'parameters') === 'credential';
	const stored = fromCredential ? await ctx.getCredentials(WEBHOOK_CREDENTIAL_TYPE) : undefined;
	const read = (name: string, fallback: unknown): unknown =>
		stored ? (stored[name] ?? fallback) : ctx.getNodeParameter(name, fallback as string);
	const text = (name: string, fallback: string) => String(read(name, fallback) ?? '');
	const settings: VerificationSettings = {
		method,
		secret: text('secret', ''),
		secretHeader: text('headerName', DEFAULT_SECRET_HEADER).trim() || DEFAULT_SECRET_HEADER,
		signatureHeader:
			text('signatureHeader', DEFAULT_SIGNATURE_HEADER).trim() || DEFAULT_SIGNATURE_HEADER,
		signaturePrefix: text('signaturePrefix', DEFAULT_SIGNATURE_PREFIX),
		timestampHeader:
			method === 'hmacSha256' ? text('timestampHeader', DEFAULT_TIMESTAMP_HEADER).trim() : '',
		replayWindowSeconds: Number(ctx.getNodeParameter('replayWindowSeconds', 300)) || 0,
		signatureCoversTimestamp: signatureCoversTimestamp(
			read('signatureCoversTimestamp', false),
			ctx.getNode(),
		),
	};
	// Version 1.2 on: the node's own parameter (on by default) also requires it; the credential's field can only add
	// to it, never turn it off. Versions 1 and 1.1 read the credential or their legacy parameter alone, as before.
	if (ctx.getNode().typeVersion >= COVERS_TIMESTAMP_ON_NODE && method === 'hmacSha256') {
		settings.signatureCoversTimestamp =
			signatureCoversTimestamp(
				ctx.getNodeParameter('signatureCoversTimestamp', true),
				ctx.getNode(),
				true,
			) || settings.signatureCoversTimestamp;
	}
	// A configuration error is the workflow owner's to fix, so it fails the execution visibly instead of
	// turning every request away without a trace.
	if (!settings.secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			fromCredential
				? "The Task Backlog Webhook credential's Secret is empty"
				: 'The Secret is empty',
			{
				description: fromCredential
					? 'Enter the secret agreed with the Task Backlog Service in the credential, or set Authentication to None.'
					: 'Enter the secret agreed with the Task Backlog Service, or set Authentication to None.',
			},
		);
	}
	if (method === 'hmacSha256' && settings.signatureCoversTimestamp && !settings.timestampHeader) {
		throw new NodeOperationError(
			ctx.getNode(),
			'Signature Covers Timestamp needs a Timestamp Header',
			{
				description:
					'Enter the header that carries the timestamp, or turn Signature Covers Timestamp off.',
			},
		);
	}
	return settings;
}
