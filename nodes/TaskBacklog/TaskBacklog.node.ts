import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { description as commentDescription } from './actions/comment';
import { requestOptionsProperty, route } from './actions/router';
import { batchedOperations, description as taskDescription } from './actions/task';
import { searchTasks } from './methods/listSearch';

export class TaskBacklog implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Backlog',
		name: 'taskBacklog',
		icon: {
			light: 'file:../../icons/taskBacklog.svg',
			dark: 'file:../../icons/taskBacklog.dark.svg',
		},
		group: ['transform'],
		// 2: a condition of Query has Value Type Automatic by default (a number or boolean typed as text matches it as
		// stored), and Update no longer offers Keep Other Custom Fields (the other custom fields are always kept).
		// Workflows saved with version 1 keep both as before: String as the default (the text sent as typed), and
		// the option.
		// 3: Sync Backlog outputs the changes and a summary by default (Output), not a row per ticket with its task;
		// workflows saved with 1 or 2 keep every row unless the user picks another Output.
		version: [1, 2, 3],
		defaultVersion: 3,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Create, update, close and find tasks and comments in the Task Backlog Service',
		defaults: { name: 'Task Backlog' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'taskBacklogApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Task', value: 'task' },
					{ name: 'Comment', value: 'comment' },
				],
				default: 'task',
			},
			...taskDescription,
			...commentDescription,
			requestOptionsProperty(batchedOperations),
		],
	};

	methods = { listSearch: { searchTasks } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route.call(this);
	}
}
