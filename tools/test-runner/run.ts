/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, no-console -- tool code, never ships */
// `npm test` after the build: lint, then the unit tests while the end-to-end suite's installs run in another process
// (prepare.ts), then the unit files that time the limiter (test/transport/), then the end-to-end files: first, one at
// a time with nothing beside them, the files whose assertions count time or rates (bursts within a deadline, 429
// shares, fair shares between processes); then every other file in two lanes side by side, one of them at the lowest
// CPU priority, and beside them, in a third lane at that priority, the files that mostly wait on n8n's poll times. A new file lands with the others by itself. Each file's time is printed at the end. Exit code: 0 only
// when every step passed.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '..', '..', '..');
const jestBin = require.resolve('jest/bin/jest', { paths: [root] });
const config = path.join(root, 'test', 'jest.config.js');
const resultsDir = path.join(root, '.build', 'test-results');

/**
 * Files whose tests assert on durations or on how requests share a rate window: never beside each other. In project
 * e2e only for triggers.test.ts: its strict run skips those tests (loadTest), and shares the machine.
 */
const TIMED: Array<{ file: RegExp; project?: string }> = [
	{ file: /test\/e2e\/triggers\.test\.ts$/, project: 'e2e' },
	{ file: /test\/e2e\/queue-mode\.test\.ts$/ },
	{ file: /test\/scale-out\/processes\.test\.ts$/ },
];

/**
 * Of those, the files that run with nothing beside them: all of them. Beside lane "rest" at its lowest priority, a
 * delivery of the 300 at once to n8n 1.x was reset once, and one process kept 59 of its 60 requests a window once.
 */
const ALONE = TIMED;

/**
 * Files that mostly wait on n8n's own clock (the Poll Trigger's poll times: four n8n servers, each waiting for polls
 * a minute apart): after the ALONE files, they run in a third lane beside the other two, at the lowest CPU priority,
 * instead of holding one of them for about six minutes.
 */
const WAITING = [{ file: /test\/e2e\/poll-budget\.test\.ts$/ }];

/** Unit files that time the limiter to tens of milliseconds: run after the installs, not beside them. */
const TIMED_UNIT = '/test/transport/';
/** Every other unit file (a path pattern: a regular expression). */
const OTHER_UNIT = '/test/(?!transport/)';

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

/** The test files of one jest project. */
async function listFiles(project: string): Promise<string[]> {
	let listed = '';
	await new Promise<void>((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[jestBin, '-c', config, '--selectProjects', project, '--listTests'],
			{ cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
		);
		child.stdout.on('data', (chunk: Buffer) => (listed += chunk.toString('utf8')));
		child.on('close', (code) =>
			code === 0 ? resolve() : reject(new Error(`jest --listTests: ${code}`)),
		);
	});
	return listed.split('\n').filter((line) => line.endsWith('.test.ts'));
}

/** One end-to-end file in one project: what a lane runs at a time. */
interface Unit {
	project: string;
	file: string;
}

/** The file's time and status, from jest's JSON results (one line; never throws). */
function unitTime(lane: string, unit: Unit, resultFile: string, seconds: number): string {
	let status = 'no results';
	try {
		const results = (
			JSON.parse(fs.readFileSync(resultFile, 'utf8')) as { testResults: Array<{ status: string }> }
		).testResults;
		status = results.map((result) => result.status).join(', ') || 'no tests';
	} catch {
		// jest died before writing them: the status says so
	}
	return `  ${lane.padEnd(5)} ${seconds.toFixed(1).padStart(6)} s  ${status.padEnd(6)} ${unit.project.padEnd(10)} ${path.relative(root, unit.file)}`;
}

/**
 * Two lanes take end-to-end files one at a time, each file and project in its own jest run. Lane "timed" runs the
 * timed files first, then helps with the others; lane "rest" (lowest CPU priority) takes only the others. The others
 * go longest first (by their size: a fair guess of their time).
 */
