/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// HTTP plumbing: reading a request body, sending a JSON (or plain-text) answer, an error answer, the bearer token.
import type * as http from 'node:http';

import { MAX_BODY_BYTES, httpError, type HttpError } from './helpers';
import { PlainText, variedErrorBody } from './readings';
import type { Store } from './store';
import type { InProcessOutcome } from './types';

/** An answer as it goes on the wire: status, headers (lower-case names) and the body's text. */
export type Answer = Exclude<InProcessOutcome, string>;

/** A JSON (or plain-text) answer, as the HTTP server writes it and the in-process transport hands it back. */
export const answer = (
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): Answer => {
	const text = body instanceof PlainText;
	const raw = text ? body.text : JSON.stringify(body);
	const type = text ? 'text/plain; charset=utf-8' : 'application/json';
	const named: Record<string, string> = {
		'content-type': type,
		'content-length': String(Buffer.byteLength(raw)),
	};
	for (const [name, value] of Object.entries(headers)) named[name.toLowerCase()] = value;
	return { status, headers: named, body: raw };
};

export const write = (res: http.ServerResponse, a: Answer): void => {
	if (res.headersSent || res.destroyed) return;
	res.writeHead(a.status, a.headers);
	res.end(a.body);
};

export const send = (
	res: http.ServerResponse,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): void => write(res, answer(status, body, headers));

/** An error answer; reading errorBodies `varied` reshapes the simulator's own bodies (not scripted ones). */
export const errorAnswer = (store: Store, e: HttpError): Answer => {
	const body =
		store.R.errorBodies === 'varied' && !e.verbatim ? variedErrorBody(e.status, e.body) : e.body;
	return answer(e.status, body, e.headers);
};

/**
 * The request body as text. Past `limit` (SimulatorOptions.maxBodyBytes, a server's body limit) the body is read to
 * its end and answered 413, as a proxy in front of a service does; past MAX_BODY_BYTES the connection is cut.
 */
export const readBody = (req: http.IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> =>
	new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (c: Buffer) => {
			size += c.length;
			if (size > MAX_BODY_BYTES) {
				reject(httpError(413, 'Request body too large'));
				req.destroy();
			} else if (size <= limit) chunks.push(c);
		});
		req.on('end', () =>
			size > limit
				? reject(httpError(413, 'Request body too large'))
				: resolve(Buffer.concat(chunks).toString('utf8')),
		);
		req.on('error', reject);
	});

export const takeToken = (h: string | undefined): string | undefined => {
	const m = /^Bearer\s+(.+)$/i.exec(h ?? '');
	return m ? m[1].trim() : undefined;
};
