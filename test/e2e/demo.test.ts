/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// `npm run demo -- --once` as CI runs it: the compiled demo (npm test runs build and build:tools first) installs the
// packed package into a real n8n, runs the ticket-sync example against the embedded simulator and exits 0 with a
// summary. The simulator state goes to a temp file, so the user's demo state is neither used nor changed.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const projectDir = path.resolve(__dirname, '..', '..');
const demoJs = path.join(projectDir, '.build', 'tools', 'demo', 'demo.js');
// generous: the first run on a machine installs n8n (several minutes); with n8n cached the demo takes ~30 s
const DEMO_TIMEOUT_MS = 25 * 60_000;

let tmp: string;
let killDemo: (() => void) | undefined;

beforeAll(() => {
	tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'task-backlog-demo-test-'));
});

afterAll(() => {
	killDemo?.();
	fs.rmSync(tmp, { recursive: true, force: true });
});

interface DemoRun {
	code: number | null;
	signal: string | null;
	output: string;
	timedOut: boolean;
}

function runDemo(args: string[]): Promise<DemoRun> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [demoJs, ...args], {
			cwd: projectDir,
			env: process.env,
			detached: true, // own process group: a timeout kills whatever the demo started too
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		let timedOut = false;
		const kill = () => {
			try {
				process.kill(-child.pid!, 'SIGKILL');
			} catch {
				// gone
			}
		};
		killDemo = kill;
		const timer = setTimeout(() => {
			timedOut = true;
			kill();
		}, DEMO_TIMEOUT_MS);
		child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
		child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
		child.once('error', reject);
		child.once('close', (code, signal) => {
			clearTimeout(timer);
			killDemo = undefined;
			resolve({ code, signal, output, timedOut });
		});
	});
}

test(
	'npm run demo -- --once runs the ticket sync in a real n8n and prints what it did',
	async () => {
		if (!fs.existsSync(demoJs))
			throw new Error(`${demoJs} is missing: run \`npm run build && npm run build:tools\` first`);
		const stateFile = path.join(tmp, 'simulator-state.json');
		const started = Date.now();
		const result = await runDemo(['--once', '--sim-port', '0', '--state', stateFile]);
		process.stderr.write(
			`[demo-test] demo --once: ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
		);
		if (result.code !== 0) process.stderr.write(`[demo-test] output:\n${result.output}\n`);
		expect(result.timedOut).toBe(false);
		expect(result.code).toBe(0);

		// "2 created, 1 updated, 1 reopened, 1 unchanged, 1 closed"
		const totals =
			/(\d+) created, (\d+) updated, (\d+) reopened, (\d+) unchanged, (\d+) closed/.exec(
				result.output,
			);
		expect(totals).not.toBeNull();
		expect(Number(totals![1])).toBeGreaterThan(0);
		// one line per task, with the task's link on the simulator
		const created = result.output.split('\n').filter((line) => /^\s+created\s/.test(line));
		expect(created).toHaveLength(Number(totals![1]));
		for (const line of created)
			expect(line).toMatch(/http:\/\/127\.0\.0\.1:\d+\/api\/v1\/tasks\/[0-9a-f-]{36}$/);
		// the simulator kept its state for the next run
		expect(JSON.parse(fs.readFileSync(stateFile, 'utf8')).tasks.length).toBeGreaterThan(0);
	},
	DEMO_TIMEOUT_MS + 60_000,
);
