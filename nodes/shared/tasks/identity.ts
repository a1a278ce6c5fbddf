import { createHash, randomUUID } from 'crypto';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Namespace of this package for uids derived from external ids (UUID v5 of "n8n-nodes-task-backlog" in the RFC's URL namespace). */
export const DEFAULT_EXTERNAL_ID_NAMESPACE = '7d8ee0ed-52e1-5928-a4f8-770e52ff3d2f';

/** Custom field of the task that stores the caller's own ticket id (spec section 1, rule 2), unless configured. */
export const DEFAULT_EXTERNAL_ID_FIELD = 'ticket_id';

/** Where the external ID is stored and the namespace its uid is derived in (External ID Options, Sync Options). */
export interface IdentityOptions {
	externalIdField: string;
	namespace: string;
}

export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_PATTERN.test(value);
}

export function randomUid(): string {
	return randomUUID();
}

/** The 16 bytes of each namespace met, parsed once: a sync derives thousands of uids in the same namespace. */
const namespaceBytes = new Map<string, Buffer>();

function bytesOfNamespace(namespace: string): Buffer {
	let bytes = namespaceBytes.get(namespace);
	if (bytes === undefined) {
		if (!isUuid(namespace)) throw new Error(`Namespace "${namespace}" is not a UUID`);
		bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
		// Namespaces come from node parameters: few per process, but an expression could make one per item.
		if (namespaceBytes.size >= 64) namespaceBytes.clear();
		namespaceBytes.set(namespace, bytes);
	}
	return bytes;
}

/**
 * UUID version 5 (RFC 9562, section 5.5): SHA-1 of the namespace's 16 bytes followed by the name's UTF-8 bytes,
 * with the version and variant bits set. The same external id always gives the same task uid.
 */
export function uuidV5(name: string, namespace: string): string {
	const bytes = createHash('sha1')
		.update(bytesOfNamespace(namespace))
		.update(name, 'utf8')
		.digest();
	bytes[6] = (bytes[6] & 0x0f) | 0x50;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	const hex = bytes.toString('hex', 0, 16);
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The task uid of a ticket: the same external ID always gives the same task (spec section 1, rule 1). */
export const uidOfExternalId = (externalId: string, options: IdentityOptions) =>
	uuidV5(externalId, options.namespace);
