import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

// A task's status and custom fields as the nodes show them: written by the Task Backlog node's Create, Update and
// Sync Backlog, and filtered on by its Get Many and by the Poll Trigger.

/** The expand values of a task (spec 2.6): Get, Get Many and Query add these relations when asked. */
export const TASK_EXPAND = ['comments', 'children', 'parent', 'assignee'];

/** The statuses of a task (spec 2.2). */
export const statusOptions: INodePropertyOptions[] = [
	{ name: 'To Do', value: 'TODO' },
	{ name: 'Started', value: 'STARTED' },
	{ name: 'Done', value: 'DONE' },
];

/** Rows of custom field name and value, for writing a task's fields or for filtering by them. */
export function customFieldRows(
	extra: Pick<INodeProperties, 'displayName' | 'name' | 'placeholder' | 'description'> &
		Partial<INodeProperties>,
): INodeProperties {
	return {
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		default: {},
		...extra,
		options: [
			{
				displayName: 'Field',
				name: 'field',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						placeholder: 'ticket_id',
					},
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
	} as INodeProperties;
}
