import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	409: 'Conflict',
	422: 'Unprocessable Entity',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
};

function describeDetail(detail: unknown): string | undefined {
	if (typeof detail === 'string') return detail;
	if (!Array.isArray(detail)) return undefined;
	const parts = detail.map((entry) => {
		if (typeof entry === 'string') return entry;
		const { loc, msg, message } = (entry ?? {}) as { loc?: unknown; msg?: unknown; message?: unknown };
		const text = typeof msg === 'string' ? msg : typeof message === 'string' ? message : JSON.stringify(entry);
		return Array.isArray(loc) && loc.length > 0 ? `${loc.join('.')}: ${text}` : text;
	});
	return parts.join('; ');
}

/** The server's own message, from whichever body shape it sent (the spec does not fix one). */
export function serverMessage(body: unknown): string | undefined {
	if (typeof body === 'string') return body.trim().slice(0, 500) || undefined;
	if (!body || typeof body !== 'object') return undefined;
	const record = body as Record<string, unknown>;
	if (typeof record.message === 'string') return record.message;
	const detail = describeDetail(record.detail);
	if (detail) return detail;
	if (typeof record.error === 'string') return record.error;
	if (record.error && typeof record.error === 'object') return serverMessage(record.error);
	if (Array.isArray(record.errors)) return describeDetail(record.errors);
	return undefined;
}

function fixFor(status: number, path: string, attempts: number): string {
	if (status === 401)
		return 'The API token was rejected. Open the Task Backlog API credential and check the token; tokens are created under Settings > Developers, and a revoked token stops working at once.';
	if (status === 403)
		return 'The token is valid but may not do this. Check the token, the Account and the Acting User UID in the credential.';
	if (status === 404)
		return `Nothing found at ${path}. Check the uid, and that the credential's Base URL ends in /api/v1.`;
	if (status === 409) return 'An object with this uid already exists. Use Create or Update to change it.';
	if (status === 422)
		return 'The service rejected the field named in the message. Correct that field in the node parameters (or in the input item).';
	if (status === 429)
		return `Still rate limited after ${attempts} attempts. Lower Requests per Minute in the credential, or run fewer workflows with this token at once.`;
	if (status >= 500)
		return `The service failed ${attempts} time(s) in a row. It may be down: check its status page, then run the workflow again (writes are idempotent, so nothing is duplicated).`;
	return 'Check the parameters named in the message.';
}

/** The parsed body of the response an error was made from (kept beside the error, whatever n8n version made it). */
const responseBodies = new WeakMap<Error, unknown>();

export function responseBody(error: unknown): unknown {
	return error instanceof Error ? responseBodies.get(error) : undefined;
}

export function apiError(
	node: INode,
	status: number,
	body: unknown,
	request: { method: string; path: string; attempts: number; itemIndex?: number },
): NodeApiError {
	const text = serverMessage(body);
	const statusText = STATUS_TEXT[status] ?? 'Error';
	const message = `${request.method} ${request.path} failed with ${status} ${statusText}${text ? `: ${text}` : ''}`;
	const response: JsonObject = { status, message: text ?? statusText };
	if (body && typeof body === 'object') response.body = body as JsonObject;
	const error = new NodeApiError(node, response, {
		message,
		description: fixFor(status, request.path, request.attempts),
		httpCode: String(status),
		itemIndex: request.itemIndex,
	});
	responseBodies.set(error, body);
	return error;
}

export function networkError(
	node: INode,
	code: string,
	request: { method: string; path: string; attempts: number; baseUrl: string; itemIndex?: number },
): NodeApiError {
	return new NodeApiError(
		node,
		{ message: code, code },
		{
			message: `${request.method} ${request.path} could not reach the service (${code}) after ${request.attempts} attempt(s)`,
			description: `Check that the credential's Base URL (${request.baseUrl}) is right and reachable from n8n.`,
			itemIndex: request.itemIndex,
		},
	);
}
