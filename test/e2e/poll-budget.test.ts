/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// The Poll Trigger within n8n's poll budget, in a real `n8n start` (issue 32 item 3): a bulk import of more changes
// than one poll can read is emitted over several polls, each change exactly once.
//  - n8n 2.x with the durable scheduler on (N8N_SCHEDULER_ENABLED, N8N_SCHEDULER_POLL_TRIGGERS_ENABLED): n8n abandons a
//    poll after N8N_SCHEDULER_POLL_TIMEOUT seconds and tells the node getPollBudgetMs() = the timeout less a margin
//    (trigger-execution-context.factory.js: min(timeout, lease) less max(20 %, 5 s), at most half of it; 45 s: 36 s).
//    Here 6 s, so the node is told 3 s and reads for 2.7 s; the service answers each listing page in 0.3 s, and the
//    trigger polls every 5 s. Then changes made after the import are each emitted once too: the next window holds the
//    import again (inside the 60 s lookback) and is read over several polls, of which only the last emits anything,
//    and n8n keeps no poll's static data but an emitting one's (the trigger goes on from what it keeps: triggerMemory.ts).
//  - n8n 1.x (no getPollBudgetMs): the trigger's own 30 s budget, 27 s of reading; pages take 2 s, so 1,500 changes
//    (15 pages) do not fit one poll; polls every 30 s so that one poll ends before the next begins (1.x starts polls
//    on time whether or not the last one has finished). Checked there: the import is emitted over two polls, each
//    change once, none read beyond the budget; not the polls after (the next reads the import again for 27 s).
// n8n's poll times take no interval under a minute (a seconds field other than a number is refused: 2.41's
// isSubMinuteCron, 1.123's "*" test), so the trigger has several custom poll times, each at a second of its own.
// What each poll emitted is what the workflow wrote: the trigger's items go to a Code node that joins their uids, and a
// Task Backlog node comments that text on a ledger task in the service: one comment per poll that emitted.
import { randomUUID } from 'crypto';

import type { N8nMajor, N8nServer } from '../../tools/n8n/n8n';
import type { LoggedRequest, TaskComment } from '../../tools/simulator/simulator';
import {
	backlogNode as ledgerNode,
	codeNode,
	workflow,
	type WorkflowNode,
} from '../../tools/n8n/workflows';
import { clockPastStamps } from '../helpers/clock';
import type { Stage } from './lib/backlog';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	log,
	PKG,
	printTimings,
	setUpStage,
	timed,
	waitFor,
} from './lib/backlog';

afterAll(() => printTimings('poll-budget'));

const SOURCE = 'bulk-import-e2e';
const IMPORT_SIZE = 1500;
const WORKFLOW_ID = 'e2ePollBudget001';
/** The task the workflow comments on: one comment per poll that emitted, holding the uids it emitted. */
const LEDGER_UID = '0b5e3c1a-7d2f-4e6b-9a8c-1f3d5e7b9a01';

interface MajorSetup {
	/** Seconds of the minute at which the trigger polls (one custom poll time each). */
	pollSeconds: number[];
	/** Time the service takes to answer a page of POST /tasks/query. */
	pageMs: number;
	/** What the node reads for: 90 % of getPollBudgetMs(), or of its default where n8n has none. */
	readMs: number;
	env: Record<string, string>;
}

const SETUPS: Record<N8nMajor, MajorSetup> = {
	2: {
		pollSeconds: Array.from({ length: 12 }, (_, i) => i * 5),
		pageMs: 300,
		readMs: 2700,
		env: {
			N8N_SCHEDULER_ENABLED: 'true',
			N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
			N8N_SCHEDULER_POLL_TIMEOUT: '6',
			// claims due polls every second (5 s by default), so that polls keep to their times
			N8N_SCHEDULER_EXECUTOR_INTERVAL: '1',
		},
	},
	1: { pollSeconds: [0, 30], pageMs: 2000, readMs: 27_000, env: {} },
};

function pollWorkflow(pollSeconds: number[]) {
	const credential = { id: CREDENTIAL_ID, name: CREDENTIAL_NAME };
	const trigger: WorkflowNode = {
		id: randomUUID(),
		name: 'Changed task',
		type: `${PKG}.taskBacklogPollTrigger`,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: {
				item: pollSeconds.map((second) => ({
					mode: 'custom',
					cronExpression: `${second} * * * * *`,
				})),
			},
			event: 'updatedTask',
			filters: { customFields: { field: [{ name: 'source', value: SOURCE }] } },
			options: {},
		},
		credentials: { taskBacklogApi: credential },
	};
	return workflow(WORKFLOW_ID, 'e2e: a bulk import over several polls', [
		trigger,
		codeNode('Uids', `[{ uids: $input.all().map((item) => item.json.uid).join(' ') }]`),
		ledgerNode('Ledger', credential, {
			resource: 'comment',
			operation: 'create',
			task: { __rl: true, mode: 'id', value: LEDGER_UID },
			text: '={{ $json.uids }}',
		}),
	]);
}

