import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { invalidParameter, readBoolean } from '../../../shared/parameters';

/** Page size asked of list endpoints; the server may clamp it, paging copes. */
export const PAGE_SIZE = 100;

/** undefined = every result (Return All). */
export function maxResults(ctx: IExecuteFunctions, itemIndex: number): number | undefined {
	if (
		readBoolean(
			ctx,
			itemIndex,
			'Return All',
			ctx.getNodeParameter('returnAll', itemIndex, false),
			false,
		)
	)
		return undefined;
	const limit = Number(ctx.getNodeParameter('limit', itemIndex, 50));
	if (!Number.isInteger(limit) || limit < 1)
		throw invalidParameter(ctx, itemIndex, 'Limit', 'must be a whole number of at least 1');
	return limit;
}

export function checkExpand(
	ctx: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	allowed: string[],
): string[] {
	const list = Array.isArray(value) ? value : String(value ?? '').split(',');
	const expand = list.map((entry) => String(entry).trim()).filter((entry) => entry !== '');
	const unknown = expand.filter((entry) => !allowed.includes(entry));
	if (unknown.length > 0) {
		throw invalidParameter(
			ctx,
			itemIndex,
			'Expand',
			`has unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`,
		);
	}
	return expand;
}

export function expandQuery(expand: string[]): IDataObject {
	return expand.length > 0 ? { expand } : {};
}

/** The short shape of a task: what a workflow usually needs next. */
export function simplifyTask(task: IDataObject): IDataObject {
	const fields = (task.fields ?? {}) as IDataObject;
	return {
		uid: task.uid,
		title: fields.title,
		url: fields.url,
		status: task.status,
		assignee_uid: task.assignee_uid,
		due_at: task.due_at,
		updated_at: task.updated_at,
		fields,
	};
}

/** Simplify keeps what the user asked to expand. */
export function pick(task: IDataObject, keys: string[]): IDataObject {
	return Object.fromEntries(keys.filter((key) => key in task).map((key) => [key, task[key]]));
}
