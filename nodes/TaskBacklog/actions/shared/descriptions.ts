import type { IDataObject, INodeProperties } from 'n8n-workflow';

export function showFor(resource: string, operation: string | string[]) {
	return { show: { resource: [resource], operation: Array.isArray(operation) ? operation : [operation] } };
}

const UUID_REGEX = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** Pick a task by its UID, by the URL of the task, or from a searchable list. */
export function taskLocator(operation: string | string[], resource = 'task'): INodeProperties {
	return {
		displayName: 'Task',
		name: 'task',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		displayOptions: showFor(resource, operation),
		description: 'The task to work on',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a task...',
				typeOptions: { searchListMethod: 'searchTasks', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
				validation: [
					{
						type: 'regex',
						properties: { regex: `^\\s*${UUID_REGEX}\\s*$`, errorMessage: 'Not a task UID (a UUID)' },
					},
				],
			},
			{
				displayName: 'By URL',
				name: 'url',
				type: 'string',
				placeholder: 'e.g. https://app.example.com/tasks/3c90c3cc-0d44-4b50-8888-8dd25736052a',
				extractValue: { type: 'regex', regex: `/tasks/(${UUID_REGEX})` },
				validation: [
					{
						type: 'regex',
						properties: { regex: `.*/tasks/${UUID_REGEX}.*`, errorMessage: 'Not a URL of a task' },
					},
				],
			},
		],
	};
}

export function expandProperty(values: string[], extra: IDataObject = {}): INodeProperties {
	return {
		displayName: 'Expand',
		name: 'expand',
		type: 'multiOptions',
		default: [],
		description: 'Related objects to include in each result',
		options: values.map((value) => ({ name: value[0].toUpperCase() + value.slice(1), value })),
		...extra,
	};
}

export function returnAllAndLimit(resource: string, operation: string): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			displayOptions: showFor(resource, operation),
			description: 'Whether to return all results or only up to a given limit',
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 50,
			displayOptions: { show: { resource: [resource], operation: [operation], returnAll: [false] } },
			description: 'Max number of results to return',
		},
	];
}

export function simplifyProperty(resource: string, operation: string | string[]): INodeProperties {
	return {
		displayName: 'Simplify',
		name: 'simplify',
		type: 'boolean',
		default: true,
		displayOptions: showFor(resource, operation),
		description: 'Whether to return a simplified version of the response instead of the raw data',
	};
}
