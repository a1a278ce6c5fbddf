import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { DEFAULT_SECRET_HEADER, DEFAULT_SIGNATURE_HEADER } from '../shared/webhookHeaders';

import type { Headers, VerificationSettings } from './verify';

/** Headers never copied into the output by "Include Headers", besides the configured secret and signature headers. */
const PRIVATE_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/** The request headers without those that carry the secret, a signature or someone's session. */
export function publicHeaders(
	ctx: IWebhookFunctions,
	headers: Headers,
	settings: VerificationSettings | undefined,
): IDataObject {
	const text = (name: string, fallback: string) => {
		const value = ctx.getNodeParameter(name, fallback);
		return typeof value === 'string' ? value : fallback;
	};
	const hidden = new Set(
		[
			...PRIVATE_HEADERS,
			DEFAULT_SECRET_HEADER,
			DEFAULT_SIGNATURE_HEADER,
			text('headerName', DEFAULT_SECRET_HEADER),
			text('signatureHeader', DEFAULT_SIGNATURE_HEADER),
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

/** One item per event: the payload alone, or `{headers, body}` when Include Headers is on. */
export function outputItems(
	ctx: IWebhookFunctions,
	events: IDataObject[],
	headers: Headers,
	settings: VerificationSettings | undefined,
	includeHeaders: boolean,
): INodeExecutionData[] {
	const shownHeaders = includeHeaders ? publicHeaders(ctx, headers, settings) : undefined;
	return events.map((event) => ({
		json: shownHeaders ? { headers: shownHeaders, body: event } : event,
	}));
}
