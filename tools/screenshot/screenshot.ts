/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-explicit-any -- tool code, never ships */
// Screenshot of the Task Backlog node's parameters in the n8n editor, for the README (examples/screenshot-node.png).
//
// Run by the demo (`npm run demo -- --once --screenshot`), or by hand against a running demo:
//   node .build/tools/screenshot/screenshot.js --url http://127.0.0.1:5678 [--workflow exTicketSync0001]
//     [--node 'Sync backlog'] [--out examples/screenshot-node.png] [--email ... --password ...]
//
// Gets past n8n's owner set-up with its REST API (POST /rest/owner/setup when no owner exists yet, then
// POST /rest/login for the auth cookie), hands the cookie to headless Chromium over the DevTools protocol, opens
// /workflow/<id>/<nodeId> (the editor opens that node's parameters) and captures the page.
import * as fs from 'fs';
import * as path from 'path';
import { request } from 'undici';

import { fail, readArgs, type FlagKind } from '../cli/args';
import { launchChromium } from './cdp';

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

/** The account the demo sets up when it takes the screenshot (n8n: 8+ characters, a number, a capital letter). */
export const DEMO_OWNER: Owner = {
	email: 'demo@example.com',
	password: 'Demo-Password-1',
	firstName: 'Demo',
	lastName: 'User',
};

export interface ScreenshotOptions {
	/** n8n's base URL, e.g. http://127.0.0.1:5678 */
	baseUrl: string;
	workflowId: string;
	/** node to open; default: the first node of type n8n-nodes-task-backlog.taskBacklog */
	nodeName?: string;
	out: string;
	owner?: Owner;
	width?: number;
	height?: number;
	log?: (line: string) => void;
	timeoutMs?: number;
}

export interface ScreenshotResult {
	file: string;
	bytes: number;
	nodeName: string;
	/** the node panel's text, to check what the picture shows */
	panelText: string;
	ownerCreated: boolean;
}

async function rest(
	baseUrl: string,
	method: 'GET' | 'POST',
	route: string,
	body?: unknown,
	cookie?: string,
): Promise<{ status: number; json: any; setCookie: string[] }> {
	const res = await request(`${baseUrl}/rest/${route}`, {
		method,
		headers: {
			...(body !== undefined ? { 'content-type': 'application/json' } : {}),
			...(cookie ? { cookie } : {}),
		},
		body: body !== undefined ? JSON.stringify(body) : undefined,
		headersTimeout: 30_000,
		bodyTimeout: 30_000,
	});
	const text = await res.body.text();
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		json = text;
	}
	const raw = res.headers['set-cookie'];
	const setCookie = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
	return { status: res.statusCode, json, setCookie };
}

