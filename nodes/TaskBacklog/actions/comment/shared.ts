import type { INodeProperties } from 'n8n-workflow';

export const COMMENT_EXPAND = ['task', 'author'];

export function commentUidProperty(): INodeProperties {
	return {
		displayName: 'Comment UID',
		name: 'commentUid',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
	};
}
