// parametersReadOnce (nodes/shared/parameters.ts): a parameter without an expression is read from n8n once per
// execution, and every read still gets its own copy, as n8n's getNodeParameter gives, so that what one item's code
// does with the value it read never reaches another item.
import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';

import { parametersReadOnce } from '../../nodes/shared/parameters';

function contextWith(parameters: IDataObject) {
	const node = { name: 'Task Backlog', parameters } as unknown as INode;
	let reads = 0;
	const ctx = {
		getNode: () => node,
		getNodeParameter: (name: string, _itemIndex: number, fallback?: unknown) => {
			reads++;
			return structuredClone(parameters[name] ?? fallback);
		},
	} as unknown as IExecuteFunctions;
	return { ctx: parametersReadOnce(ctx), reads: () => reads };
}

describe('Parameters without an expression: read once, a copy for every read', () => {
	it.each([
		['an empty collection', {}],
		['an empty list', []],
		['a collection with values', { status: 'STARTED', labels: ['a'] }],
		['a list of collections', [{ name: 'priority', value: 'high' }]],
	])('%s: each item gets its own copy, equal to the stored value', (_, stored) => {
		const { ctx, reads } = contextWith({ additionalFields: stored });
		const first = ctx.getNodeParameter('additionalFields', 0) as IDataObject;
		// What one item's code does with its value (e.g. adding a key) must not show in the next item's.
		if (Array.isArray(first)) first.push({ added: true });
		else first.added = true;
		for (const itemIndex of [1, 2]) {
			const value = ctx.getNodeParameter('additionalFields', itemIndex);
			expect(value).toEqual(stored);
			expect(value).not.toBe(first);
		}
		expect(reads()).toBe(1);
	});
});
