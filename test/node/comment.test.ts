import { byId, runBacklog, sent, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;

useSimulator((started) => (sim = started), { maxPageSize: 3 });

/** Comment Create on a task, with this text (an expression or not). */
const commentCreate = (taskUid: string, text: string) => ({
	resource: 'comment',
	operation: 'create',
	task: byId(taskUid),
	text,
});

describe('Comment', () => {
	it('comments round-trip: create, get, list across pages, update', async () => {
		const [task] = sim.seedTasks(1);
		const created = await runBacklog(
			sim,
			{ resource: 'comment', operation: 'create', task: byId(task.uid), text: '={{ $json.text }}' },
			{ items: [1, 2, 3, 4, 5].map((n) => ({ text: `Comment ${n}\n\nSecond paragraph` })) },
		);
		expect(created.error).toBeUndefined();
		const first = created.json[0];
		expect(first).toMatchObject({ task_uid: task.uid, text: 'Comment 1\n\nSecond paragraph' });
		expect(
			(first.blocks as Array<{ type: string; content: Array<{ text: string }> }>).map((block) => [
				block.type,
				block.content[0].text,
			]),
		).toEqual([
			['paragraph', 'Comment 1'],
			['paragraph', 'Second paragraph'],
		]);

		const got = await runBacklog(sim, {
			resource: 'comment',
			operation: 'get',
			task: byId(task.uid),
			commentUid: first.uid,
			options: { expand: ['author', 'task'] },
		});
		expect(got.json[0]).toMatchObject({ uid: first.uid, task: { uid: task.uid } });

		const listed = await runBacklog(sim, {
			resource: 'comment',
			operation: 'getAll',
			task: byId(task.uid),
			returnAll: true,
		});
		expect(listed.json.map((comment) => comment.text)).toHaveLength(5);
		expect(sent(sim, 'GET', `/tasks/${task.uid}/comments`)).toHaveLength(2);

		const updated = await runBacklog(sim, {
			resource: 'comment',
			operation: 'update',
			task: byId(task.uid),
			commentUid: first.uid,
			text: 'Edited',
		});
		expect(updated.json[0]).toMatchObject({ uid: first.uid, text: 'Edited' });
		expect(sim.comments.get(String(first.uid))!.text).toBe('Edited');
	});

	it('a comment create whose answer was lost is not doubled by the retry', async () => {
		const [task] = sim.seedTasks(1);
		// The first POST is written, then its connection dies before the answer: the retry finds the comment there.
		sim.failNext({
			status: 'reset',
			afterEffect: true,
			when: (request) => request.method === 'POST',
		});
		const run = await runBacklog(sim, {
			resource: 'comment',
			operation: 'create',
			task: byId(task.uid),
			text: 'Once',
		});
		expect(run.error).toBeUndefined();
		expect([...sim.comments.values()].filter((comment) => comment.text === 'Once')).toHaveLength(1);
	});

	it('Comment Create run again in the same execution (Retry On Fail) finds the comments it added: one per item, no error', async () => {
		const [task] = sim.seedTasks(1);
		const parameters = commentCreate(task.uid, '={{ $json.text }}');
		const items = [1, 2, 3].map((n) => ({ text: `Comment ${n}` }));
		// The third POST fails: the run fails, and n8n runs the node again with all three items.
		sim.failNext({
			status: 400,
			body: { message: 'refused once' },
			when: (req) => req.method === 'POST' && sim.comments.size === 2,
		});
		const first = await runBacklog(sim, parameters, { items, executionId: 'execution-9' });
		expect(first.error).toBeDefined();
		const again = await runBacklog(sim, parameters, { items, executionId: 'execution-9' });
		expect(again.error).toBeUndefined();
		expect(again.json.map((json) => json.text)).toEqual(['Comment 1', 'Comment 2', 'Comment 3']);
		expect([...sim.comments.values()].map((comment) => comment.text).sort()).toEqual([
			'Comment 1',
			'Comment 2',
			'Comment 3',
		]);
	});

	it('Comment Create inside Loop Over Items (each batch a run of the node) adds a comment per run, even with the same text', async () => {
		const [task] = sim.seedTasks(1);
		const parameters = commentCreate(task.uid, 'Same');
		for (const runIndex of [0, 1, 2]) {
			const run = await runBacklog(sim, parameters, { executionId: 'execution-12', runIndex });
			expect(run.error).toBeUndefined();
		}
		expect(sim.comments.size).toBe(3);
	});

	it('Comment Create in another execution adds new comments, even with the same text', async () => {
		const [task] = sim.seedTasks(1);
		const parameters = commentCreate(task.uid, 'Same');
		const first = await runBacklog(sim, parameters, { executionId: 'execution-10' });
		const second = await runBacklog(sim, parameters, { executionId: 'execution-11' });
		expect(first.error).toBeUndefined();
		expect(second.error).toBeUndefined();
		expect(second.json[0].uid).not.toBe(first.json[0].uid);
		expect(sim.comments.size).toBe(2);
	});

	it('Comment Create with a UID another comment holds leaves that comment as it was (whether POST over a taken uid is a 409 or a replace)', async () => {
		const [task] = sim.seedTasks(1);
		const create = (text: string, uid?: string) =>
			runBacklog(sim, {
				resource: 'comment',
				operation: 'create',
				task: byId(task.uid),
				text,
				additionalFields: uid ? { uid } : {},
			});
		const theirs = await create('Their comment');
		const uid = String(theirs.json[0].uid);
		const mine = await create('Mine', uid);
		expect(mine.error?.message).toMatch(/already exists with other text; nothing was written/);
		expect(sim.comments.get(uid)!.text).toBe('Their comment');
		// Our own earlier comment under the given uid (a re-run) is a success, with nothing written again.
		const again = await create('Their comment', uid);
		expect(again.error).toBeUndefined();
		expect(sim.comments.size).toBe(1);
	});

	it('Blocks given as JSON are sent as they are', async () => {
		const [task] = sim.seedTasks(1);
		const blocks = [
			{
				id: 'h',
				type: 'heading',
				props: { level: 1 },
				content: [{ type: 'text', text: 'Hi', styles: {} }],
				children: [],
			},
		];
		const run = await runBacklog(sim, {
			resource: 'comment',
			operation: 'create',
			task: byId(task.uid),
			text: 'Hi',
			additionalFields: { blocks: JSON.stringify(blocks) },
		});
		expect(run.json[0].blocks).toEqual(blocks);
	});
});
