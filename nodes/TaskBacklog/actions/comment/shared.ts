import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { checkSize, jsonArray, requireUuid } from '../../../shared/parameters';

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

/** One paragraph block (spec 2.4 TextBlock) per paragraph of the text. */
export function paragraphBlocks(text: string): IDataObject[] {
	return text
		.split(/\n\s*\n/)
		.map((paragraph) => paragraph.trim())
		.filter((paragraph) => paragraph !== '')
		.map((paragraph, index) => ({
			id: `p${index + 1}`,
			type: 'paragraph',
			props: {},
			content: [{ type: 'text', text: paragraph, styles: {} }],
			children: [],
		}));
}

/** The body of a comment create or update: its text, its blocks (given, or a paragraph per paragraph) and author. */
export function readCommentBody(
	ctx: IExecuteFunctions,
	itemIndex: number,
	text: string,
	additional: IDataObject,
) {
	checkSize(ctx, itemIndex, 'Text', text);
	const given =
		additional.blocks === undefined
			? []
			: jsonArray(ctx, itemIndex, 'Blocks (JSON)', additional.blocks);
	const body: IDataObject = { text, blocks: given.length > 0 ? given : paragraphBlocks(text) };
	if (additional.author_uid)
		body.author_uid = requireUuid(ctx, itemIndex, 'Author UID', additional.author_uid);
	return body;
}
