import { hash, randomUUID } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

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

/** The namespace's bytes and a name's UTF-8 bytes (up to 1,000 characters; longer ones get their own buffer). */
const hashInput = Buffer.allocUnsafe(16 + 3000);

/** The namespace whose bytes hashInput starts with: a run derives its uids in one namespace, copied in once. */
let hashInputNamespace: string | undefined;

/**
 * UUID version 5 (RFC 9562, section 5.5): SHA-1 of the namespace's 16 bytes followed by the name's UTF-8 bytes,
 * with the version and variant bits set. The same external id always gives the same task uid.
 */
export function uuidV5(name: string, namespace: string): string {
	// Hashed in one call over one reused buffer: a hash object and a buffer per uid cost about half the time of
	// deriving 10,000 uids, which a sync spends before its first request. `room`: the namespace's 16 bytes and the
	// most the name can take as UTF-8 (3 bytes per UTF-16 unit).
	const room = 16 + name.length * 3;
	let input = hashInput;
	if (room > hashInput.length) {
		input = Buffer.allocUnsafe(room);
		bytesOfNamespace(namespace).copy(input, 0);
	} else if (namespace !== hashInputNamespace) {
		bytesOfNamespace(namespace).copy(hashInput, 0);
		hashInputNamespace = namespace;
	}
	const length = 16 + input.write(name, 16, 'utf8');
	const hex = hash('sha1', input.subarray(0, length), 'hex');
	// Version 5 in the 13th digit; the variant (binary 10) in the top bits of the 17th.
	const variant = '89ab'[parseInt(hex[16], 16) & 0x3];
	// Joined, not concatenated: join makes one flat string, where concatenation makes a rope of nine slices that every
	// later use (a Map key, toLowerCase, JSON) has to flatten first.
	return [
		hex.slice(0, 8),
		hex.slice(8, 12),
		`5${hex.slice(13, 16)}`,
		variant + hex.slice(17, 20),
		hex.slice(20, 32),
	].join('-');
}

/** The task uid of a ticket: the same external ID always gives the same task (spec section 1, rule 1). */
export const uidOfExternalId = (externalId: string, options: IdentityOptions) =>
	uuidV5(externalId, options.namespace);

/** UUID v5 of "n8n-nodes-task-backlog:create" in the package's namespace: keeps create uids apart from external-id ones. */
const CREATE_UID_NAMESPACE = uuidV5('n8n-nodes-task-backlog:create', DEFAULT_EXTERNAL_ID_NAMESPACE);

/**
 * The uids of what a Create without a UID makes (a task, or a comment): the same for a repeat of the same execution's
 * run of the node and item (n8n's Retry On Fail runs the node again with the same run index, and a retried request
 * carries the same uid), different for every other run: Loop Over Items runs the node once per batch, with run index
 * 0, 1, 2 ... Random only when n8n gives no execution id. The execution, the node and the run are read once; only the
 * item index varies.
 */
export function createdUids(
	ctx: IExecuteFunctions,
	kind: 'create' | 'comment',
): (itemIndex: number) => string {
	const executionId = ctx.getExecutionId?.();
	if (!executionId) return () => randomUid();
	const node = ctx.getNode();
	const runIndex = Number(ctx.getWorkflowDataProxy(0).$runIndex) || 0;
	const prefix = `${kind}:${executionId}:${node.id ?? node.name}:${runIndex}:`;
	return (itemIndex) => uuidV5(`${prefix}${itemIndex}`, CREATE_UID_NAMESPACE);
}
