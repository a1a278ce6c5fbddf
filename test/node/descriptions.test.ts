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

it('hints sit under External ID (Create or Update, Sync Backlog), Source Value, Custom Fields (JSON) and the credential fields, and on no other parameter of the node', () => {
	const hinted = (properties: INodeProperties[]) =>
		allProperties(properties)
			.filter(([, property]) => property.hint !== undefined && property.hint.trim() !== '')
			.map(([path, property]) => [path, property.displayOptions?.show?.operation, property.hint]);
	const nodeHints = hinted(new TaskBacklog().description.properties);
	const elsewhere = nodeHints.filter(([path]) => path !== 'customFieldsJson');
	expect(elsewhere.map(([path, operation]) => [path, operation])).toEqual([
		['externalId', ['upsert']],
		['externalId', ['syncBacklog']],
		['sourceValue', ['syncBacklog']],
	]);
	const [upsertHint, syncHint, sourceHint] = elsewhere.map(([, , hint]) => String(hint));
	expect(upsertHint).toContain('{{ $json.id }}');
	expect(upsertHint).toBe(syncHint);
	expect(sourceHint).toContain("each task's Source Field");
	expect(sourceHint).toContain('closed');

	const credentialHints = hinted(new TaskBacklogApi().properties);
	expect(credentialHints[0][0]).toBe('baseUrl');
	expect(String(credentialHints[0][2])).toContain('/api/v1');
});

describe('the texts n8n shows in full', () => {
	const nodeProperties = new TaskBacklog().description.properties;
	/** What an options dropdown shows of an option's description: one or two lines, about 80 characters. */
	const DROPDOWN_DESCRIPTION = 80;

	it('every option description of Input Data fits in 80 characters, and Map Automatically says it is faster', () => {
		const inputData = nodeProperties.filter((property) => property.name === 'inputData');
		expect(inputData.map((property) => property.displayOptions?.show?.operation)).toEqual([
			['create'],
			['upsert'],
			['syncBacklog'],
		]);
		for (const property of inputData) {
			const options = property.options as INodePropertyOptions[];
			for (const option of options)
				expect(String(option.description).length).toBeLessThanOrEqual(DROPDOWN_DESCRIPTION);
			const autoMap = options.find((option) => option.value === 'autoMap')!;
			expect(autoMap.name).toBe('Map Automatically');
			expect(autoMap.description).toMatch(/much faster for many items/);
		}
	});

	it("Map Automatically's detail is shown under Input Data once it is chosen: a notice saying what is read, and that the parameters are read once", () => {
		const notices = nodeProperties.filter((property) => property.name === 'autoMapNotice');
		expect(notices).toHaveLength(3);
		for (const notice of notices) {
			expect(notice.type).toBe('notice');
			expect(notice.displayOptions?.show?.inputData).toEqual(['autoMap']);
			expect(notice.displayName).toContain('The parameters below are read once for all items.');
		}
	});

	it('every option description of the node fits in 80 characters', () => {
		const long = allProperties(nodeProperties).flatMap(([path, property]) =>
			((property.options ?? []) as Option[])
				.filter((option): option is INodePropertyOptions => 'value' in option)
				.filter((option) => String(option.description ?? '').length > DROPDOWN_DESCRIPTION)
				.map((option) => `${path} > ${option.name}: ${option.description}`),
		);
		expect(long).toEqual([]);
	});

	it('the Custom Fields JSON field says, visibly (its hint), that rows win over its keys; the rows say so too', () => {
		const json = allProperties(nodeProperties).filter(([path]) => path === 'customFieldsJson');
		const rows = allProperties(nodeProperties).filter(([path]) => path === 'customFields');
		// Create, Create or Update, Update, Sync Backlog.
		expect(json.length).toBeGreaterThanOrEqual(4);
		expect(rows.length).toBe(json.length);
		for (const [, property] of json) {
			expect(property.displayName).toBe('Custom Fields (JSON)');
			expect(property.hint).toBe('Rows under Custom Fields win over keys of the same name here');
		}
		for (const [, property] of rows) expect(property.description).toMatch(/A row wins over/);
	});

	it('Archive and Unarchive say what they do in plain words', () => {
		const operation = nodeProperties.find(
			(property) =>
				property.name === 'operation' && property.displayOptions?.show?.resource?.[0] === 'task',
		)!;
		const described = Object.fromEntries(
			(operation.options as INodePropertyOptions[]).map((option) => [
				option.value,
				option.description,
			]),
		);
		expect(described.archive).toBe('Archive a task, keeping its status');
		expect(described.unarchive).toBe('Restore an archived task, keeping its status');
		expect(Object.values(described).join(' ')).not.toMatch(/(Set|Clear) archived/);
	});

	it('each optional field of the credential says, visibly (its hint), that it is optional and what it does', () => {
		const properties = new TaskBacklogApi().properties;
		const optional = properties.filter((property) => property.required !== true);
		expect(optional.map((property) => property.name)).toEqual([
			'account',
			'versioning',
			'actingUserUid',
			'requestsPerMinute',
			'rateLimitWindowSeconds',
			'allowInsecureHttp',
		]);
		for (const property of optional) {
			expect(property.hint).toMatch(/^Optional\. \S/);
			expect(property.description).toBeTruthy();
		}
		const hintOf = (name: string) => properties.find((property) => property.name === name)?.hint;
		expect(hintOf('account')).toContain('service-account header');
		expect(hintOf('versioning')).toContain('service-versioning header');
		expect(hintOf('actingUserUid')).toContain('service-user header');
		// The required ones are not called optional.
		for (const property of properties.filter((p) => p.required === true))
			expect(`${property.description} ${property.hint ?? ''}`).not.toMatch(/optional/i);
	});
});
