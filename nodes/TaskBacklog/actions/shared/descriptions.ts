import type { IDataObject, INodeProperties } from 'n8n-workflow';

/**
 * An operation's properties, each shown only for its resource and operation: written once in each operation file. A
 * property's own conditions (only in Builder mode, say) are kept beside them.
 */
export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return properties.map((property) => ({
		...property,
		displayOptions: {
			...property.displayOptions,
			show: { resource: [resource], operation: [operation], ...property.displayOptions?.show },
		},
	}));
}

const UUID_REGEX = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** Pick a task by its UID, by the URL of the task, or from a searchable list. */
export function taskLocator(): INodeProperties {
	return {
		displayName: 'Task',
		name: 'task',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
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
						properties: {
							regex: `^\\s*${UUID_REGEX}\\s*$`,
							errorMessage: 'Not a task UID (a UUID)',
						},
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

/** An operation's Options collection when its only option is Expand. */
export function expandOptions(values: string[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [expandProperty(values)],
	};
}

export function returnAllAndLimit(): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 50,
			displayOptions: { show: { returnAll: [false] } },
			description: 'Max number of results to return',
		},
	];
}

export function simplifyProperty(): INodeProperties {
	return {
		displayName: 'Simplify',
		name: 'simplify',
		type: 'boolean',
		default: true,
		description: 'Whether to return a simplified version of the response instead of the raw data',
	};
}
