import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../types';
import * as create from './create';
import * as get from './get';
import * as getAll from './getAll';
import * as update from './update';

export const operations = { create, get, getAll, update } satisfies Record<string, Operation>;

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['comment'] } },
		default: 'create',
		options: [
			{
				name: 'Create',
				value: 'create',
				action: 'Create a comment',
				description: 'Add a comment to a task',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get a comment',
				description: 'Get a comment of a task',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many comments',
				description: 'List the comments of a task',
			},
			{
				name: 'Update',
				value: 'update',
				action: 'Update a comment',
				description: 'Change the text of a comment',
			},
		],
	},
	...Object.values(operations).flatMap((operation) => operation.description),
];
