/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-hardcoded-secrets, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * The adaptive rate limiter across processes, without n8n's queue mode but over real HTTP: several OS processes, each
 * running the Task Backlog node through n8n-core (test/scale-out/client-process.ts), share one token of the simulator,
 * which allows 60 requests per window. Each process has its own limiter and knows nothing of the others, as n8n
 * queue-mode workers; each starts at the full 60 and has to learn its share from the server's 429s.
 *
 * Run time is not asserted here (speed is the benchmark's: npm run bench -- --queue); the log shows it per window.
 *
 * Time-scaled: a 2 s window, and the retry delay scaled with it (2 s of a 60 s window = 67 ms). The limiter's own
 * waits are in windows, so they scale by themselves.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import type { LoggedRequest, Simulator } from '../../tools/simulator/simulator';
import { startSimulator } from '../../tools/simulator/simulator';
import type { ClientJob, ClientResult } from './client-process';
import type { RateFigures } from '../../tools/simulator/windows';
import { describeWindows, jainIndex, rateFigures } from '../../tools/simulator/windows';

const projectDir = path.resolve(__dirname, '..', '..');
const CHILD = path.join(projectDir, '.build', 'test', 'scale-out', 'client-process.js');
const TOKEN = 'adaptive-limiter-token-3e9b';
const LIMIT = 60;
const WINDOW_MS = 2000;
const SCALE = WINDOW_MS / 60_000;
const RETRY = { retryDelayMs: Math.round(2000 * SCALE), maxAttempts: 5 };

const log = (line: string) => process.stderr.write(`[adaptive-limiter] ${line}\n`);

/** The compiled client (npm test builds it with build:tools); built here when missing or older than its sources. */
function ensureChildBuilt(): void {
	const sources = [
		path.join(projectDir, 'test', 'scale-out', 'client-process.ts'),
		...fs
			.readdirSync(path.join(projectDir, 'nodes', 'shared', 'transport'))
			.map((file) => path.join(projectDir, 'nodes', 'shared', 'transport', file)),
	];
	const newest = Math.max(...sources.map((file) => fs.statSync(file).mtimeMs));
	if (fs.existsSync(CHILD) && fs.statSync(CHILD).mtimeMs >= newest) return;
	log(
		`${path.relative(projectDir, CHILD)} is missing or older than its sources: npm run build:tools`,
	);
	const result = spawnSync('npm', ['run', 'build:tools'], {
		cwd: projectDir,
		encoding: 'utf8',
		timeout: 5 * 60_000,
	});
	// tsc emits even when another file of the test tree has a type error; what matters is the client being there.
	if (!fs.existsSync(CHILD) || fs.statSync(CHILD).mtimeMs < newest) {
		throw new Error(
			`npm run build:tools did not produce ${CHILD}:\n${result.stdout}\n${result.stderr}`,
		);
	}
}

/** Starts one process per job; all start sending at once; resolves with what each reported. */
async function runClients(jobs: ClientJob[], timeoutMs: number): Promise<ClientResult[]> {
	const children = jobs.map((job) =>
		spawn(process.execPath, [CHILD, JSON.stringify(job)], {
			cwd: projectDir,
			stdio: ['pipe', 'pipe', 'pipe'],
			env: { ...process.env, NODE_ENV: 'test' },
		}),
	);
	const timer = setTimeout(() => children.forEach((child) => child.kill('SIGKILL')), timeoutMs);
	try {
		const outputs = children.map((child) => {
			let stdout = '';
			let stderr = '';
			child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
			child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
			const ready = new Promise<void>((resolve, reject) => {
				child.stdout.on('data', () => stdout.includes('ready\n') && resolve());
				child.once('exit', (code) =>
					reject(new Error(`client exited (${code}) before it was ready:\n${stderr}`)),
				);
			});
			const done = new Promise<ClientResult>((resolve, reject) =>
				child.once('exit', (code, signal) => {
					const line = stdout.split('\n').find((text) => text.startsWith('{'));
					if (line) resolve(JSON.parse(line) as ClientResult);
					else
						reject(
							new Error(
								`client exited with ${code ?? signal} without a result:\n${stderr.slice(-3000)}`,
							),
						);
				}),
			);
			done.catch(() => undefined);
			return { ready, done };
		});
		await Promise.all(outputs.map((output) => output.ready));
		for (const child of children) child.stdin.write('go\n');
		return await Promise.all(outputs.map((output) => output.done));
	} finally {
		clearTimeout(timer);
		for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
	}
}

const ownerOf = (request: LoggedRequest) => String(request.headers['service-account'] ?? '?');

let sim: Simulator;
let uid: string;

beforeAll(async () => {
	ensureChildBuilt();
	sim = await startSimulator({
		tokens: [TOKEN],
		requestsPerWindow: LIMIT,
		windowMs: WINDOW_MS,
		seed: 14,
	});
}, 5 * 60_000);
afterAll(async () => await sim?.stop());

/** n processes, `each` requests each, at once (or the first alone for `lateByMs`); the figures of the run. */
async function run(
	n: number,
	each: number,
	retryAfterOnLimit = false,
	lateByMs = 0,
): Promise<{ results: ClientResult[]; figures: RateFigures }> {
	sim.reset();
	sim.configure({
		tokens: [TOKEN],
		requestsPerWindow: LIMIT,
		windowMs: WINDOW_MS,
		retryAfterOnLimit,
	});
	[{ uid }] = sim.seedTasks(1);
	// Let the window of the seeding (none: seeding sends no request) and of any earlier test pass.
	await new Promise((resolve) => setTimeout(resolve, WINDOW_MS * 1.1));
	const jobs: ClientJob[] = Array.from({ length: n }, (_, i) => ({
		url: sim.url,
		token: TOKEN,
		account: `c${i}`,
		uid,
		requests: each,
		requestsPerMinute: LIMIT,
		rateLimitWindowSeconds: WINDOW_MS / 1000,
		...RETRY,
		startDelayMs: i === 0 ? 0 : lateByMs,
	}));
	const results = await runClients(jobs, 120_000);
	const figures = rateFigures(sim.requests, {
		limit: LIMIT,
		windowMs: WINDOW_MS,
		ownerOf,
		lastAnswerAt: Math.max(...results.map((r) => r.endedAt)),
	});
	log(
		`${n} process(es) × ${each} requests${retryAfterOnLimit ? ', Retry-After sent' : ''}${lateByMs ? `, all but the first ${lateByMs} ms late` : ''}: ${figures.requests} requests, ` +
			`${figures.rejected429} × 429 (${(figures.share429 * 100).toFixed(1)} %), ${(figures.durationMs / 1000).toFixed(1)} s ` +
			`(floor ${(figures.floorMs / 1000).toFixed(1)} s, target ≤ ${(figures.targetMs / 1000).toFixed(1)} s); per window:\n${describeWindows(figures)}`,
	);
	// A process that gave up (seen once in 19 runs on a loaded machine: 5 × 429 in window 2, 1 in window 3, all its
	// attempts spent): when its last requests reached the server, on the windows' clock above.
	const first = Math.min(...sim.requests.map((request) => request.at));
	for (const result of results.filter((r) => r.error)) {
		const own = sim.requests.filter((request) => ownerOf(request) === result.account).slice(-8);
		log(
			`${result.account} failed: ${result.error}; its last requests: ${own.map((request) => `+${((request.at - first) / 1000).toFixed(2)} s ${request.status}`).join(', ')}`,
		);
	}
	return { results, figures };
}

/** The windows, from the `from`-th (1-based) on, that ended before the first process was done: all were sending. */
function sharedWindows(figures: RateFigures, results: ClientResult[], from: number) {
	const firstDone = Math.min(...results.map((r) => r.endedAt));
	return figures.windows.slice(from - 1).filter((window) => window.at + WINDOW_MS <= firstDone);
}

describe('adaptive rate limit, one token shared by processes that cannot see each other (real HTTP, 2 s window)', () => {
	test('4 processes, each starting at the full 60 per window: all succeed, at most 10% 429s, and they converge to a fair share within 3 windows', async () => {
		// 200 each (13 windows at the floor): a process that got more than its share at first still sends for enough
		// windows after the 3rd for the shares to be judged.
		const { results, figures } = await run(4, 200);
		expect(results.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'ok']);
		expect(results.map((r) => r.items)).toEqual([200, 200, 200, 200]);
		expect(figures.accepted).toBe(800);
		expect(figures.share429).toBeLessThanOrEqual(0.1);
		// From the 4th window on, while all four still send: each window's shares are close to equal (Jain's index;
		// 1 = equal, 0.25 = one process gets everything), and over those windows each process got 25% ± 10%.
		const shared = sharedWindows(figures, results, 4);
		expect(shared.length).toBeGreaterThanOrEqual(3);
		const perWindow = shared.map((window) =>
			jainIndex(figures.owners.map((owner) => window.accepted[owner] ?? 0)),
		);
		log(
			`Jain's index per shared window from the 4th: ${perWindow.map((x) => x.toFixed(2)).join(' ')}`,
		);
		// One window can be lopsided (a process's jittered pause lands in it, or on 2 busy cores a process is not
		// scheduled for a while: CI saw 0.61 once); the others, and the shares over all the windows, cannot.
		expect(perWindow.filter((index) => index < 0.7).length).toBeLessThanOrEqual(1);
		expect(perWindow.reduce((a, b) => a + b, 0) / perWindow.length).toBeGreaterThanOrEqual(0.85);
		const totals = figures.owners.map((owner) =>
			shared.reduce((sum, window) => sum + (window.accepted[owner] ?? 0), 0),
		);
		const all = totals.reduce((a, b) => a + b, 0);
		for (const total of totals) expect(Math.abs(total / all - 0.25)).toBeLessThanOrEqual(0.1);
	}, 180_000);

	test('with Retry-After on the 429s, the same: all succeed, at most 10% 429s', async () => {
		const { results, figures } = await run(4, 100, true);
		expect(results.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'ok']);
		expect(figures.accepted).toBe(400);
		expect(figures.share429).toBeLessThanOrEqual(0.1);
	}, 180_000);

	test('3 processes starting when a 4th has already filled the window: all succeed, at most 10% 429s (the late ones are not kept low)', async () => {
		const { results, figures } = await run(4, 40, false, WINDOW_MS / 4);
		expect(results.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'ok']);
		expect(figures.accepted).toBe(160);
		expect(figures.share429).toBeLessThanOrEqual(0.1);
	}, 180_000);

	test('one process alone: zero 429s, and it keeps close to the full 60 per window (it sends one request at a time)', async () => {
		const { results, figures } = await run(1, 300);
		expect(results[0].error).toBeUndefined();
		expect(figures.rejected429).toBe(0);
		const full = figures.windows.slice(0, -1).map((window) => window.accepted.c0 ?? 0);
		// The process sends one request at a time (Task Get, item after item), so it fills a window only while each
		// round trip is shorter than a spacing (33 ms at 60 per 2 s); after a slower one the limiter lets BURST go
		// at once to catch up, no more. On 2 busy cores a round trip sometimes takes 100 ms or more, and a window
		// then ends a few short: 56 and 58, with zero 429s, in 2 of 6 runs on a loaded machine (logged below: gaps
		// of 139 and 110 ms in a window of 58). That is the machine, not the limiter: alone, it never cuts its rate
		// (zero 429s, above), and a cut would take it to 0.7 of the limit. So each window holds at least 90% of the
		// limit and the windows together at least 95%: a limiter holding a lone process back by 4 or more in every
		// window fails.
		const spacing = WINDOW_MS / LIMIT;
		const times = sim.requests.map((request) => request.at).sort((a, b) => a - b);
		figures.windows.slice(0, -1).forEach((window, index) => {
			if (full[index] >= LIMIT) return;
			const inWindow = times.filter((at) => at >= window.at && at < window.at + WINDOW_MS);
			const gaps = inWindow
				.slice(1)
				.map((at, i) => at - inWindow[i])
				.filter((gap) => gap > 2 * spacing)
				.sort((a, b) => b - a);
			log(
				`window ${index + 1}: ${full[index]} of ${LIMIT}; gaps between requests over 2 spacings (ms): ${gaps.join(' ') || 'none'}`,
			);
		});
		for (const count of full) expect(count).toBeGreaterThanOrEqual(0.9 * LIMIT);
		expect(full.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0.95 * LIMIT * full.length);
	}, 180_000);
});
