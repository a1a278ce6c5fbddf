// Kept in step with package.json by a unit test: node code may not read package.json at run time.
export const PACKAGE_VERSION = '0.1.0';

export const USER_AGENT = `n8n-nodes-task-backlog/${PACKAGE_VERSION}`;
