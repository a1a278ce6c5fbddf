/**
 * What the editor shows: every parameter of type options or multiOptions offers its choices (or loads them), in each
 * of the three nodes and the credentials. A value that is still undefined when the description is built (as the
 * Status filter's choices were while the task filters and the task body imported each other) leaves a list with
 * nothing to pick.
 */
import type { INodeProperties, INodePropertyCollection, INodePropertyOptions } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { TaskBacklogApi } from '../../credentials/TaskBacklogApi.credentials';
import { TaskBacklogWebhookApi } from '../../credentials/TaskBacklogWebhookApi.credentials';
import { TaskBacklog } from '../../nodes/TaskBacklog/TaskBacklog.node';
import { TaskBacklogPollTrigger } from '../../nodes/TaskBacklogPollTrigger/TaskBacklogPollTrigger.node';
import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';

type Option = INodeProperties | INodePropertyOptions | INodePropertyCollection;

/** Every property, nested ones (collection options, fixedCollection values) included, with its path. */
function allProperties(properties: INodeProperties[], at = ''): Array<[string, INodeProperties]> {
	const found: Array<[string, INodeProperties]> = [];
	for (const property of properties) {
		const path = `${at}${property.name}`;
		found.push([path, property]);
		for (const option of (property.options ?? []) as Option[]) {
			if ('type' in option) found.push(...allProperties([option], `${path}.`));
			else if ('values' in option)
				found.push(...allProperties(option.values, `${path}.${option.name}.`));
		}
	}
	return found;
}

const described: Array<[string, INodeProperties[]]> = [
	['Task Backlog', new TaskBacklog().description.properties],
	['Task Backlog Trigger', new TaskBacklogTrigger().description.properties],
	['Task Backlog Poll Trigger', new TaskBacklogPollTrigger().description.properties],
	['Task Backlog API credential', new TaskBacklogApi().properties],
	['Task Backlog Webhook API credential', new TaskBacklogWebhookApi().properties],
];

describe.each(described)('%s', (_, properties) => {
	it('every options and multiOptions parameter offers its choices', () => {
		const empty = allProperties(properties)
			.filter(([, property]) => property.type === 'options' || property.type === 'multiOptions')
			.filter(
				([, property]) =>
					!property.typeOptions?.loadOptionsMethod &&
					!(Array.isArray(property.options) && property.options.length > 0),
			)
			.map(([path]) => path);
		expect(empty).toEqual([]);
	});
});

it('the Status filter of Get Many and of the Poll Trigger offers To Do, Started and Done', () => {
	const statusFilter = (properties: INodeProperties[]) =>
		allProperties(properties).find(
			([path, property]) => path.endsWith('.status') && property.type === 'multiOptions',
		)?.[1];
	for (const properties of [
		new TaskBacklog().description.properties,
		new TaskBacklogPollTrigger().description.properties,
	]) {
		const values = ((statusFilter(properties)?.options ?? []) as INodePropertyOptions[]).map(
			(option) => option.value,
		);
		expect(values).toEqual(['TODO', 'STARTED', 'DONE']);
	}
});

it("Update's Keep Other Custom Fields shows in version 1 (saved workflows) and not in version 2, where it changes nothing", () => {
	const { description } = new TaskBacklog();
	const keepOther = description.properties.find((property) => property.name === 'mergeFields')!;
	const shownIn = (typeVersion: number) =>
		NodeHelpers.displayParameter(
			{ resource: 'task', operation: 'update' },
			keepOther,
			{ typeVersion },
			description,
		);
	expect(keepOther.displayName).toBe('Keep Other Custom Fields');
	expect(shownIn(1)).toBe(true);
	expect(shownIn(2)).toBe(false);
});

it('hints sit under External ID (Create or Update, Sync Backlog), Source Value and the Base URL, and on no other parameter of the node or the credential', () => {
	const hinted = (properties: INodeProperties[]) =>
		allProperties(properties)
			.filter(([, property]) => property.hint !== undefined && property.hint.trim() !== '')
			.map(([path, property]) => [path, property.displayOptions?.show?.operation, property.hint]);
	const nodeHints = hinted(new TaskBacklog().description.properties);
	expect(nodeHints.map(([path, operation]) => [path, operation])).toEqual([
		['externalId', ['upsert']],
		['externalId', ['syncBacklog']],
		['sourceValue', ['syncBacklog']],
	]);
	const [upsertHint, syncHint, sourceHint] = nodeHints.map(([, , hint]) => String(hint));
	expect(upsertHint).toContain('{{ $json.id }}');
	expect(upsertHint).toBe(syncHint);
	expect(sourceHint).toContain("each task's Source Field");
	expect(sourceHint).toContain('closed');

	const credentialHints = hinted(new TaskBacklogApi().properties);
	expect(credentialHints.map(([path]) => path)).toEqual(['baseUrl']);
	expect(String(credentialHints[0][2])).toContain('/api/v1');
});
