import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { taskFilterOptions, taskListQuery, taskMatcher } from '../TaskBacklog/actions/shared/taskFilters';
import { BacklogClient } from '../TaskBacklog/transport/client';
import type { PollEvent } from './changes';
import { baseline, compareInstants, instant, isPollState, marker, selectChanges, windowStart } from './changes';

/** Page size asked of GET /tasks; a server that clamps it is followed through its cursors all the same. */
const PAGE_SIZE = 100;

/** How far back the first poll looks for the newest change, when the server honours the time filter. */
const BASELINE_MS = 60 * 60 * 1000;

/** Manual runs ("Fetch Test Event") show this many recent tasks, looking back a day, a month, then at anything. */
const SAMPLE_SIZE = 5;
const DAY_MS = 24 * 60 * 60 * 1000;
const SAMPLE_WINDOWS_MS = [DAY_MS, 30 * DAY_MS, undefined];
const SAMPLE_MAX_ITEMS = 500;

interface Listing {
	tasks: IDataObject[];
	/** False when the listing stopped early to stay inside the poll budget. */
	complete: boolean;
}

export class TaskBacklogPollTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Backlog Poll Trigger',
		name: 'taskBacklogPollTrigger',
		icon: { light: 'file:../../icons/taskBacklog.svg', dark: 'file:../../icons/taskBacklog.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ {"newTask": "New Task", "updatedTask": "Updated Task", "closedTask": "Closed Task"}[$parameter["event"]] }}',
		description: 'Starts the workflow when tasks are created, updated or closed, by polling the Task Backlog Service',
		defaults: { name: 'Task Backlog Poll Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'taskBacklogApi', required: true }],
		properties: [
			{
				displayName: 'Trigger On',
				name: 'event',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Closed Task',
						value: 'closedTask',
						description: 'A task became DONE since the last poll (by its done_at)',
					},
					{
						name: 'New Task',
						value: 'newTask',
						description: 'A task was created since the last poll',
					},
					{
						name: 'Updated Task',
						value: 'updatedTask',
						description: 'A task was created or changed since the last poll (by its updated_at)',
					},
				],
				default: 'newTask',
			},
			{
				displayName: 'Filters',
				name: 'filters',
				type: 'collection',
				placeholder: 'Add Filter',
				default: {},
				options: taskFilterOptions.map((option) =>
					option.name === 'status'
						? { ...option, description: 'Only tasks in one of these states. Not used with Closed Task, which watches DONE tasks.' }
						: option,
				),
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Lookback (Seconds)',
						name: 'lookbackSeconds',
						type: 'number',
						typeOptions: { minValue: 0 },
						default: 60,
						description:
							'How far before the last change seen each poll looks again, to catch changes the service saved late. Changes already emitted are not emitted again.',
					},
					{
						displayName: 'Send Time Filter',
						name: 'sendTimeFilter',
						type: 'boolean',
						default: true,
						description:
							'Whether to ask the service for changes only (order_by=updated_at and updated_at_after). Turn off if the service rejects these parameters: every poll then reads all tasks, and still emits each change once.',
					},
				],
			},
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const event = this.getNodeParameter('event') as PollEvent;
		const filters = this.getNodeParameter('filters', {}) as IDataObject;
		const options = this.getNodeParameter('options', {}) as IDataObject;
		const lookbackMs = Math.max(0, Number(options.lookbackSeconds ?? 60) || 0) * 1000;
		const sendTimeFilter = options.sendTimeFilter !== false;
		// Closed Task watches DONE tasks whatever the Status filter says.
		const statuses = event === 'closedTask' ? ['DONE'] : undefined;
		const query = taskListQuery(this.getNode(), filters, statuses);
		const matches = taskMatcher(filters, statuses);
		const client = new BacklogClient(this);
		const now = Date.now();

		const list = async (afterMs: number | undefined, maxItems = Infinity, deadline = Infinity) => {
			const qs: IDataObject = { ...query };
			// Names from the one existing integration, not from the spec: the service may ignore them, so the
			// trigger filters, orders and de-duplicates on its side whatever comes back.
			if (sendTimeFilter) qs.order_by = 'updated_at';
			if (sendTimeFilter && afterMs !== undefined) qs.updated_at_after = new Date(afterMs).toISOString();
			return await listTasks(client, qs, afterMs, maxItems, deadline);
		};

		if (this.getMode() === 'manual') {
			// A sample to map fields from: recent matching tasks, whether or not they are new. The listing is
			// oldest first, so short windows come first to keep it small; the state is left alone.
			for (const windowMs of SAMPLE_WINDOWS_MS) {
				const { tasks } = await list(windowMs === undefined ? undefined : now - windowMs, SAMPLE_MAX_ITEMS);
				const sample = recent(event, tasks, matches);
				if (sample.length > 0) return [this.helpers.returnJsonArray(sample)];
			}
			return null;
		}

		const staticData = this.getWorkflowStaticData('node');
		const saved = staticData.state;
		if (!isPollState(saved, event)) {
			// First poll (or another event chosen): emit nothing, start from the newest change the service has.
			const afterMs = now - BASELINE_MS - lookbackMs;
			const { tasks } = await list(afterMs);
			const state = baseline(event, tasks, new Date(afterMs + lookbackMs).toISOString(), lookbackMs, now);
			staticData.state = state as unknown as IDataObject;
			return null;
		}

		const start = windowStart(saved.position, saved.resume ? 0 : lookbackMs);
		// 1 ms earlier: a server that reads updated_at_after as strictly-after still returns the tasks stamped
		// exactly at the window start; the duplicates are dropped by `seen`.
		const afterMs = start ? start[0] - 1 : undefined;
		const budget = typeof this.getPollBudgetMs === 'function' ? this.getPollBudgetMs() : Infinity;
		const listing = await list(afterMs, Infinity, now + budget * 0.8);
		const { emit, next } = selectChanges(saved, listing.tasks, matches, lookbackMs, now, listing.complete);
		staticData.state = next as unknown as IDataObject;
		return emit.length > 0 ? [this.helpers.returnJsonArray(emit)] : null;
	}
}

