// What the transport takes from the credential: its numbers, checked; its base URL, and whether the token may be sent
// there; the forms of the token to redact wherever it might surface.
import type { INode } from 'n8n-workflow';

import { numberSetting } from '../numbers';

/**
 * A number of the credential: its default when the field is empty (a credential saved before the field existed),
 * otherwise a finite number of at least `min`, or an error naming the field. Nothing is silently replaced: a limit of
 * 0 does not become 60, nor a negative window a millisecond.
 */
export function credentialNumber(
	node: INode,
	value: unknown,
	field: string,
	fallback: number,
	min: number,
	rule: string,
): number {
	return numberSetting(node, value, {
		label: `The Task Backlog API credential's ${field}`,
		fallback,
		valid: (number) => Number.isFinite(number) && number >= min,
		rule,
		description: `Open the Task Backlog API credential and set ${field} (the service allows 60 requests per 60 seconds).`,
	});
}

/**
 * The forms in which a server may echo the token: as is, URL-encoded (a query string, a redirect's Location, a form
 * body: %XX in either case, a space as %20 or +), and URL-encoded twice. Longest first, so that a form holding another is
 * replaced whole.
 */
export function tokenForms(token: string): string[] {
	if (token.length < 4) return [];
	const component = encodeURIComponent(token);
	const form = new URLSearchParams({ t: token }).toString().slice(2);
	const forms = new Set([token, component, encodeURI(token), form, encodeURIComponent(component)]);
	for (const encoded of [...forms])
		forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
	return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every form of the token (tokenForms) in a text with ***. */
export function redactor(token: string): (text: string) => string {
	const forms = tokenForms(token);
	return (text) => forms.reduce((result, form) => result.split(form).join('***'), text);
}

export function normalizeBaseUrl(value: unknown): string | undefined {
	const url = String(value ?? '')
		.trim()
		.replace(/\/+$/, '');
	return /^https?:\/\/[^/\s]+/i.test(url) ? url : undefined;
}

/** Hosts whose traffic never leaves the machine: plain http:// to them exposes the token to nobody else. */
export function isLoopbackHost(hostname: string): boolean {
	const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
	return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Whether the token may be sent to this base URL: https://, or http:// to a loopback host, or http:// anywhere
 * when the credential's "Allow Insecure HTTP" is on.
 */
export function isSecureEnough(baseUrl: string, allowInsecureHttp: boolean): boolean {
	if (/^https:\/\//i.test(baseUrl) || allowInsecureHttp) return true;
	try {
		return isLoopbackHost(new URL(baseUrl).hostname);
	} catch {
		return false;
	}
}
