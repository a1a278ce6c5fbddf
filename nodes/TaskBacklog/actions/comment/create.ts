import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { BacklogClient } from '../../../shared/transport/client';
import { createdUids } from '../../../shared/identity';
import { forOperation, taskLocator } from '../shared/descriptions';
import { asNodeError, invalidParameter, requireUuid, taskUid } from '../../../shared/parameters';
import { readCommentBody } from './shared';
import { hasStatus } from '../../../shared/transport/errors';

export const description = forOperation('comment', 'create', [
	taskLocator(),
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		description: 'Text of the comment. Blank lines separate paragraphs.',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Author UID',
				name: 'author_uid',
				type: 'string',
				default: '',
				description: 'UID of the user shown as the author',
			},
			{
				displayName: 'Blocks (JSON)',
				name: 'blocks',
				type: 'json',
				default: '[]',
				description:
					'Rich-text blocks (spec 2.4). When empty, the text is sent as paragraph blocks.',
			},
			{
				displayName: 'UID',
				name: 'uid',
				type: 'string',
				default: '',
				description:
					'UID to give the comment. Leave empty for one derived from the execution, the node and the item, so that a retry within the same execution (Retry On Fail) finds the comment it already added instead of adding it twice.',
			},
		],
	},
]);

/**
 * Whether the comment found under our uid is our own earlier attempt (a retry after a lost answer): on the same task,
 * with the same text. The service may trim the text or not send task_uid back; anything else is another comment.
 */
function isOurComment(existing: IDataObject, task: string, text: string): boolean {
	if (existing.task_uid !== undefined && existing.task_uid !== null && existing.task_uid !== task)
		return false;
	return typeof existing.text === 'string' && existing.text.trim() === text.trim();
}

/**
 * The comment carries a client-chosen uid, the same when n8n runs the node again (Retry On Fail), so a retried POST or
 * a repeated run is recognised rather than doubled.
 */
export async function execute(this: IExecuteFunctions, client: BacklogClient, itemIndex: number) {
	const task = taskUid(this, itemIndex);
	const text = String(this.getNodeParameter('text', itemIndex, ''));
	if (!text.trim()) throw invalidParameter(this, itemIndex, 'Text', 'is empty');
	const additional = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const uid = additional.uid
		? requireUuid(this, itemIndex, 'UID', additional.uid)
		: createdUids(this, 'comment')(itemIndex);
	const body = { ...readCommentBody(this, itemIndex, text, additional), uid, task_uid: task };
	// A UID given by the user may be another comment's: a server that reads a POST over an existing uid as a replace
	// (the spec leaves it open, as for tasks) would overwrite that comment, so it is looked up first.
	if (additional.uid) {
		const existing = await readComment(this, client, task, uid, itemIndex);
		if (existing) return [ourCommentOrFail(this, existing, task, text, uid, itemIndex)];
	}
	try {
		return [
			await client.request<IDataObject>({
				method: 'POST',
				path: `/tasks/${task}/comments`,
				body,
				idempotent: true,
				itemIndex,
			}),
		];
	} catch (error) {
		if (!hasStatus(error, 409)) throw asNodeError(this, error, itemIndex);
	}
	// The uid is taken. A retry after a lost answer finds the comment it made: that one is a success. A comment
	// with other text (or on another task, where this task's path does not find it) is someone else's.
	const existing = await readComment(this, client, task, uid, itemIndex);
	return [ourCommentOrFail(this, existing, task, text, uid, itemIndex)];
}

/** The comment with this uid on this task, or undefined (404: none there). */
async function readComment(
	ctx: IExecuteFunctions,
	client: BacklogClient,
	task: string,
	uid: string,
	itemIndex: number,
): Promise<IDataObject | undefined> {
	try {
		return await client.request<IDataObject>({
			method: 'GET',
			path: `/tasks/${task}/comments/${uid}`,
			itemIndex,
		});
	} catch (error) {
		if (!hasStatus(error, 404)) throw asNodeError(ctx, error, itemIndex);
		return undefined;
	}
}

/** Our own earlier comment under this uid (a success), or the error that the uid is someone else's. */
function ourCommentOrFail(
	ctx: IExecuteFunctions,
	existing: IDataObject | undefined,
	task: string,
	text: string,
	uid: string,
	itemIndex: number,
): IDataObject {
	if (existing && isOurComment(existing, task, text)) return existing;
	throw new NodeOperationError(
		ctx.getNode(),
		`Item ${itemIndex}: a comment with the UID ${uid} already exists ${existing ? 'with other text' : 'on another task'}; nothing was written`,
		{
			itemIndex,
			description:
				'Leave Additional Fields › UID empty to add a new comment (a new uid is then chosen), or use Comment › Update to change the text of that comment.',
		},
	);
}
