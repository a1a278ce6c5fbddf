/**
 * Comment Create with a UID another comment already has (issue 18, "Measured" 11): only our own earlier attempt (the
 * same task, the same text) is a success; any other comment under that uid is an error, and is left as it was.
 */
import { NodeOperationError } from 'n8n-workflow';

import { byId, runBacklog, useSimulator } from '../helpers/backlog';
import type { Simulator } from '../../tools/simulator/simulator';

let sim: Simulator;
let uid: string;

useSimulator((started) => (sim = started));
beforeEach(() => {
	[{ uid }] = sim.seedTasks(1);
});

describe('Comment Create with a UID another comment already has', () => {
	const COMMENT_UID = '7d4e3b2a-1c0f-4e9d-8b7a-6f5e4d3c2b1a';
	const createComment = (task: string, text: string) =>
		runBacklog(sim, {
			resource: 'comment',
			operation: 'create',
			task: byId(task),
			text,
			additionalFields: { uid: COMMENT_UID },
		});

	it('a UID whose comment has other text is an error saying so, and that comment keeps its text', async () => {
		expect((await createComment(uid, 'First text')).error).toBeUndefined();
		const run = await createComment(uid, 'Second text');
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toContain(
			`a comment with the UID ${COMMENT_UID} already exists with other text`,
		);
		expect((run.error as NodeOperationError).description).toMatch(
			/UID empty .* or use Comment › Update/,
		);
		expect(run.json).toEqual([]);
		expect(sim.comments.get(COMMENT_UID)!.text).toBe('First text');
	});

	it('a UID whose comment is on another task is an error saying so (POST over a taken uid answered 409)', async () => {
		// Only this reading: a server that overwrites on such a POST does it before anything can be seen, as no endpoint
		// finds a comment by uid alone (docs/spec-open-points.md).
		sim.configure({ readings: { postExisting: 'conflict' } });
		const [other] = sim.seedTasks(1);
		expect((await createComment(other.uid, 'Same text')).error).toBeUndefined();
		const run = await createComment(uid, 'Same text');
		expect(run.error).toBeInstanceOf(NodeOperationError);
		expect(run.error!.message).toContain('already exists on another task');
		expect(sim.comments.get(COMMENT_UID)!.task_uid).toBe(other.uid);
	});

	it('the same UID, task and text (our own earlier attempt) is a success returning that comment', async () => {
		const first = await createComment(uid, 'Once');
		const again = await createComment(uid, 'Once');
		expect(again.error).toBeUndefined();
		expect(again.json).toEqual(first.json);
	});
});
