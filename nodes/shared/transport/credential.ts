// What the transport takes from the credential: its numbers, checked; its base URL, and whether the token may be sent
// there; the forms of the token to redact wherever it might surface.
import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { numberSetting } from '../parameters';

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
 * The token as the Authorization header carries it: without the spaces and line breaks around it (a pasted token
 * often ends in one, a token read from a file in a newline) and without characters a header cannot carry (control
 * characters, beyond Latin-1), which n8n's HTTP layer would drop anyway. The credential sends exactly this; everything
 * that stands for the token (its redaction, the rate limiter's key) is built from it.
 */
export function tokenAsSent(value: unknown): string {
	return String(value ?? '')
		.replace(/[^\t\x20-\x7e\x80-\xff]+/g, '')
		.trim();
}

const base64Forms = (bytes: Buffer): string[] => {
	const standard = bytes.toString('base64');
	const unpadded = standard.replace(/=+$/, '');
	return [standard, unpadded].flatMap((form) => [
		form,
		form.replace(/\+/g, '-').replace(/\//g, '_'),
	]);
};

/**
 * The token in base64, alone and inside a longer encoded text (a Basic header, an encoded echo of the request):
 * there the token's bytes fall at any of three offsets within the groups of three bytes base64 encodes together, and
 * for each the characters made of the token's bytes alone are fixed. At most two bytes at each end of the token,
 * encoded with their neighbours, stay visible.
 */
function base64TokenForms(token: string): string[] {
	const forms: string[] = [];
	for (const encoding of ['latin1', 'utf8'] as const) {
		const bytes = Buffer.from(token, encoding);
		forms.push(...base64Forms(bytes));
		for (let skip = 0; skip < 3; skip++) {
			const groups = Math.floor((bytes.length - skip) / 3);
			// Shorter runs of characters could stand for anything: only cores of 8 characters or more are replaced.
			if (groups >= 2) {
				const core = bytes.subarray(skip, skip + groups * 3).toString('base64');
				forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
			}
		}
	}
	return forms;
}

/** A text as JSON writes it inside a string: as JavaScript does, with \/ for / (PHP), non-ASCII as \uXXXX (Python). */
function jsonForms(text: string): string[] {
	const escaped = JSON.stringify(text).slice(1, -1);
	const ascii = (hex: (code: string) => string) =>
		[...escaped]
			.map((char) =>
				char.charCodeAt(0) > 0x7e
					? `\\u${hex(char.charCodeAt(0).toString(16).padStart(4, '0'))}`
					: char,
			)
			.join('');
	const forms = [escaped, ascii((code) => code), ascii((code) => code.toUpperCase())];
	return forms.flatMap((form) => [form, form.split('/').join('\\/')]);
}

/**
 * The forms in which a server may echo the token (tokenAsSent): as is (also after "Bearer "), URL-encoded (a query
 * string, a redirect's Location, a form body: %XX in either case, a space as %20 or +), URL-encoded twice, in base64
 * (base64TokenForms), and each of these as a JSON string writes it (a JSON text quoted inside another, a body
 * answered as text). Longest first, so that a form holding another is replaced whole.
 */
export function tokenForms(stored: string): string[] {
	const token = tokenAsSent(stored);
	if (token.length < 4) return [];
	const component = encodeURIComponent(token);
	const form = new URLSearchParams({ t: token }).toString().slice(2);
	const forms = new Set([token, component, encodeURI(token), form, encodeURIComponent(component)]);
	for (const encoded of [...forms])
		forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
	for (const encoded of base64TokenForms(token)) forms.add(encoded);
	for (const plain of [...forms]) for (const escaped of jsonForms(plain)) forms.add(escaped);
	// Quoted twice: a JSON text kept in a string of a JSON text (a logged request inside an error's detail).
	for (const once of [...forms]) forms.add(JSON.stringify(once).slice(1, -1));
	return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every form of the token (tokenForms) in a text with ***; `inJson` looks for one in a whole JSON text. */
export interface Redactor {
	(text: string): string;
	/**
	 * Whether some string of a value holds a form of the token, asked of the value's JSON text: there each form appears
	 * as JSON writes it, which these look for.
	 */
	inJson(json: string): boolean;
}

/** The texts of `texts` that hold none of the others: a text holding a form holds one of these. */
function shortestOf(texts: string[]): string[] {
	const kept: string[] = [];
	for (const text of [...new Set(texts)].sort((a, b) => a.length - b.length))
		if (!kept.some((shorter) => text.includes(shorter))) kept.push(text);
	return kept;
}

export function redactor(token: string): Redactor {
	const forms = tokenForms(token);
	// Most texts hold no form: looking for the few forms no other form contains answers that in one pass each.
	const needles = shortestOf(forms);
	const inJson = shortestOf(forms.map((form) => JSON.stringify(form).slice(1, -1)));
	const redact = (text: string) =>
		needles.some((needle) => text.includes(needle))
			? forms.reduce(
					(result, form) => (result.includes(form) ? result.split(form).join('***') : result),
					text,
				)
			: text;
	return Object.assign(redact, {
		inJson: (json: string) => inJson.some((needle) => json.includes(needle)),
	});
}

/** The authority of a URL (what follows the scheme's //, up to the path, query or fragment), or undefined. */
function authorityOf(url: string): { start: number; end: number } | undefined {
	const slashes = url.indexOf('//');
	if (slashes < 0) return undefined;
	const start = slashes + 2;
	let end = start;
	// A backslash ends the host as a slash does: WHATWG URL parsers read it so for http(s).
	while (end < url.length && !'/?#\\'.includes(url[end])) end++;
	return { start, end };
}

/** Whether a URL names a user or a password (user:pw@host): anything before an @ in its authority. */
export function hasUserInfo(url: string): boolean {
	const authority = authorityOf(url);
	return authority !== undefined && url.slice(authority.start, authority.end).includes('@');
}

/** The URL with whatever stands before the @ of its authority shown as ***, for messages. */
export function withoutUserInfo(url: string): string {
	const authority = authorityOf(url);
	if (!authority) {
		// Not a URL that can be read (no //): whatever stands before an @ may be a password.
		const at = url.lastIndexOf('@');
		return at < 0 ? url : `***${url.slice(at)}`;
	}
	const at = url.lastIndexOf('@', authority.end - 1);
	return at < authority.start ? url : `${url.slice(0, authority.start)}***${url.slice(at)}`;
}

/**
 * A Base URL with a user or password is refused: n8n's HTTP layer would send them as Basic authentication in place
 * of the token, and every message naming the Base URL would show the password. The message never shows them.
 */
export function userInfoError(node: INode, baseUrl: string): NodeOperationError {
	return new NodeOperationError(
		node,
		`The Task Backlog API credential's Base URL holds a user name or password (${withoutUserInfo(baseUrl)})`,
		{
			description:
				'Remove the user name and password (the part before @) from the Base URL, e.g. https://api.example.com/api/v1: the service is called with the API Token alone.',
		},
	);
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
