// Step 5 of the demo: the headline example (its Sync Backlog node) run once with `n8n execute`, and what it did.
import { nodeRun, runError as runErrorOf, type Json } from '../n8n/workflows';
import { print, say } from './progress';
import { syncNodeOf, type WorkflowNode } from './project';
import { printSyncResult } from './report';
import type { Demo } from './run';

/** Runs the headline example and prints its summary; its Sync Backlog node. */
export async function runHeadline({ folder, sim, headline }: Demo): Promise<WorkflowNode> {
	const syncNode = syncNodeOf(headline.workflow)!;
	const sourceValue = String(syncNode.parameters.sourceValue ?? '');
	say(`running "${headline.workflow.name}" (examples/${headline.file}) with n8n execute ...`);
	const t = Date.now();
	const result = await folder.execute(headline.workflow.id, { timeoutMs: 180_000 });
	const items = nodeOutput(result.run, syncNode.name);
	if (result.code !== 0 || !result.run || items.length === 0) {
		print(result.stdout.trim().split('\n').slice(-30).join('\n'));
		print(result.stderr.trim().split('\n').slice(-30).join('\n'));
		throw new Error(
			`the workflow failed (n8n execute exited with ${result.code}): ` +
				(runError(result.run) ?? `no output from ${syncNode.name}`),
		);
	}
	printSyncResult(syncNode.name, t, items, sim, sourceValue);
	return syncNode;
}

function nodeOutput(run: unknown, nodeName: string): Json[] {
	return nodeRun(run, nodeName)?.items ?? [];
}

function runError(run: unknown): string | undefined {
	const error = runErrorOf(run);
	if (!error) return undefined;
	return [error.message, error.description].filter(Boolean).join(': ');
}
