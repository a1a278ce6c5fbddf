import type { IDataObject } from 'n8n-workflow';
import { jsonParse } from 'n8n-workflow';

/** Kinds the service is known to send or to have sent; its webhooks are experimental, so others may come. */
export const KNOWN_EVENTS = [
	'task.assigned',
	'task.completed',
	'task.created',
	'task.paused',
	'task.reopened',
	'task.started',
	'task.unassigned',
	'task.updated',
];

/** Reads `a.b.c` from an object; a key containing dots is matched whole first. */
export function valueAtPath(source: unknown, path: string): unknown {
	const trimmed = path.trim();
	if (!trimmed || !source || typeof source !== 'object') return undefined;
	const record = source as IDataObject;
	if (trimmed in record) return record[trimmed];
	const dot = trimmed.indexOf('.');
	if (dot < 0) return undefined;
	return valueAtPath(record[trimmed.slice(0, dot)], trimmed.slice(dot + 1));
}

export function eventKind(event: unknown, path: string): string | undefined {
	const value = valueAtPath(event, path);
	return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** Event kinds from the multi-select and the free-text list; empty means every kind. */
export function acceptedEvents(selected: unknown, other: unknown): Set<string> {
	const chosen = Array.isArray(selected) ? selected.map(String) : [];
	const typed = String(other ?? '')
		.split(',')
		.map((kind) => kind.trim())
		.filter((kind) => kind !== '');
	return new Set([...chosen, ...typed]);
}

/**
 * The events carried by a request. n8n parses JSON bodies only when the content type says so; a JSON body sent
 * with another type arrives as text or not at all, so the raw bytes are parsed as a fallback.
 */
export function eventsOf(body: unknown, rawBody: Buffer | undefined): IDataObject[] {
	let payload: unknown = body;
	const empty =
		payload === undefined ||
		payload === null ||
		payload === '' ||
		(typeof payload === 'object' && !Array.isArray(payload) && Object.keys(payload).length === 0);
	if (empty && rawBody?.length) payload = rawBody.toString('utf8');
	if (typeof payload === 'string') {
		const text = payload.trim();
		payload = text ? jsonParse<unknown>(text, { fallbackValue: { body: payload } }) : {};
	}
	// One event per request is what the service sent so far; an array is taken as a batch of events.
	const list = Array.isArray(payload) ? payload : [payload ?? {}];
	return list.map((entry) =>
		entry && typeof entry === 'object' && !Array.isArray(entry)
			? (entry as IDataObject)
			: { body: entry as IDataObject },
	);
}
