import { createHash, createHmac, timingSafeEqual } from 'crypto';

export type VerificationMethod = 'none' | 'sharedSecret' | 'hmacSha256';

export interface VerificationSettings {
	method: VerificationMethod;
	secret: string;
	/** Header carrying the shared secret (method sharedSecret). */
	secretHeader: string;
	/** Header carrying the HMAC (method hmacSha256). */
	signatureHeader: string;
	/** Text before the hex digest in the signature header, e.g. `sha256=`; may be empty. */
	signaturePrefix: string;
	/** Header carrying the send time in unix seconds; empty = the request is not dated. */
	timestampHeader: string;
	/** Largest accepted distance between the timestamp and now; 0 = no age check. */
	replayWindowSeconds: number;
	/** Whether the HMAC covers `${timestamp}.${rawBody}` rather than the body alone. */
	signatureCoversTimestamp: boolean;
}

export type Headers = Record<string, string | string[] | undefined>;

/**
 * `signature` (HMAC only): the digest the request was verified with, and the timestamp it was checked against;
 * the same pair again is the same delivery.
 */
export type Verdict =
	{ ok: true; signature?: { digest: string; sentAtMs?: number } } | { ok: false; reason: string };

const reject = (reason: string): Verdict => ({ ok: false, reason });

export function headerValue(headers: Headers, name: string): string | undefined {
	const value = headers[name.trim().toLowerCase()];
	const first = Array.isArray(value) ? value[0] : value;
	return typeof first === 'string' ? first : undefined;
}

/**
 * Constant-time string comparison. Hashing both sides first gives timingSafeEqual the equal-length buffers it
 * needs without revealing the expected length through an early return.
 */
export function safeEqual(received: string, expected: string): boolean {
	const a = createHash('sha256').update(received, 'utf8').digest();
	const b = createHash('sha256').update(expected, 'utf8').digest();
	return timingSafeEqual(a, b);
}

/** Unix seconds; milliseconds and ISO dates are read too, since the service's format is undocumented. */
export function parseTimestamp(value: string): number | undefined {
	const text = value.trim();
	if (/^\d+(\.\d+)?$/.test(text)) {
		const n = Number(text);
		return n > 1e12 ? n : n * 1000;
	}
	const date = Date.parse(text);
	return Number.isNaN(date) ? undefined : date;
}

export function hmacHex(secret: string, timestamp: string | undefined, rawBody: Buffer): string {
	const hmac = createHmac('sha256', secret);
	if (timestamp !== undefined) hmac.update(`${timestamp}.`, 'utf8');
	return hmac.update(rawBody).digest('hex');
}

/** Checks one request against the settings. Never throws for a bad request: the caller answers 401. */
export function verifyRequest(
	settings: VerificationSettings,
	headers: Headers,
	rawBody: Buffer,
	nowMs: number,
): Verdict {
	if (settings.method === 'none') return { ok: true };

	if (settings.method === 'sharedSecret') {
		const received = headerValue(headers, settings.secretHeader);
		if (received === undefined) return reject(`missing ${settings.secretHeader} header`);
		return safeEqual(received.trim(), settings.secret)
			? { ok: true }
			: reject('wrong shared secret');
	}

	let timestamp: string | undefined;
	let sentAtMs: number | undefined;
	if (settings.timestampHeader.trim()) {
		timestamp = headerValue(headers, settings.timestampHeader)?.trim();
		if (!timestamp) return reject(`missing ${settings.timestampHeader} header`);
		const sentAt = parseTimestamp(timestamp);
		if (sentAt === undefined) return reject(`unreadable ${settings.timestampHeader} header`);
		sentAtMs = sentAt;
		if (
			settings.replayWindowSeconds > 0 &&
			Math.abs(nowMs - sentAt) > settings.replayWindowSeconds * 1000
		) {
			return reject('timestamp outside the replay window');
		}
	}

	const header = headerValue(headers, settings.signatureHeader);
	if (!header?.trim()) return reject(`missing ${settings.signatureHeader} header`);
	const expected = hmacHex(
		settings.secret,
		settings.signatureCoversTimestamp ? timestamp : undefined,
		rawBody,
	);
	const prefix = settings.signaturePrefix.toLowerCase();
	// Several comma-separated signatures are accepted so the service can sign with an old and a new secret
	// while it rotates them.
	const matched = header
		.split(',')
		.map((part) => part.trim())
		.filter((part) => part !== '')
		.map((part) =>
			(prefix && part.toLowerCase().startsWith(prefix)
				? part.slice(prefix.length)
				: part
			).toLowerCase(),
		)
		.reduce((found, candidate) => safeEqual(candidate, expected) || found, false);
	return matched
		? { ok: true, signature: { digest: expected, sentAtMs } }
		: reject('signature does not match');
}