/** Sets up the owner account if n8n has none yet, logs in, returns the auth cookie (name=value). */
export async function ownerLogin(
	baseUrl: string,
	owner: Owner,
): Promise<{ name: string; value: string; created: boolean }> {
	const settings = await rest(baseUrl, 'GET', 'settings');
	const needsSetup = settings.json?.data?.userManagement?.showSetupOnFirstLoad === true;
	if (needsSetup) {
		const setup = await rest(baseUrl, 'POST', 'owner/setup', owner);
		if (setup.status !== 200) {
			throw new Error(
				`POST /rest/owner/setup answered ${setup.status}: ${JSON.stringify(setup.json)}`,
			);
		}
	}
	// No browser-id header: the session is then not tied to one browser's id (n8n checks it only when present).
	const login = await rest(baseUrl, 'POST', 'login', {
		emailOrLdapLoginId: owner.email,
		email: owner.email,
		password: owner.password,
	});
	if (login.status !== 200) {
		throw new Error(
			`POST /rest/login answered ${login.status}: ${JSON.stringify(login.json)}` +
				(needsSetup ? '' : ' (an owner already existed: pass its --email and --password)'),
		);
	}
	for (const line of login.setCookie) {
		const match = /^(n8n-auth)=([^;]+)/.exec(line);
		if (match) return { name: match[1], value: match[2], created: needsSetup };
	}
	throw new Error(`POST /rest/login set no n8n-auth cookie (${login.setCookie.join(' | ')})`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function screenshotNode(opts: ScreenshotOptions): Promise<ScreenshotResult> {
	const log = opts.log ?? (() => undefined);
	const width = opts.width ?? 1280;
	const height = opts.height ?? 960;
	const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
	const owner = opts.owner ?? DEMO_OWNER;

	const cookie = await ownerLogin(opts.baseUrl, owner);
	log(
		cookie.created
			? `set up the n8n owner account ${owner.email} and logged in`
			: `logged in as ${owner.email}`,
	);

	const authCookie = `${cookie.name}=${cookie.value}`;
	const workflow = await rest(
		opts.baseUrl,
		'GET',
		`workflows/${opts.workflowId}`,
		undefined,
		authCookie,
	);
	if (workflow.status !== 200)
		throw new Error(`GET /rest/workflows/${opts.workflowId} answered ${workflow.status}`);
	const nodes = (workflow.json?.data?.nodes ?? []) as Array<{
		id: string;
		name: string;
		type: string;
	}>;
	const node = opts.nodeName
		? nodes.find((n) => n.name === opts.nodeName)
		: nodes.find((n) => n.type === 'n8n-nodes-task-backlog.taskBacklog');
	if (!node)
		throw new Error(
			`workflow ${opts.workflowId} has no node ${opts.nodeName ?? 'of type taskBacklog'}`,
		);

	const browser = await launchChromium({
		maxLifetimeMs: Math.max(10_000, deadline - Date.now()),
		width,
		height,
	});
	try {
		const session = await browser.newPage(width, height);
		const send = <T = any>(method: string, params: Record<string, unknown> = {}) =>
			browser.send<T>(method, params, session);
		await send('Network.enable');
		await send('Page.enable');
		await send('Runtime.enable');
		const ok = await send<{ success: boolean }>('Network.setCookie', {
			name: cookie.name,
			value: cookie.value,
			url: opts.baseUrl,
			path: '/',
			httpOnly: true,
			sameSite: 'Lax',
		});
		if (!ok.success) throw new Error('Chromium refused the auth cookie');
		const url = `${opts.baseUrl}/workflow/${encodeURIComponent(opts.workflowId)}/${encodeURIComponent(node.id)}`;
		log(`opening ${url} in headless Chromium`);
		await send('Page.navigate', { url });

		const probe = `(() => {
			const ndv = document.querySelector('[data-test-id="ndv"]');
			const params = ndv && ndv.querySelector('[data-test-id="node-parameters"]');
			return JSON.stringify({
				path: location.pathname,
				ndv: !!ndv,
				text: params ? params.innerText : (ndv ? ndv.innerText : ''),
			});
		})()`;
		let state = { path: '', ndv: false, text: '' };
		for (;;) {
			const { result } = await send<{ result: { value?: string } }>('Runtime.evaluate', {
				expression: probe,
				returnByValue: true,
			});
			state = JSON.parse(result.value ?? '{}');
			if (state.ndv && /Operation/.test(state.text) && /Resource/.test(state.text)) break;
			if (/\/signin/.test(state.path)) {
				throw new Error(
					'the editor sent the browser to the sign-in page: the cookie was not accepted',
				);
			}
			if (Date.now() > deadline) {
				const debug = `${opts.out}.failed.png`;
				const shot = await send<{ data: string }>('Page.captureScreenshot', { format: 'png' });
				fs.writeFileSync(debug, Buffer.from(shot.data, 'base64'));
				throw new Error(
					`the node panel did not open (page ${state.path}); what the page showed: ${debug}`,
				);
			}
			await sleep(500);
		}
		// let the panel finish its opening animation and the fonts settle
		await sleep(2500);
		const shot = await send<{ data: string }>('Page.captureScreenshot', {
			format: 'png',
			captureBeyondViewport: false,
		});
		const png = Buffer.from(shot.data, 'base64');
		fs.mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
		fs.writeFileSync(opts.out, png);
		return {
			file: opts.out,
			bytes: png.length,
			nodeName: node.name,
			panelText: state.text,
			ownerCreated: cookie.created,
		};
	} finally {
		await browser.close();
	}
}

// ---------------------------------------------------------------------------------------------------------------------
// Command line

const USAGE = `Usage: node .build/tools/screenshot/screenshot.js --url <n8n base URL> [options]
  --url URL          n8n's base URL (the demo prints it), e.g. http://127.0.0.1:5678
  --workflow ID      workflow to open (default exTicketSync0001, examples/ticket-sync.json)
  --node NAME        node to open (default: the first Task Backlog node)
  --out FILE         PNG to write (default examples/screenshot-node.png)
  --email E --password P   owner account (default ${DEMO_OWNER.email} / ${DEMO_OWNER.password}; set up if n8n has none)
  --width N --height N     viewport (default 1280 x 960)
`;

const FLAGS: Record<string, FlagKind> = Object.fromEntries(
	['--url', '--workflow', '--node', '--out', '--email', '--password', '--width', '--height'].map(
		(flag) => [flag, 'value' as const],
	),
);

async function main(argv: string[]): Promise<void> {
	const args = new Map<string, string>();
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => args.set(arg.flag.slice(2), arg.text()));
	const baseUrl = args.get('url');
	if (!baseUrl) fail('--url is required', USAGE);
	const projectDir = path.resolve(__dirname, '..', '..', '..');
	const result = await screenshotNode({
		baseUrl: baseUrl.replace(/\/+$/, ''),
		workflowId: args.get('workflow') ?? 'exTicketSync0001',
		nodeName: args.get('node'),
		out: path.resolve(args.get('out') ?? path.join(projectDir, 'examples', 'screenshot-node.png')),
		owner: {
			...DEMO_OWNER,
			...(args.has('email') ? { email: args.get('email')! } : {}),
			...(args.has('password') ? { password: args.get('password')! } : {}),
		},
		width: args.has('width') ? Number(args.get('width')) : undefined,
		height: args.has('height') ? Number(args.get('height')) : undefined,
		log: (line) => process.stderr.write(`[screenshot] ${line}\n`),
	});
	process.stdout.write(
		`${result.file} (${Math.round(result.bytes / 1024)} KB): node "${result.nodeName}"\n`,
	);
}

if (require.main === module) {
	main(process.argv.slice(2)).then(
		() => process.exit(0),
		(error: Error) => {
			process.stderr.write(`screenshot failed: ${error.message}\n`);
			process.exit(1);
		},
	);
}