/**
 * Every page of GET /tasks from the query. Stops before the poll budget (n8n 2.x) runs out only while the
 * server demonstrably honours the order and the time filter: then the rest is what the next poll starts with.
 */
async function listTasks(
	client: BacklogClient,
	qs: IDataObject,
	afterMs: number | undefined,
	maxItems: number,
	deadline: number,
): Promise<Listing> {
	const tasks: IDataObject[] = [];
	let orderedAndFiltered = qs.order_by === 'updated_at' && qs.updated_at_after !== undefined;
	let previous = afterMs === undefined ? undefined : instant(new Date(afterMs).toISOString());
	for await (const page of client.pages({ method: 'GET', path: '/tasks', qs }, PAGE_SIZE, maxItems)) {
		for (const task of page) {
			tasks.push(task);
			const at = instant(task.updated_at);
			if (!at || (previous && compareInstants(at, previous) < 0)) orderedAndFiltered = false;
			else previous = at;
		}
		if (orderedAndFiltered && Date.now() > deadline) return { tasks, complete: false };
	}
	return { tasks, complete: true };
}

/** The newest few tasks in the event's state, for a manual run. */
function recent(event: PollEvent, tasks: IDataObject[], matches: (task: IDataObject) => boolean): IDataObject[] {
	return tasks
		.filter((task) => matches(task) && marker(event, task) !== undefined)
		.map((task) => ({ task, at: instant(task.updated_at) ?? ([0, 0] as [number, number]) }))
		.sort((a, b) => compareInstants(b.at, a.at))
		.slice(0, SAMPLE_SIZE)
		.map(({ task }) => task);
}
