/* eslint-disable @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-explicit-any -- tool code, never ships */
// What the demo tells the user: what it runs and what a first run installs, what the headline sync did to the
// backlog, and where to find n8n and the simulator while they run.
import * as fs from 'fs';
import * as path from 'path';

import type { N8nMajor } from '../n8n/n8n';
import { DEMO_OWNER } from '../screenshot/screenshot';
import type { Simulator, Task } from '../simulator/simulator';
import { print, say, secondsSince, tilde } from './progress';
import type { Example } from './project';
import { DEMO_TOKEN } from './run';

const ACTIONS = ['created', 'updated', 'reopened', 'unchanged', 'closed'] as const;
type Action = (typeof ACTIONS)[number];
// Sync Backlog's output item: { action: 'create' | 'update' | 'reopen' | 'unchanged' | 'close', uid, external_id, task }
const ACTION_NAMES: Record<string, Action> = {
	create: 'created',
	update: 'updated',
	reopen: 'reopened',
	unchanged: 'unchanged',
	close: 'closed',
};

/** The first lines: what the demo runs, and (said up front) what a first run installs and how long it takes. */
export function printIntro(major: N8nMajor, projectDir: string, cache: string) {
	print(
		`Task Backlog demo: a real n8n ${major}.x with n8n-nodes-task-backlog installed, against the embedded simulator ` +
			'of the Task Backlog Service.',
	);
	const manifest = path.join(projectDir, 'tools', 'n8n', `n8n-${major}`, 'package.json');
	const n8nVersion = JSON.parse(fs.readFileSync(manifest, 'utf8')).dependencies.n8n as string;
	// (the harness names its install folders n8n-<version>[-<hash of manifest and lockfile>]; it says so itself when
	// it installs after all)
	const isInstall = (name: string) =>
		(name === `n8n-${n8nVersion}` || name.startsWith(`n8n-${n8nVersion}-`)) &&
		fs.existsSync(path.join(cache, name, '.installed.json'));
	const cached = fs.existsSync(cache) && fs.readdirSync(cache).some(isInstall);
	if (!cached) {
		print(
			`First run: n8n ${n8nVersion} (and Node 24, which it needs) is installed from the npm registry into ${tilde(cache)}. ` +
				'This takes several minutes (~4 min here: npm install, then compiling sqlite3) and ~3 GB; progress lines ' +
				'follow. Later runs reuse it and take well under a minute.',
		);
	}
}

export interface SyncSummary {
	counts: Record<Action, number>;
	lines: string[];
}

function summarise(
	items: Array<Record<string, any>>,
	sim: Simulator,
	sourceValue: string,
): SyncSummary {
	const counts = Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Record<Action, number>;
	const rows: Array<{ action: Action; id: string; title: string; link: string }> = [];
	for (const item of items) {
		const action = ACTION_NAMES[String(item.action)] ?? (String(item.action) as Action);
		counts[action] = (counts[action] ?? 0) + 1;
		const uid = String(item.uid);
		const task = (item.task ?? sim.tasks.get(uid)) as Task | undefined;
		rows.push({
			action,
			id: String(item.external_id ?? ''),
			title: String(task?.fields?.title ?? '') + (item.error ? `  (error: ${item.error})` : ''),
			link: `${sim.url}/tasks/${uid}`,
		});
	}
	rows.sort(
		(a, b) => ACTIONS.indexOf(a.action) - ACTIONS.indexOf(b.action) || a.id.localeCompare(b.id),
	);
	const width = Math.min(48, Math.max(...rows.map((r) => r.title.length), 5));
	const clip = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s.padEnd(width));
	const lines = rows.map(
		(r) => `  ${r.action.padEnd(9)}  ${r.id.padEnd(8)}  ${clip(r.title)}  ${r.link}`,
	);
	const open = [...sim.tasks.values()].filter((t) => !t.archived && t.status !== 'DONE');
	const ofSource = open.filter((t) => t.fields?.source === sourceValue).length;
	lines.push(
		'',
		`  ${ACTIONS.map((a) => `${counts[a]} ${a}`).join(', ')}`,
		`  backlog now: ${sim.tasks.size} tasks, ${open.length} open (${ofSource} of source "${sourceValue}"; ` +
			'tasks of other sources are left alone)',
	);
	return { counts, lines };
}

/** The headline sync's output, a task per line, and the backlog after it. */
export function printSyncResult(
	nodeName: string,
	startedAt: number,
	items: Array<Record<string, any>>,
	sim: Simulator,
	sourceValue: string,
) {
	const summary = summarise(items, sim, sourceValue);
	print();
	print(`Sync Backlog ("${nodeName}") in ${secondsSince(startedAt)}, ${items.length} tasks:`);
	for (const line of summary.lines) print(line);
	print(
		`  (task links are the simulator's API: curl -H 'Authorization: Bearer ${DEMO_TOKEN}' <link>)`,
	);
	print();
	if (Object.values(summary.counts).reduce((a, b) => a + b, 0) === summary.counts.unchanged) {
		say(
			'everything was already in sync (an earlier run did it): running the sync again changes nothing. ' +
				'--reset starts afresh.',
		);
	}
}

export interface Serving {
	url: string;
	n8nVersion: string;
	/** the screenshot set up the owner account, so the user signs in with it */
	ownerSetUp: boolean;
	workflows: Example[];
	credential: { id: string; name: string };
	sim: Simulator;
	stateFile: string;
	hours: number;
}

/** Where n8n, the examples and the simulator are while they run, and how to stop them. */
export function printServing({
	url,
	n8nVersion,
	ownerSetUp,
	workflows,
	credential,
	sim,
	stateFile,
	hours,
}: Serving) {
	print();
	print(`n8n ${n8nVersion} is running: ${url}`);
	print(
		ownerSetUp
			? `  sign in as ${DEMO_OWNER.email} / ${DEMO_OWNER.password}`
			: '  first visit: n8n asks you to set up its owner account: any name, e-mail and password (kept only in ' +
					"this run's temporary user folder)",
	);
	for (const { file, workflow } of workflows) {
		print(`  ${url}/workflow/${workflow.id}  ${workflow.name} (examples/${file})`);
	}
	print(
		`  the credential "${credential.name}" points at the simulator; open the ticket sync and press Execute workflow`,
	);
	print(`Simulator of the Task Backlog Service: ${sim.url} (token ${DEMO_TOKEN})`);
	print(
		`  all tasks: http://127.0.0.1:${sim.port}/_sim/state  (state kept in ${tilde(stateFile)})`,
	);
	print(`Ctrl-C stops n8n and the simulator (at the latest after ${hours} h).`);
}
