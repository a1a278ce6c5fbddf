import type { IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_EXTERNAL_ID_NAMESPACE, randomUid, uuidV5 } from '../../../shared/tasks/identity';

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
