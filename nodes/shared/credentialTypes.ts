// The credential types' names, as the credential classes declare them (credentials/*.credentials.ts) and as saved
// workflows store them: the nodes ask n8n for their credentials by these names.

/** Base URL, token and rate limit of the service's API (credentials/TaskBacklogApi.credentials.ts). */
export const CREDENTIAL_TYPE = 'taskBacklogApi';

/** The webhook trigger's secret and header names (credentials/TaskBacklogWebhookApi.credentials.ts). */
export const WEBHOOK_CREDENTIAL_TYPE = 'taskBacklogWebhookApi';
