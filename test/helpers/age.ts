import type { Simulator } from '../../tools/simulator/simulator';

/** The stamps the service keeps on a task (Sync Backlog's Close Grace Period dates a task by the newest of them). */
const STAMPS = ['created_at', 'updated_at', 'internal_created_at', 'internal_updated_at'] as const;

/**
 * Moves every service stamp of the simulator's tasks (those `which` picks; default all) back by `ms`, as if they were
 * written that long ago: a backlog an earlier sync left an hour before, so this run's Close Grace Period does not keep
 * its missing tasks open. A null stamp (internal stamps under the strict reading) stays null.
 */
export function ageTasks(
	sim: Pick<Simulator, 'tasks'>,
	ms = 60 * 60_000,
	which: (task: { uid: string; fields: Record<string, unknown> }) => boolean = () => true,
): void {
	for (const task of sim.tasks.values()) {
		if (!which(task)) continue;
		const stamps = task as unknown as Record<string, unknown>;
		for (const name of STAMPS) {
			const value = stamps[name];
			if (typeof value === 'string') stamps[name] = new Date(Date.parse(value) - ms).toISOString();
		}
	}
}
