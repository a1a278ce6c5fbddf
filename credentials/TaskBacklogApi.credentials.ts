import type {
	IAuthenticate,
	Icon,
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import { tokenAsSent } from '../nodes/shared/transport/credential';
import { USER_AGENT } from '../nodes/shared/transport/client';

/**
 * Whether the credential test may send the token to the Base URL: https://, http:// to a loopback host, or
 * http:// anywhere once "Allow Insecure HTTP" is on (the same rule as the nodes' client, transport/client.ts).
 */
const SECURE_ENOUGH =
	'(/^https:\\/\\//i.test(String($credentials.baseUrl).trim()) || /^http:\\/\\/(localhost|127(\\.\\d{1,3}){3}|\\[::1\\])(:\\d+)?(\\/|$)/i.test(String($credentials.baseUrl).trim()) || $credentials.allowInsecureHttp === true)';

/**
 * Whether the Base URL names a user or a password (user:pw@host), as transport/credential.ts hasUserInfo reads it:
 * an @ between the // and the end of the host.
 */
const HAS_USER_INFO =
	'/^[^\\/?#\\\\]*\\/\\/[^\\/?#\\\\]*@/.test(String($credentials.baseUrl).trim())';

const redirectRule = (status: number) => ({
	type: 'responseCode' as const,
	properties: {
		value: status,
		message: `The Base URL answered with a redirect (${status}). The token is never sent to a redirect target: set the Base URL to the address the service really answers at, e.g. its https:// address ending in /api/v1.`,
	},
});

export class TaskBacklogApi implements ICredentialType {
	name = 'taskBacklogApi';

	displayName = 'Task Backlog API';

	icon: Icon = {
		light: 'file:../icons/taskBacklog.svg',
		dark: 'file:../icons/taskBacklog.dark.svg',
	};

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
			hint: 'Must end in /api/v1, e.g. https://api.example.com/api/v1: the address of the web application alone is not the API.',
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
			description: 'Sent as the service-account header with every request when set',
			hint: 'Optional. Leave empty unless the service asks for an account: it is sent as the service-account header.',
		},
		{
			displayName: 'Versioning',
			name: 'versioning',
			type: 'string',
			default: '',
			description: 'Sent as the service-versioning header with every request when set',
			hint: 'Optional. Leave empty unless the service asks for a version: it is sent as the service-versioning header.',
		},
		{
			displayName: 'Acting User UID',
			name: 'actingUserUid',
			type: 'string',
			default: '',
			placeholder: 'e.g. 3c90c3cc-0d44-4b50-8888-8dd25736052a',
			description:
				'UUID of the user to act as, sent as the service-user header with every request when set',
			hint: 'Optional. The UUID of a user the requests act as (the service-user header); leave empty to send none.',
		},
		{
			displayName: 'Requests per Minute',
			name: 'requestsPerMinute',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 60,
			description:
				'The service allows 60 requests per minute. Every node using this base URL and token shares this budget inside one n8n process.',
			hint: "Optional. Keep 60, the service's limit, unless other clients use the same limit: then set this one's share.",
		},
		{
			displayName: 'Rate Limit Window (Seconds)',
			name: 'rateLimitWindowSeconds',
			type: 'number',
			typeOptions: { minValue: 0.01, numberPrecision: 2 },
			default: 60,
			description:
				'Length of the window the requests-per-minute budget applies to. Keep 60 unless your account has another limit.',
			hint: 'Optional. Keep 60 unless your account has a limit over another window.',
		},
		{
			displayName: 'Allow Insecure HTTP',
			name: 'allowInsecureHttp',
			type: 'boolean',
			default: false,
			description:
				'Whether to accept a plain http:// Base URL on a host other than localhost, 127.0.0.1 or ::1. The API token then travels unencrypted: turn it on only inside a network you trust.',
			hint: 'Optional. Leave off unless the Base URL is plain http:// on a host other than localhost; the token then travels unencrypted.',
		},
	];

	// The token goes into the Authorization header of the request, and nowhere else; without the spaces or line break
	// it may have been saved with, as the redaction of its echoes expects (tokenAsSent). A function, not n8n's generic
	// header expression: n8n compiles and evaluates an expression on every request (the first of a process took tens
	// of milliseconds, each later one about a millisecond, before any request of a run could leave).
	authenticate: IAuthenticate = async (
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> => ({
		...requestOptions,
		headers: {
			...requestOptions.headers,
			Authorization: `Bearer ${tokenAsSent(credentials.token)}`,
		},
	});

	test: ICredentialTestRequest = {
		request: {
			// Without a user or password: n8n would send them as Basic authentication, and its messages name the URL.
			baseURL:
				'={{String($credentials.baseUrl).trim().replace(/^([^\\/?#\\\\]*\\/\\/)[^\\/?#\\\\]*@/, "$1").replace(/\\/+$/, "")}}',
			url: '/accounts/me',
			method: 'GET',
			headers: { 'User-Agent': USER_AGENT },
			// The token goes to the Base URL only: a redirect fails the test (see the rules below).
			disableFollowRedirect: true,
			sendCredentialsOnCrossOriginRedirect: false,
			// A Base URL with a user or password, or a plain http:// one that is not allowed, is refused before anything
			// is sent (n8n checks the request's host against this list first; no host can match the text).
			allowedDomains: `={{${HAS_USER_INFO} ? "none: the Base URL must not hold a user name or password (the part before @): remove them, the API Token is all the service needs" : ${SECURE_ENOUGH} ? "" : "none: a plain http:// Base URL needs Allow Insecure HTTP turned on in the credential (or use https://)"}}`,
		},
		rules: [
			redirectRule(301),
			redirectRule(302),
			redirectRule(303),
			redirectRule(307),
			redirectRule(308),
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