/** The ledger's comments, oldest first: what each poll that emitted handed the workflow. */
const ledgerOf = (stage: Stage): TaskComment[] =>
	[...stage.sim.comments.values()]
		.filter((comment) => comment.task_uid === LEDGER_UID)
		.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
const uidsOf = (comments: TaskComment[]) =>
	comments.flatMap((comment) => comment.text.split(' ').filter(Boolean));
/** The trigger's listing requests (POST /tasks/query with its source condition). */
const isListing = (r: Pick<LoggedRequest, 'method' | 'path' | 'body'>) =>
	r.method === 'POST' && r.path === '/tasks/query' && JSON.stringify(r.body ?? {}).includes(SOURCE);

/**
 * A user folder with the poll workflow, polling at `pollSeconds`, active in a started n8n; the ledger task is in the
 * service. `configure` sets the simulator up before n8n starts.
 */
async function startPolling(
	major: N8nMajor,
	pollSeconds: number[],
	opts: { configure?: (stage: Stage) => void; env?: Record<string, string>; lifetimeMs: number },
): Promise<{ stage: Stage; server: N8nServer }> {
	const stage = await setUpStage(major);
	stage.sim.seedTasks(1, () => ({ uid: LEDGER_UID, fields: { title: 'Ledger of the polls' } }));
	opts.configure?.(stage);
	await stage.folder.importWorkflow(pollWorkflow(pollSeconds));
	await timed(`n8n ${major}.x activate`, () => stage.folder.activate(WORKFLOW_ID));
	const server = await timed(`n8n ${major}.x start (ready)`, () =>
		stage.folder.start({ timeoutMs: 180_000, maxLifetimeMs: opts.lifetimeMs, env: opts.env }),
	);
	return { stage, server };
}

describe.each([2, 1] as N8nMajor[])('a bulk import in real n8n %i.x (n8n start)', (major) => {
	const setup = SETUPS[major];
	let stage: Stage;
	let server: N8nServer;

	const listings = (since = 0) => stage.sim.requests.filter((r) => r.at >= since && isListing(r));
	const ledger = () => ledgerOf(stage);
	/** Listing requests grouped by poll: a poll's pages follow each other, polls are seconds apart. */
	const byPoll = (requests: LoggedRequest[]) => {
		const polls: LoggedRequest[][] = [];
		for (const request of requests) {
			const last = polls.at(-1)?.at(-1);
			if (last && request.at - last.at < setup.pageMs + 1000) polls.at(-1)!.push(request);
			else polls.push([request]);
		}
		return polls;
	};

	afterAll(async () => {
		if (server) await timed(`n8n ${major}.x stop`, () => server.stop());
		await stage?.dispose();
	}, 120_000);

	beforeAll(async () => {
		({ stage, server } = await startPolling(major, setup.pollSeconds, {
			configure: (s) =>
				s.sim.configure({
					faults: {
						latencyMs: [setup.pageMs, setup.pageMs],
						only: (r) => r.method === 'POST' && r.path === '/tasks/query',
					},
				}),
			env: setup.env,
			lifetimeMs: 15 * 60_000,
		}));
		// The trigger polls once on activation: its baseline, nothing emitted. The import comes once it has ended.
		await timed(`n8n ${major}.x baseline poll`, () =>
			waitFor(
				'the poll trigger’s first poll, answered',
				() => {
					const last = listings().at(-1);
					return (
						last &&
						listings().every((r) => r.status !== 0) &&
						Date.now() - last.at > setup.pageMs + 1000
					);
				},
				120_000,
			),
		);
	}, 30 * 60_000);

	test(
		`a bulk import of 1,500 changes larger than one poll's budget is emitted over several polls, each change once (n8n ${major}.x${major === 2 ? ', durable scheduler' : ', the default 30 s budget'})`,
		async () => {
			const since = Date.now();
			const imported = stage.sim.seedTasks(IMPORT_SIZE, (i) => ({
				fields: { title: `Imported ${i + 1}`, source: SOURCE },
			}));
			await clockPastStamps(stage.sim);
			const uids = imported.map((task) => task.uid);

			const comments = await timed(`n8n ${major}.x import of ${IMPORT_SIZE} emitted`, () =>
				waitFor(
					`the ${IMPORT_SIZE} imported changes on the ledger`,
					() => uidsOf(ledger()).length >= IMPORT_SIZE && ledger(),
					major === 2 ? 120_000 : 150_000,
					250,
				),
			);
			// n8n 2.x: two more polls, which emit nothing. Not on 1.x, where the next poll comes 30 s later and reads the
			// import again (inside the lookback) for 27 s: the check there ends when the import has been emitted.
			if (major === 2) await new Promise((resolve) => setTimeout(resolve, 10_000));

			const polls = byPoll(listings(since));
			const reads = polls.map(
				(poll) =>
					`${poll.length} pages in ${((poll.at(-1)!.at - poll[0].at + setup.pageMs) / 1000).toFixed(1)} s`,
			);
			const perExecution = comments.map((comment) => comment.text.split(' ').length);
			log(
				`n8n ${major}.x polls after the import: ${reads.join('; ')}; emitted per execution: ${perExecution.join(', ')}`,
			);
			const emitted = uidsOf(ledger());
			expect(emitted).toHaveLength(IMPORT_SIZE);
			expect(new Set(emitted).size).toBe(IMPORT_SIZE);
			expect([...emitted].sort()).toEqual([...uids].sort());
			// More than one poll's execution carried them.
			expect(ledger().length).toBeGreaterThanOrEqual(2);
			// No poll read beyond its budget (n8n 2.x would have abandoned it: nothing it read counts).
			for (const poll of polls)
				expect(poll.at(-1)!.at - poll[0].at).toBeLessThanOrEqual(setup.readMs);
			expect(server.logs()).not.toMatch(/Poll exceeded its timeout/);
		},
		5 * 60_000,
	);

	if (major === 2)
		test(
			'changes made after the import are each emitted once: each next window holds the import again and is read over several polls (n8n 2.x, durable scheduler)',
			async () => {
				// One after the other, each last in uid order (read by its window's last slice): the first ends the
				// import's window if a poll had not yet read its end, the second comes in a window that holds the import.
				for (const [n, uid] of [
					'ffffffff-ffff-4fff-bfff-fffffffffff1',
					'ffffffff-ffff-4fff-bfff-fffffffffff2',
				].entries()) {
					const before = ledger().length;
					const since = Date.now();
					const [task] = stage.sim.seedTasks(1, () => ({
						uid,
						fields: { title: 'Changed after the import', source: SOURCE },
					}));
					await clockPastStamps(stage.sim);
					await timed(`n8n ${major}.x change ${n + 1} after the import emitted`, () =>
						waitFor(
							`change ${n + 1} after the import on the ledger`,
							() => ledger().length > before,
							60_000,
							250,
						),
					);
					log(
						`n8n ${major}.x polls until ${uid} was emitted: ${byPoll(listings(since))
							.map((poll) => `${poll.length} pages`)
							.join('; ')}`,
					);
					expect(uidsOf(ledger().slice(before))).toEqual([task.uid]);
				}
				const count = ledger().length;
				await new Promise((resolve) => setTimeout(resolve, 10_000)); // two more polls
				expect(ledger()).toHaveLength(count);
			},
			3 * 60_000,
		);
});

