import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import {
	invalidParameter,
	isExpression,
	requiredText,
	requireUuid,
} from '../../../shared/parameters';
import type { IdentityOptions } from '../../../shared/identity';
import { uidOfExternalId } from '../../../shared/identity';
import { readIdentityOptions } from './externalId';
import { mapItem, readAutoMapSettings, readInputData } from './inputData';
import { readFields, requireTitle } from './taskBody';

/** The operations that write a task from its input item: each reads it the same way, in both input modes. */
export type TaskInputOperation = 'create' | 'upsert' | 'syncBacklog';

/** One input item, read and checked. */
export interface TaskInput {
	/** The task uid: given, or derived from the external ID; undefined for a Create that leaves it to the node. */
	uid?: string;
	/** The caller's ticket id, also stored in `fields` under the External ID Field. */
	externalId?: string;
	/** Title, URL, custom fields and the external ID. */
	fields: IDataObject;
}

/**
 * Define Below: the identity of one item. Create: an optional UID (a literal empty one means "derive it"; an
 * expression that resolves to nothing is an error, never a silent fallback). Create or Update: a UID or an External
 * ID. Sync Backlog: an External ID. Every value is checked before it is used.
 */
function definedIdentity(
	ctx: IExecuteFunctions,
	operation: TaskInputOperation,
	itemIndex: number,
	syncOptions?: IdentityOptions,
): { uid?: string; externalId?: string; options?: IdentityOptions } {
	if (operation === 'create') {
		const additional = ctx.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
		const given =
			isExpression(ctx.getNode(), ['additionalFields', 'uid']) ||
			(additional.uid !== undefined && additional.uid !== '');
		return { uid: given ? requireUuid(ctx, itemIndex, 'UID', additional.uid) : undefined };
	}
	if (operation === 'upsert' && ctx.getNodeParameter('identifyBy', itemIndex) === 'uid') {
		return { uid: requireUuid(ctx, itemIndex, 'UID', ctx.getNodeParameter('uid', itemIndex)) };
	}
	const externalId = requiredText(
		ctx,
		itemIndex,
		'External ID',
		ctx.getNodeParameter('externalId', itemIndex, ''),
	);
	const options =
		syncOptions ??
		readIdentityOptions(
			ctx,
			itemIndex,
			ctx.getNodeParameter('externalIdOptions', itemIndex, {}) as IDataObject,
		);
	return { uid: uidOfExternalId(externalId, options), externalId, options };
}

/**
 * The one reader of task input for Create, Create or Update and Sync Backlog, under Define Below and Map
 * Automatically alike. What each item must hold is decided here once: a title; for Create or Update an External ID
 * or a UID, for Sync Backlog an External ID; never a value that resolved to nothing. `syncOptions`: Sync Backlog keeps
 * External ID Field and UID Namespace in its Sync Options (read once), for both input modes.
 */
export function taskInputReader(
	ctx: IExecuteFunctions,
	operation: TaskInputOperation,
	syncOptions?: IDataObject,
): (itemIndex: number) => TaskInput {
	if (readInputData(ctx) === 'autoMap') {
		const settings = readAutoMapSettings(ctx, syncOptions);
		const items = ctx.getInputData();
		return (itemIndex) => {
			const item = mapItem(ctx, settings, itemIndex, items[itemIndex].json);
			const needsExternalId =
				operation === 'syncBacklog' || (operation === 'upsert' && item.uid === undefined);
			if (item.externalId === undefined && needsExternalId) {
				const why =
					operation === 'syncBacklog'
						? '; Sync Backlog knows each ticket by its external ID'
						: ', and the item has no "uid"; the task UID is derived from the external ID';
				throw invalidParameter(
					ctx,
					itemIndex,
					settings.externalIdKey,
					`is missing or empty${why}`,
					`Set External ID Key in Mapping Options to the key that holds the ticket ID (now "${settings.externalIdKey}").`,
				);
			}
			if (item.externalId !== undefined) item.fields[settings.externalIdField] = item.externalId;
			const derived =
				operation !== 'create' && item.externalId !== undefined
					? uidOfExternalId(item.externalId, settings)
					: undefined;
			return { uid: item.uid ?? derived, externalId: item.externalId, fields: item.fields };
		};
	}
	const syncIdentity = syncOptions ? readIdentityOptions(ctx, 0, syncOptions) : undefined;
	return (itemIndex) => {
		const identity = definedIdentity(ctx, operation, itemIndex, syncIdentity);
		const title = requireTitle(ctx, itemIndex, ctx.getNodeParameter('title', itemIndex));
		const fields = readFields(ctx, itemIndex, {
			title,
			url: ctx.getNodeParameter('url', itemIndex, ''),
		});
		if (identity.externalId !== undefined)
			fields[identity.options!.externalIdField] = identity.externalId;
		return { uid: identity.uid, externalId: identity.externalId, fields };
	};
}
