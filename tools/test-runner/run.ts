// `npm test` after the build: lint, then the unit tests while the end-to-end suite's installs run in another process
// (prepare.ts), then the end-to-end files in two lanes side by side, each lane one file at a time. Lane "timed" holds
// the files whose assertions count time or rates (bursts within a deadline, 429 shares, fair shares between
// processes); lane "rest" holds every other file, so a new file lands there by itself. Each file's time is printed
// at the end. Exit code: 0 only when every step passed.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '..', '..', '..');
const jestBin = require.resolve('jest/bin/jest', { paths: [root] });
const config = path.join(root, 'test', 'jest.config.js');
const resultsDir = path.join(root, '.build', 'test-results');

/** Files whose tests assert on durations or on how requests share a rate window: kept apart from each other. */
const TIMED = [
	/test\/e2e\/triggers\.test\.ts$/,
	/test\/e2e\/queue-mode\.test\.ts$/,
	/test\/scale-out\/processes\.test\.ts$/,
];

interface Outcome {
	code: number;
	seconds: number;
}

function prefixed(prefix: string, write: (text: string) => void): (chunk: Buffer) => void {
	let pending = '';
	return (chunk) => {
		pending += chunk.toString('utf8');
		const lines = pending.split('\n');
		pending = lines.pop() ?? '';
		for (const line of lines) write(`${prefix}${line}\n`);
	};
}

// The lowest CPU priority for lane "rest" (its n8n processes inherit it), so that it takes only the CPU time lane
// "timed" leaves: a burst's deadline is met as if it ran alone, and "rest" still runs whenever "timed" waits.
const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => fs.existsSync(file));

/** Runs a command with its output prefixed line by line; resolves with its exit code (1 when it was killed). */
function run(
	label: string,
	command: string,
	args: string[],
	opts: { lowPriority?: boolean } = {},
): Promise<Outcome> {
	const started = Date.now();
	const prefix = label ? `[${label}] ` : '';
	if (opts.lowPriority && NICE) [command, args] = [NICE, ['-n', '19', command, ...args]];
	return new Promise((resolve) => {
		const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
		child.stdout.on(
			'data',
			prefixed(prefix, (text) => process.stdout.write(text)),
		);
		child.stderr.on(
			'data',
			prefixed(prefix, (text) => process.stderr.write(text)),
		);
		child.on('close', (code) =>
			resolve({ code: code ?? 1, seconds: (Date.now() - started) / 1000 }),
		);
	});
}

const jest = (label: string, args: string[], opts: { lowPriority?: boolean } = {}) =>
	run(label, process.execPath, [jestBin, '-c', config, ...args], opts);

async function listE2eFiles(): Promise<string[]> {
	let listed = '';
	await new Promise<void>((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[jestBin, '-c', config, '--selectProjects', 'e2e', 'e2e-strict', '--listTests'],
			{ cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
		);
		child.stdout.on('data', (chunk: Buffer) => (listed += chunk.toString('utf8')));
		child.on('close', (code) =>
			code === 0 ? resolve() : reject(new Error(`jest --listTests: ${code}`)),
		);
	});
	return [...new Set(listed.split('\n').filter((line) => line.endsWith('.test.ts')))].sort();
}

interface FileResult {
	name: string;
	status: string;
	perfStats: { runtime: number };
	displayName?: string | { name: string };
}

function fileTimes(lane: string): string[] {
	const file = path.join(resultsDir, `e2e-${lane}.json`);
	if (!fs.existsSync(file)) return [`  ${lane}: no results (${file} missing)`];
	const results = (JSON.parse(fs.readFileSync(file, 'utf8')) as { testResults: FileResult[] })
		.testResults;
	return results.map((result) => {
		const project =
			typeof result.displayName === 'string' ? result.displayName : result.displayName?.name;
		const seconds = (result.perfStats.runtime / 1000).toFixed(1).padStart(6);
		return `  ${lane.padEnd(5)} ${seconds} s  ${result.status.padEnd(6)} ${project ?? ''} ${path.relative(root, result.name)}`;
	});
}

// `--e2e`: the end-to-end lanes only (development; `npm test` runs everything).
const endToEndOnly = process.argv.includes('--e2e');

async function main(): Promise<number> {
	const started = Date.now();
	const elapsed = () => `${((Date.now() - started) / 60_000).toFixed(1)} min`;
	fs.mkdirSync(resultsDir, { recursive: true });

	const prepared = run('prepare', process.execPath, [path.join(__dirname, 'prepare.js')]);
	if (!endToEndOnly) {
		const lint = await run('', 'npm', ['run', 'lint']);
		if (lint.code !== 0) return lint.code;
		const unit = await jest('', ['--selectProjects', 'unit', 'unit-strict']);
		const prepare = await prepared;
		console.log(
			`[test] unit tests: ${unit.seconds.toFixed(0)} s; end-to-end installs: ${prepare.seconds.toFixed(0)} s (side by side); ${elapsed()} so far`,
		);
		if (unit.code !== 0) return unit.code;
	} else await prepared;

	const files = await listE2eFiles();
	const timed = files.filter((file) => TIMED.some((pattern) => pattern.test(file)));
	const rest = files.filter((file) => !timed.includes(file));
	const lane = (name: string, lanefiles: string[], lowPriority: boolean) =>
		jest(
			name,
			[
				'--selectProjects',
				'e2e',
				'e2e-strict',
				'--runInBand',
				'--json',
				`--outputFile=${path.join(resultsDir, `e2e-${name}.json`)}`,
				'--runTestsByPath',
				...lanefiles,
			],
			{ lowPriority },
		);
	const lanes = await Promise.all([lane('timed', timed, false), lane('rest', rest, true)]);
	console.log(`[test] end-to-end files (two lanes side by side), ${elapsed()} in all:`);
	for (const line of [...fileTimes('timed'), ...fileTimes('rest')]) console.log(line);
	console.log(
		`[test] lanes: timed ${lanes[0].seconds.toFixed(0)} s, rest ${lanes[1].seconds.toFixed(0)} s`,
	);
	return lanes.find((outcome) => outcome.code !== 0)?.code ?? 0;
}

void main().then((code) => process.exit(code));