// n8n's default scheduler (1.x, and 2.x without the durable one) starts a poll on time even while the last one still
// runs. Here the trigger polls every 15 s and one listing takes 20 s (a slow service, or requests waiting behind a busy
// workflow's at a shared rate limit): the poll that starts meanwhile must not emit that poll's change a second time.
describe.each([2, 1] as N8nMajor[])(
	'overlapping polls in real n8n %i.x (n8n start, default scheduler)',
	(major) => {
		let stage: Stage;
		let server: N8nServer;
		const ledger = () => ledgerOf(stage);

		afterAll(async () => {
			if (server) await timed(`n8n ${major}.x stop`, () => server.stop());
			await stage?.dispose();
		}, 120_000);

		beforeAll(async () => {
			({ stage, server } = await startPolling(major, [0, 15, 30, 45], { lifetimeMs: 10 * 60_000 }));
			// The trigger polls once on activation: its baseline, nothing emitted.
			await timed(`n8n ${major}.x baseline poll`, () =>
				waitFor(
					'the poll trigger’s first poll, answered',
					() => {
						const listings = stage.sim.requests.filter(isListing);
						return listings.length > 0 && listings.every((r) => r.status !== 0);
					},
					120_000,
				),
			);
		}, 10 * 60_000);

		test(
			`a poll that starts while the last one still waits on a 20 s listing emits nothing of its own: the change is emitted once (n8n ${major}.x)`,
			async () => {
				let slowAt = 0;
				stage.sim.meanwhile(isListing, async () => {
					slowAt = Date.now();
					await new Promise((resolve) => setTimeout(resolve, 20_000));
				});
				const [task] = stage.sim.seedTasks(1, () => ({
					uid: 'ffffffff-ffff-4fff-bfff-fffffffffff3',
					fields: { title: 'Changed while a poll was slow', source: SOURCE },
				}));
				await clockPastStamps(stage.sim);
				await timed(`n8n ${major}.x change emitted (one poll slow)`, () =>
					waitFor('the change on the ledger', () => ledger().length > 0, 90_000, 250),
				);
				const pollsMeanwhile = stage.sim.requests.filter(
					(r) => isListing(r) && r.at > slowAt && r.at < slowAt + 20_000,
				).length;
				// the next poll, after the slow one
				await new Promise((resolve) => setTimeout(resolve, 17_000));
				log(
					`n8n ${major}.x overlapping polls: listings sent while the slow one waited: ${pollsMeanwhile}; ledger: ${ledger().length} comment(s)`,
				);
				expect(slowAt).toBeGreaterThan(0);
				expect(uidsOf(ledger())).toEqual([task.uid]);
			},
			3 * 60_000,
		);
	},
);
