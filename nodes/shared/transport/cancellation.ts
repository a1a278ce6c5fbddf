import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from './client';

/** n8n's cancel signal of the client's execution (only an execution has one). */
export function cancelSignal({ ctx }: BacklogClient): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal() : undefined;
}

/** Whether n8n has cancelled the owner's execution. */
export function isCancelled(owner: BacklogClient): boolean {
	return cancelSignal(owner)?.aborted === true;
}

export function cancelled(owner: BacklogClient): Error {
	return new NodeOperationError(
		owner.ctx.getNode(),
		'The execution was cancelled before its requests were sent',
	);
}
