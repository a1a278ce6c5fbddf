/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The package the demo shows: the folder it is in, and its example workflows (the headline one has a Sync Backlog
// node) with the credential they reference.
import * as fs from 'fs';
import * as path from 'path';

const HEADLINE = 'ticket-sync.json';
const SYNC_NODE_TYPE = 'n8n-nodes-task-backlog.taskBacklog';

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
}
export interface Workflow {
	id: string;
	name: string;
	nodes: WorkflowNode[];
}

export interface Example {
	file: string;
	workflow: Workflow;
}

export function findProjectDir(): string {
	for (let dir = __dirname; ; dir = path.dirname(dir)) {
		const manifest = path.join(dir, 'package.json');
		if (
			fs.existsSync(manifest) &&
			JSON.parse(fs.readFileSync(manifest, 'utf8')).name === 'n8n-nodes-task-backlog'
		)
			return dir;
		if (path.dirname(dir) === dir)
			throw new Error(`package n8n-nodes-task-backlog not found above ${__dirname}`);
	}
}

/** The workflow's Sync Backlog node, if it has one. */
export function syncNodeOf(workflow: Workflow): WorkflowNode | undefined {
	return workflow.nodes.find(
		(n) => n.type === SYNC_NODE_TYPE && n.parameters.operation === 'syncBacklog',
	);
}

export function readExamples(projectDir: string): { workflows: Example[]; headline: Example } {
	const dir = path.join(projectDir, 'examples');
	const files = fs.existsSync(dir)
		? fs
				.readdirSync(dir)
				.filter((f) => f.endsWith('.json'))
				.sort()
		: [];
	const workflows = files.map((file) => {
		const workflow = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Workflow;
		if (!workflow.id || !Array.isArray(workflow.nodes))
			throw new Error(`examples/${file} is not a workflow with an id`);
		return { file, workflow };
	});
	const hasSync = (w: Workflow) => syncNodeOf(w) !== undefined;
	const headline =
		workflows.find((w) => w.file === HEADLINE && hasSync(w.workflow)) ??
		workflows.find((w) => hasSync(w.workflow));
	if (!headline)
		throw new Error(
			`no workflow with a Sync Backlog node in ${dir} (expected examples/${HEADLINE})`,
		);
	return { workflows, headline };
}

/** The credential the examples reference (they all use one), so that the imported one matches them. */
export function exampleCredential(workflows: Workflow[]): { id: string; name: string } {
	for (const workflow of workflows) {
		for (const node of workflow.nodes) {
			const ref = node.credentials?.taskBacklogApi;
			if (ref?.id) return { id: ref.id, name: ref.name ?? 'Task Backlog (simulator)' };
		}
	}
	return { id: 'taskBacklogCredential', name: 'Task Backlog (simulator)' };
}
