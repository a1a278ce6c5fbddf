import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

export class TaskBacklogApi implements ICredentialType {
	name = 'taskBacklogApi';

	displayName = 'Task Backlog API';

	icon: Icon = { light: 'file:../icons/taskBacklog.svg', dark: 'file:../icons/taskBacklog.dark.svg' };

	documentationUrl = 'https://github.com/task-backlog/n8n-nodes-task-backlog#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com/api/v1',
			description:
				'Address of the API including the version prefix /api/v1. A trailing slash is ignored.',
		},
		{
			displayName: 'API Token',
			name: 'token',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Created in the web application under Settings > Developers (needs the super admin role)',
		},
		{
			displayName: 'Account',
			name: 'account',
			type: 'string',
			default: '',
			description: 'Optional. Sent as the service-account header.',
		},
		{
			displayName: 'Versioning',
			name: 'versioning',
			type: 'string',
			default: '',
			description: 'Optional. Sent as the service-versioning header.',
		},
		{
			displayName: 'Acting User UID',
			name: 'actingUserUid',
			type: 'string',
			default: '',
			placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
			description: 'Optional UUID of the user to act as. Sent as the service-user header.',
		},
		{
			displayName: 'Requests per Minute',
			name: 'requestsPerMinute',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 60,
			description:
				'The service allows 60 requests per minute. Every node using this base URL and token shares this budget inside one n8n process.',
		},
		{
			displayName: 'Rate Limit Window (Seconds)',
			name: 'rateLimitWindowSeconds',
			type: 'number',
			typeOptions: { minValue: 0.01, numberPrecision: 2 },
			default: 60,
			description:
				'Length of the window the requests-per-minute budget applies to. Keep 60 unless your account has another limit.',
		},
	];

	// The header value is an expression over the stored token, so the token never leaves the credential store
	// except inside the Authorization header of a request.
	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '={{"Bearer " + $credentials.token}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/accounts/me',
			method: 'GET',
			headers: { 'User-Agent': 'n8n-nodes-task-backlog/0.1.0' },
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'The service rejected the API token (401). Check the token in the credential, or create a new one under Settings > Developers.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'GET /accounts/me was not found (404). Check that the Base URL ends in the version prefix, e.g. https://api.example.com/api/v1.',
				},
			},
		],
	};
}