async function runEndToEnd(units: Unit[]): Promise<{ code: number; lines: string[] }> {
	const matches = (list: typeof TIMED, unit: Unit) =>
		list.some(
			({ file, project }) => file.test(unit.file) && (!project || project === unit.project),
		);
	const isTimed = (unit: Unit) => matches(TIMED, unit);
	const isAlone = (unit: Unit) => matches(ALONE, unit);
	const isWaiting = (unit: Unit) => matches(WAITING, unit);
	// the files that run alone first, so that the others then share the machine
	const timed = units.filter(isTimed).sort((a, b) => Number(isAlone(b)) - Number(isAlone(a)));
	const waiting = units.filter((unit) => !isTimed(unit) && isWaiting(unit));
	const others = units
		.filter((unit) => !isTimed(unit) && !isWaiting(unit))
		.sort((a, b) => fs.statSync(b.file).size - fs.statSync(a.file).size);
	const lines: string[] = [];
	let code = 0;
	const runUnit = async (lane: string, unit: Unit, lowPriority: boolean) => {
		const resultFile = path.join(
			resultsDir,
			`${unit.project}-${path.basename(unit.file, '.test.ts')}.json`,
		);
		fs.rmSync(resultFile, { force: true });
		const outcome = await jest(
			lane,
			[
				'--selectProjects',
				unit.project,
				'--json',
				`--outputFile=${resultFile}`,
				'--runTestsByPath',
				unit.file,
			],
			{ lowPriority },
		);
		if (outcome.code !== 0) code = outcome.code;
		lines.push(unitTime(lane, unit, resultFile, outcome.seconds));
	};
	// While an ALONE file runs, lane "rest" starts nothing, and the file waits for the unit "rest" is running.
	let alone: Promise<void> | undefined;
	let restRunning: Promise<void> = Promise.resolve();
	let aloneEnded = () => {};
	const aloneDone = new Promise<void>((resolve) => (aloneEnded = resolve));
	const timedLane = async () => {
		for (const unit of timed) {
			if (!isAlone(unit)) {
				await runUnit('timed', unit, false);
				continue;
			}
			let release = () => {};
			alone = new Promise<void>((resolve) => (release = resolve));
			await restRunning;
			await runUnit('timed', unit, false);
			alone = undefined;
			release();
		}
		aloneEnded();
		for (let unit = others.shift(); unit; unit = others.shift())
			await runUnit('timed', unit, false);
	};
	const restLane = async () => {
		for (;;) {
			if (alone) {
				await alone;
				continue;
			}
			const unit = others.shift();
			if (!unit) return;
			restRunning = runUnit('rest', unit, true);
			await restRunning;
		}
	};
	const waitLane = async () => {
		await aloneDone;
		for (const unit of waiting) await runUnit('wait', unit, true);
	};
	// the timed lane first: it marks its first ALONE file before the rest lane looks
	await Promise.all([timedLane(), restLane(), waitLane()]);
	return { code, lines };
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
		// Four workers on any machine: the unit files mostly wait (rate windows, retry pauses), so they overlap well
		// (2 cores: 2.0 min; jest's default of cores - 1 workers: 5.5 min). Beside the installs, tests that take 2 to 4 s
		// alone passed jest's default limit of 5 s: 30 s still catches a test that hangs.
		// Not --testPathIgnorePatterns: it would replace the projects' own (test/e2e/, test/scale-out/, ...).
		const unitFiles = (pattern: string, workers: number) =>
			jest('', [
				'--selectProjects',
				'unit',
				'unit-strict',
				`--maxWorkers=${workers}`,
				'--testTimeout=30000',
				'--testPathPatterns',
				pattern,
			]);
		const unit = await unitFiles(OTHER_UNIT, 4);
		const prepare = await prepared;
		// The transport files time the limiter's spacing and pauses to tens of milliseconds: beside the installs and
		// three other workers, three of them failed once each in clean-clone cold runs. After the installs, two workers.
		const timedUnit = unit.code !== 0 ? unit : await unitFiles(TIMED_UNIT, 2);
		console.log(
			`[test] unit tests: ${unit.seconds.toFixed(0)} s beside the end-to-end installs (${prepare.seconds.toFixed(0)} s), then ${TIMED_UNIT}: ${timedUnit === unit ? 'not run' : `${timedUnit.seconds.toFixed(0)} s`}; ${elapsed()} so far`,
		);
		if (unit.code !== 0) return unit.code;
		if (timedUnit.code !== 0) return timedUnit.code;
	} else await prepared;

	const e2eStarted = Date.now();
	const units: Unit[] = [];
	for (const project of ['e2e', 'e2e-strict'])
		for (const file of await listFiles(project)) units.push({ project, file });
	const e2e = await runEndToEnd(units);
	console.log(
		`[test] end-to-end files (lanes timed, rest and wait): ${((Date.now() - e2eStarted) / 60_000).toFixed(1)} min (${elapsed()} in all)`,
	);
	for (const line of e2e.lines) console.log(line);
	return e2e.code;
}

void main().then((code) => process.exit(code));
