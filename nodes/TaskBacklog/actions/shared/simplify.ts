import type { IDataObject } from 'n8n-workflow';

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
