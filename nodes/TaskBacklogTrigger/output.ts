import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { DEFAULT_SECRET_HEADER, DEFAULT_SIGNATURE_HEADER } from '../shared/webhookHeaders';

import type { Headers, VerificationSettings } from './verify';

/** Headers never copied into the output by "Include Headers", besides the configured secret and signature headers. */
const PRIVATE_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/**
 * Names that say their header carries a secret. Left out whatever the Authentication: with None, n8n gives the node
 * neither the Webhook credential nor the hidden header settings, so the names configured there cannot be read.
 */
const SECRET_NAME = /secret|signature|token|passw|auth|cookie|session|key|credential/i;

/** Where the trigger remembers the secret and signature header names it verified with (node static data). */
const REMEMBERED = 'secretHeaderNames';

/** At most this many names are remembered: the newest, so that renaming a header many times keeps the latest. */
const REMEMBERED_MAX = 20;

const normalized = (names: unknown[]) =>
	names
		.filter((name): name is string => typeof name === 'string')
		.map((name) => name.trim().toLowerCase())
		.filter((name) => name !== '');

/**
 * The secret and signature header names verification used, remembered with the workflow: a trigger switched to
 * Authentication None (whose credential n8n then hides from the node) still leaves them out.
 */
function rememberedNames(
	ctx: IWebhookFunctions,
	settings: VerificationSettings | undefined,
): string[] {
	const staticData = ctx.getWorkflowStaticData('node');
	const stored = staticData[REMEMBERED];
	const known = normalized(Array.isArray(stored) ? stored : []);
	if (!settings) return known;
	const current = normalized([settings.secretHeader, settings.signatureHeader]);
	if (current.every((name) => known.includes(name))) return known;
	// Written only when a name is new: n8n saves the static data after an execution that changed it.
	const names = [...known.filter((name) => !current.includes(name)), ...current].slice(
		-REMEMBERED_MAX,
	);
	staticData[REMEMBERED] = names;
	return names;
}

/**
 * The request headers without those that carry the secret, a signature or someone's session: `remembered` are the
 * names earlier verified requests used (rememberedNames).
 */
export function publicHeaders(
	ctx: IWebhookFunctions,
	headers: Headers,
	settings: VerificationSettings | undefined,
	remembered: string[] = [],
): IDataObject {
	const text = (name: string, fallback: string) => {
		const value = ctx.getNodeParameter(name, fallback);
		return typeof value === 'string' ? value : fallback;
	};
	const hidden = new Set(
		normalized([
			...PRIVATE_HEADERS,
			DEFAULT_SECRET_HEADER,
			DEFAULT_SIGNATURE_HEADER,
			text('headerName', DEFAULT_SECRET_HEADER),
			text('signatureHeader', DEFAULT_SIGNATURE_HEADER),
			settings?.secretHeader,
			settings?.signatureHeader,
			...remembered,
		]),
	);
	return Object.fromEntries(
		Object.entries(headers).filter(
			([name]) => !hidden.has(name.toLowerCase()) && !SECRET_NAME.test(name),
		),
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
	// Remembered on every verified request, Include Headers on or not: it may be turned on after a switch to None.
	const remembered = rememberedNames(ctx, settings);
	const shownHeaders = includeHeaders
		? publicHeaders(ctx, headers, settings, remembered)
		: undefined;
	return events.map((event) => ({
		json: shownHeaders ? { headers: shownHeaders, body: event } : event,
	}));
}
