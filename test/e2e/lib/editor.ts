/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// n8n's editor in Debian's headless Chromium, driven by playwright-core (no browser download): a browser per test
// file, a page per test logged in with the owner's cookie, workflows made over n8n's REST API, screenshots saved under
// .build/editor-screenshots/<major>/ (tools/screenshot/readme-pictures.ts copies the README's from there).
import * as fs from 'fs';
import * as path from 'path';
import { chromium, type Browser, type Page } from 'playwright-core';

import { CHROMIUM_ARGS } from '../../../tools/screenshot/chromium';
import { credentialRef, http, projectDir } from './backlog';

export const SCREENSHOT_DIR = path.join(projectDir, '.build', 'editor-screenshots');

export async function launch(executablePath: string): Promise<Browser> {
	return await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

/** A page logged in as n8n's owner (the cookie from setUpOwner), 1440 x 900. */
export async function loggedInPage(
	browser: Browser,
	baseUrl: string,
	cookie: string,
): Promise<Page> {
	const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
	const [name, ...value] = cookie.split('=');
	await context.addCookies([{ name, value: value.join('='), url: baseUrl }]);
	const page = await context.newPage();
	page.setDefaultTimeout(30_000);
	return page;
}

export interface EditorNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	parameters?: Record<string, unknown>;
	[setting: string]: unknown;
}

let made = 0;
/**
 * A new workflow (a Manual Trigger and `nodes`) saved over n8n's REST API; its id. Each test opens its own: n8n 2.x
 * saves as you edit and locks a workflow open in another tab.
 */
export async function createWorkflow(
	baseUrl: string,
	cookie: string,
	nodes: EditorNode[] = [],
	opts: { manualTrigger?: boolean } = {},
): Promise<string> {
	const manual = {
		id: 'manual',
		name: 'Manual',
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const res = await http('POST', `${baseUrl}/rest/workflows`, {
		headers: { cookie },
		body: {
			name: `Editor test ${++made}`,
			active: false,
			nodes: [
				...(opts.manualTrigger === false ? [] : [manual]),
				...nodes.map((node, i) => ({ position: [240 * (i + 1), 0], parameters: {}, ...node })),
			],
			connections: {},
			settings: { executionOrder: 'v1' },
		},
	});
	const id = res.json?.data?.id as string | undefined;
	if (res.status !== 200 || !id) throw new Error(`POST /rest/workflows: ${res.status} ${res.text}`);
	return id;
}

/** A workflow of examples/ (its nodes, connections and settings) saved as a new one; its id. */
export async function createWorkflowFrom(
	baseUrl: string,
	cookie: string,
	example: { name: string; nodes: unknown[]; connections: unknown; settings?: unknown },
): Promise<string> {
	const res = await http('POST', `${baseUrl}/rest/workflows`, {
		headers: { cookie },
		body: {
			name: `${example.name} ${++made}`,
			active: false,
			nodes: example.nodes,
			connections: example.connections,
			settings: example.settings ?? { executionOrder: 'v1' },
		},
	});
	const id = res.json?.data?.id as string | undefined;
	if (res.status !== 200 || !id) throw new Error(`POST /rest/workflows: ${res.status} ${res.text}`);
	return id;
}

/** A Task Backlog node with the simulator's credential. */
export function taskBacklogNode(
	id: string,
	name: string,
	parameters: Record<string, unknown>,
	typeVersion = 2,
): EditorNode {
	return {
		id,
		name,
		type: 'n8n-nodes-task-backlog.taskBacklog',
		typeVersion,
		parameters,
		credentials: credentialRef,
	};
}

/** Saves a PNG of the page (or of one element) as .build/editor-screenshots/<major>/<name>.png. */
export async function shot(
	page: Page,
	major: number,
	name: string,
	selector?: string,
): Promise<string> {
	const file = path.join(SCREENSHOT_DIR, `${major}`, `${name}.png`);
	fs.mkdirSync(path.dirname(file), { recursive: true });
	if (selector) await page.locator(selector).first().screenshot({ path: file });
	else await page.screenshot({ path: file });
	return file;
}

/** The visible labels of the node panel's parameters, top to bottom (node settings included, after them). */
export async function parameterLabels(page: Page): Promise<string[]> {
	return (await page.evaluate(`Array.from(
		document.querySelectorAll('[data-test-id="node-parameters"] [data-test-id="parameter-item"] [data-test-id="input-label"]'),
	)
		.filter((label) => label.offsetParent !== null)
		.map((label) => (label.innerText.split('\\n')[0] || '').trim())
		.filter((text) => text !== '')`)) as string[];
}

/** Resolves once every image matched by `selector` has loaded (at least one). */
export async function imagesLoaded(page: Page, selector: string): Promise<void> {
	await page.waitForFunction(
		`(() => { const images = Array.from(document.querySelectorAll(${JSON.stringify(selector)}));
		return images.length > 0 && images.every((img) => img.complete && img.naturalWidth > 0); })()`,
		undefined,
		{ timeout: 30_000 },
	);
}

/** The node types of the node panel's items matched by `selector` (data-keyboard-nav-id without its uuid). */
export async function navIds(page: Page, selector: string): Promise<string[]> {
	const ids: string[] = [];
	for (const item of await page.locator(selector).all())
		ids.push(
			((await item.getAttribute('data-keyboard-nav-id')) ?? '').replace(/-[0-9a-f-]{36}$/, ''),
		);
	return ids;
}
