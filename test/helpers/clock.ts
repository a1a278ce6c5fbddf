/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
import type { Simulator } from '../../tools/simulator/simulator';

/**
 * Waits until the clock has passed every stamp the simulator has given: it dates writes at least a millisecond
 * apart, so writes made at once are dated ahead of the clock. A trigger activated after this sees them as made
 * before it started, as a test that fills a backlog and then activates the trigger means (the first poll counts
 * only changes dated up to its start as the baseline). Light (no n8n-core): the end-to-end suite uses it too.
 */
export async function clockPastStamps(sim: Pick<Simulator, 'tasks'>): Promise<void> {
	let newest = 0;
	for (const task of sim.tasks.values())
		for (const stamp of [task.updated_at, task.internal_updated_at])
			if (typeof stamp === 'string') newest = Math.max(newest, Date.parse(stamp));
	// A caller may date a task ahead on purpose (a clock ahead): a few seconds of our stamps at most are waited for.
	const until = Math.min(newest, Date.now() + 5000);
	while (Date.now() <= until) await new Promise((resolve) => setTimeout(resolve, 5));
}
