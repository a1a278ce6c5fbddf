import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { booleanSetting } from '../../../shared/booleans';
import { numberSetting } from '../../../shared/numbers';
import { sharedGateway } from '../../../shared/sharing/coalesce';
import type { TaskGateway } from '../../../shared/tasks/writeTasks';
import { directGateway } from '../../../shared/tasks/writeTasks';
import type { RetryPolicy } from '../../../shared/transport/client';
import { DEFAULT_RETRY_POLICY } from '../../../shared/transport/client';

export const DEFAULT_BATCH_SIZE = 100;

/** Request Options; Batching and Batch Size are shown for the task operations that write in batches. */
export const requestOptionsProperty = (batchedOperations: string[]): INodeProperties => ({
	displayName: 'Request Options',
	name: 'requestOptions',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Batch Size',
			name: 'batchSize',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 1000 },
			default: 100,
			description: 'How many tasks one batch request carries',
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
		{
			displayName: 'Batching',
			name: 'batching',
			type: 'boolean',
			default: true,
			description:
				'Whether to send the writes of many input items through /tasks/batch in groups instead of one request per item',
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
		{
			displayName: 'Max Attempts',
			name: 'maxAttempts',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 10 },
			default: 5,
			description:
				'Attempts per request, the first included. 429, 500, 502, 503, 504 and network errors are retried with exponential backoff; writes are idempotent, so a retry never duplicates a task.',
		},
		{
			displayName: 'Retry Delay (Ms)',
			name: 'retryDelayMs',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 2000,
			description:
				'First wait before a retry; it doubles with each attempt, up to 15 seconds. A Retry-After header from the service wins.',
		},
		{
			displayName: 'Share Requests Across Executions',
			name: 'shareRequests',
			type: 'boolean',
			default: true,
			description:
				"Whether this node's reads and batch writes may go in one request with those of other executions running at once in this n8n process on the same credential (many one-ticket webhook executions then cost a few requests instead of two each). Each execution still gets only its own results and errors. Turn off to send only this execution's own requests.",
			displayOptions: { show: { '/resource': ['task'], '/operation': batchedOperations } },
		},
	],
});

function options(ctx: IExecuteFunctions): IDataObject {
	return ctx.getNodeParameter('requestOptions', 0, {}) as IDataObject;
}

/**
 * A number of Request Options, read once (for item 0): its default when not set, otherwise the number it spells if
 * `valid` accepts it, or an error naming the option.
 */
function optionNumber(
	ctx: IExecuteFunctions,
	value: unknown,
	name: string,
	fallback: number,
	valid: (number: number) => boolean,
	rule: string,
): number {
	return numberSetting(ctx.getNode(), value, {
		label: `Item 0: Request Options › ${name}`,
		fallback,
		valid,
		rule,
		description: `Set ${name} under Request Options to ${rule} (the expression is read for the first item).`,
		itemIndex: 0,
	});
}

export function retryPolicy(ctx: IExecuteFunctions): RetryPolicy {
	const { maxAttempts, retryDelayMs } = options(ctx);
	return {
		maxAttempts: optionNumber(
			ctx,
			maxAttempts,
			'Max Attempts',
			DEFAULT_RETRY_POLICY.maxAttempts,
			(number) => Number.isInteger(number) && number >= 1,
			'a whole number of 1 or more',
		),
		baseDelayMs: optionNumber(
			ctx,
			retryDelayMs,
			'Retry Delay (Ms)',
			DEFAULT_RETRY_POLICY.baseDelayMs,
			(number) => Number.isFinite(number) && number >= 0,
			'a number of milliseconds, 0 or more',
		),
		maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs,
	};
}

/** 1 when batching is off: each write goes to /tasks/{uid}. */
export function batchSize(ctx: IExecuteFunctions): number {
	const { batching, batchSize: size } = options(ctx);
	if (!optionBoolean(ctx, batching, 'Batching', true)) return 1;
	return Number(size ?? DEFAULT_BATCH_SIZE);
}

/**
 * A yes/no of Request Options, read once (for item 0): its default when not set, true or false as given or as the text
 * an expression gives, anything else an error naming the option (booleanSetting).
 */
function optionBoolean(
	ctx: IExecuteFunctions,
	value: unknown,
	name: string,
	fallback: boolean,
): boolean {
	return booleanSetting(ctx.getNode(), value, {
		label: `Item 0: Request Options › ${name}`,
		fallback,
		description: `Set ${name} under Request Options to true or false (the expression is read for the first item).`,
		itemIndex: 0,
	});
}

/** How this node's task reads and writes are sent: shared with other executions at once (the default), or its own. */
export function taskGateway(ctx: IExecuteFunctions): TaskGateway {
	const share = optionBoolean(
		ctx,
		options(ctx).shareRequests,
		'Share Requests Across Executions',
		true,
	);
	return share ? sharedGateway : directGateway;
}
