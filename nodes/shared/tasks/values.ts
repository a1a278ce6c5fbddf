import type { IDataObject } from 'n8n-workflow';

/** How a task's current values compare with what a write would set: what is ours, what is unchanged, what changed. */

function sameValue(actual: unknown, wanted: unknown): boolean {
	if (typeof actual === 'string' && typeof wanted === 'string') {
		if (actual === wanted) return true;
		const [a, b] = [Date.parse(actual), Date.parse(wanted)];
		return /^\d{4}-\d\d-\d\d/.test(wanted) && !Number.isNaN(a) && a === b;
	}
	if (actual && wanted && typeof actual === 'object' && typeof wanted === 'object') {
		if (Array.isArray(actual) !== Array.isArray(wanted)) return false;
		// Every key of either side, without building their union: a write's answers are compared by the thousand.
		for (const key of Object.keys(actual))
			if (!sameValue((actual as IDataObject)[key], (wanted as IDataObject)[key])) return false;
		for (const key of Object.keys(wanted))
			if (
				!Object.hasOwn(actual, key) &&
				!sameValue((actual as IDataObject)[key], (wanted as IDataObject)[key])
			)
				return false;
		return true;
	}
	return actual === wanted || (actual == null && wanted == null);
}

/**
 * Whether the task carries the values of the body, `fields` compared key by key. With `shownOnly`, a task property
 * the task does not show is left out: `assignee_email` and `status_global` are written but are not part of a task's
 * response (spec 2.2), so no answer can show them.
 */
function carries(task: IDataObject, body: IDataObject, shownOnly: boolean): boolean {
	for (const key of Object.keys(body)) {
		const wanted = body[key];
		if (key === 'fields' && wanted && typeof wanted === 'object') {
			const fields = (task.fields ?? {}) as IDataObject;
			for (const name of Object.keys(wanted))
				if (!sameValue(fields[name], (wanted as IDataObject)[name])) return false;
		} else if (!(shownOnly && !(key in task)) && !sameValue(task[key], wanted)) return false;
	}
	return true;
}

/** Nothing to write: the task holds every value of the body (a value it does not show cannot be known, so it is sent). */
export const hasValues = (task: IDataObject, body: IDataObject): boolean =>
	carries(task, body, false);

/**
 * Our own write: every value the task shows is the one we sent. Create decides with it that a task with its uid is its
 * own earlier attempt (a retry), not someone else's; a value the answer does not echo would otherwise make it so.
 */
export const showsOurValues = (task: IDataObject, body: IDataObject): boolean =>
	carries(task, body, true);

/** The custom fields of `wanted` whose value the task does not hold already: what a write has to change. */
export function changedFields(task: IDataObject | undefined, wanted: IDataObject): IDataObject {
	const current = (task?.fields ?? {}) as IDataObject;
	const changed: IDataObject = {};
	for (const [name, value] of Object.entries(wanted)) {
		if (!(name in current) || !sameValue(current[name], value)) changed[name] = value;
	}
	return changed;
}

/** Later values win; custom fields are merged key by key, as applying the writes one after the other would. */
export function mergeBodies(earlier: IDataObject, later: IDataObject): IDataObject {
	const merged: IDataObject = { ...earlier, ...later };
	if (earlier.fields || later.fields) {
		merged.fields = {
			...((earlier.fields ?? {}) as IDataObject),
			...((later.fields ?? {}) as IDataObject),
		};
	}
	return merged;
}
