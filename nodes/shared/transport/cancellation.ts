import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from './client';

/** Whether n8n has cancelled the owner's execution (only an execution has a cancel signal). */
export function isCancelled(owner: BacklogClient): boolean {
	const { ctx } = owner;
	return 'getExecutionCancelSignal' in ctx && ctx.getExecutionCancelSignal()?.aborted === true;
}

export function cancelled(owner: BacklogClient): Error {
	return new NodeOperationError(
		owner.ctx.getNode(),
		'The execution was cancelled before its requests were sent',
	);
}
