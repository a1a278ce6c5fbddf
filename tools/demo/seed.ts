// What the demo's simulator starts with (when its state file does not exist yet): a backlog in which an earlier run
// of the ticket sync (examples/ticket-sync.json, source "helpdesk") left some tasks, and a few tasks of another
// source. Running the example against it shows every kind of change Sync Backlog makes:
//   HD-1001 already up to date            -> unchanged
//   HD-1002 subject and priority changed  -> updated
//   HD-1005 task was closed, ticket open  -> reopened
//   HD-0998 ticket resolved (not in input) -> closed
//   HD-1003, HD-1004 new tickets          -> created
//   two tasks of source "email"           -> not touched (another source)
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';
import type { Simulator, TaskBody } from '../simulator/simulator';

const DAY_MS = 24 * 60 * 60 * 1000;

const ticket = (id: string, title: string, priority: string, customer: string) => ({
	uid: uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE),
	fields: {
		title,
		url: `https://helpdesk.example.com/tickets/${id.replace(/^HD-/, '')}`,
		priority,
		customer,
		ticket_id: id,
		source: 'helpdesk',
	},
});

export const DEMO_SEED: Array<Partial<TaskBody>> = [
	ticket('HD-1001', 'Printer on floor 3 jams on every job', 'high', 'Acme Corp'),
	ticket('HD-1002', 'VPN drops sometimes', 'normal', 'Globex'),
	{
		...ticket('HD-1005', 'Password reset email never arrives', 'normal', 'Acme Corp'),
		status: 'DONE',
	},
	ticket('HD-0998', 'Monitor flickers after the dock update', 'normal', 'Initech'),
	{ fields: { title: 'Call Initech back about the contract renewal', source: 'email' } },
	{ fields: { title: 'Tidy up the shared inbox rules', source: 'email' }, status: 'STARTED' },
];

/**
 * Inserts the demo's tasks (created a few days ago, in this order, and not changed since); returns how many. Their
 * other stamps are moved back to their creation too: a task the service stamped within Sync Backlog's Close Grace
 * Period is kept open, not closed, and HD-0998 is the one the example closes.
 */
export function seedDemoTasks(sim: Simulator): number {
	const now = Date.now();
	const seeded = sim.seedTasks(DEMO_SEED.length, (i) => ({
		...DEMO_SEED[i],
		created_at: new Date(now - (DEMO_SEED.length - i) * DAY_MS).toISOString(),
	}));
	for (const { uid } of seeded) {
		const task = sim.tasks.get(uid)!;
		task.updated_at = task.created_at;
		if (task.internal_created_at !== null) task.internal_created_at = task.created_at;
		if (task.internal_updated_at !== null) task.internal_updated_at = task.created_at;
	}
	return DEMO_SEED.length;
}
