import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { IdentityOptions } from '../../../shared/identity';
import { DEFAULT_EXTERNAL_ID_FIELD, DEFAULT_EXTERNAL_ID_NAMESPACE } from '../../../shared/identity';
import { requireFieldName, requireUuid } from '../../../shared/parameters';

/** Where the external id is kept on the task, and the namespace its uid is derived in. */
export const externalIdOptions: INodeProperties[] = [
	{
		displayName: 'External ID Field',
		name: 'externalIdField',
		type: 'string',
		default: DEFAULT_EXTERNAL_ID_FIELD,
		description: 'Custom field of the task that stores the external ID',
	},
	{
		displayName: 'UID Namespace',
		name: 'namespace',
		type: 'string',
		default: DEFAULT_EXTERNAL_ID_NAMESPACE,
		description:
			'UUID namespace the task UID is derived in: the same external ID gives the same task within a namespace, another task in another. Two systems whose ticket IDs may coincide (1042 in both) need a namespace each, any UUID kept the same on every run, set on the system that has no tasks yet (a new namespace gives every existing ticket a new task). Under a shared namespace, Sync Backlog reports a ticket whose task holds another Source Value and leaves it alone; Create or Update writes the task whatever its source, keeping its other custom fields (the source too).',
	},
];

/**
 * Under External ID (Create or Update, Sync Backlog): a mapped key that an input item does not have resolves to
 * nothing, which the node refuses for that item.
 */
export const EXTERNAL_ID_HINT =
	'Mapped with an expression such as {{ $json.id }}? The key must be spelled as in every input item (e.g. "id", not "ID"): an item without it gives an empty ID, and that item fails.';

/** "Identify by UID or by External ID" (spec section 1, rules 1 and 2). */
export function externalIdProperties(): INodeProperties[] {
	return [
		{
			displayName: 'Identify Task By',
			name: 'identifyBy',
			type: 'options',
			default: 'externalId',
			options: [
				{
					name: 'External ID',
					value: 'externalId',
					description:
						'Your own ticket ID; the task UID is derived from it, so nothing needs storing',
				},
				{ name: 'UID', value: 'uid', description: 'The task UID itself' },
			],
		},
		{
			displayName: 'External ID',
			name: 'externalId',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. 1042',
			displayOptions: { show: { identifyBy: ['externalId'] } },
			description: 'ID of the ticket in your system. The same ID always gives the same task.',
			hint: EXTERNAL_ID_HINT,
		},
		{
			displayName: 'UID',
			name: 'uid',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
			displayOptions: { show: { identifyBy: ['uid'] } },
		},
		{
			displayName: 'External ID Options',
			name: 'externalIdOptions',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show: { identifyBy: ['externalId'] } },
			options: externalIdOptions,
		},
	];
}

/** External ID Options (or Sync Options) read and checked. */
export function readIdentityOptions(
	ctx: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
): IdentityOptions {
	return {
		externalIdField: requireFieldName(
			ctx,
			itemIndex,
			'External ID Field',
			options.externalIdField || DEFAULT_EXTERNAL_ID_FIELD,
		),
		namespace: requireUuid(
			ctx,
			itemIndex,
			'UID Namespace',
			options.namespace || DEFAULT_EXTERNAL_ID_NAMESPACE,
		),
	};
}
