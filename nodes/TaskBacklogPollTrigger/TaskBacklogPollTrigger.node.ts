import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { booleanSetting } from '../shared/parameters';
import {
	checkFilters,
	customFieldQuery,
	labelsOf,
	needsTaskQuery,
	taskFilterOptions,
	taskMatcher,
	taskQueryCondition,
} from '../shared/tasks/filters';
import { BacklogClient } from '../shared/transport/client';
import { listTasks } from '../shared/tasks/listTasks';
import { queryTasks, refusesCondition } from '../shared/tasks/queryTasks';
import { changedSinceCondition } from '../shared/tasks/stamps';
import type { PollEvent, PollState, Stamps } from './changes';
import {
	changedAt,
	compareInstants,
	instant,
	isPollState,
	marker,
	nextStamps,
	savedByVersion010,
	selectSlice,
	windowStart,
} from './changes';
import { carryOver, endPoll, resumeState, startPoll } from './triggerMemory';

/** Page size asked of GET /tasks; a server that clamps it is followed through its cursors all the same. */
const PAGE_SIZE = 100;

/** How far back the first poll looks for the newest change, when the server honours the time filter. */
const BASELINE_MS = 60 * 60 * 1000;

/** Manual runs ("Fetch Test Event") show this many recent tasks, looking back a day, a month, then at anything. */
const SAMPLE_SIZE = 5;
const DAY_MS = 24 * 60 * 60 * 1000;
const SAMPLE_WINDOWS_MS = [DAY_MS, 30 * DAY_MS, undefined];
const SAMPLE_MAX_ITEMS = 500;

/**
 * A poll's time to read, where n8n does not say (n8n 1.x has no getPollBudgetMs). n8n 2.x's durable scheduler
 * abandons a poll after 45 s and tells the node 36 s.
 */
export const DEFAULT_POLL_BUDGET_MS = 30 * 1000;

/** Share of the budget spent reading; the rest is left for the node and n8n to finish the poll. */
const BUDGET_SHARE = 0.9;

function pollBudgetMs(context: IPollFunctions): number {
	// Typed as always there, but n8n 1.x's PollContext does not have it.
	const get = (context as Partial<Pick<IPollFunctions, 'getPollBudgetMs'>>).getPollBudgetMs;
	const value = typeof get === 'function' ? Number(get.call(context)) : NaN;
	return Number.isFinite(value) && value > 0 ? value : DEFAULT_POLL_BUDGET_MS;
}

export class TaskBacklogPollTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Backlog Poll Trigger',
		name: 'taskBacklogPollTrigger',
		icon: {
			light: 'file:../../icons/taskBacklog.svg',
			dark: 'file:../../icons/taskBacklog.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{ {"newTask": "New Task", "updatedTask": "Updated Task", "closedTask": "Closed Task"}[$parameter["event"]] }}',
		description:
			'Starts the workflow when tasks are created, updated or closed, by polling the Task Backlog Service',
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
						description:
							'A task became DONE since the last poll: a DONE task changed since then (by its updated_at) whose done_at was not emitted before',
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
						? {
								...option,
								description:
									'Only tasks in one of these states. Not used with Closed Task, which watches DONE tasks.',
							}
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
							'Whether to ask the service for changes only (POST /tasks/query with a condition on updated_at). Turn off if the service rejects that condition: every poll then reads all tasks, and still emits each change once.',
					},
				],
			},
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const event = this.getNodeParameter('event') as PollEvent;
		const filters = this.getNodeParameter('filters', {}) as IDataObject;
		checkFilters(this.getNode(), filters, labelsOf(taskFilterOptions));
		const options = this.getNodeParameter('options', {}) as IDataObject;
		// Both booleans through the one reader: an expression's "false" is off (Send Time Filter took it for on), its
		// "true" on (Archived took it for off); unset is the default; anything else an error naming the parameter.
		const readBoolean = (value: unknown, label: string, fallback: boolean) =>
			booleanSetting(this.getNode(), value, {
				label,
				fallback,
				description: `Set ${label} to true or false, or make its expression give true or false (or the text "true" or "false").`,
			});
		// Read once, here: the filter helpers check `archived === true`.
		if ('archived' in filters)
			filters.archived = readBoolean(filters.archived, 'Filters › Archived', false);
		const lookbackMs = Math.max(0, Number(options.lookbackSeconds ?? 60) || 0) * 1000;
		const sendTimeFilter = readBoolean(options.sendTimeFilter, 'Options › Send Time Filter', true);
		// Closed Task watches DONE tasks whatever the Status filter says.
		const statuses = event === 'closedTask' ? ['DONE'] : undefined;
		const matches = taskMatcher(filters, statuses);
		const client = new BacklogClient(this);
		const now = Date.now();
		// How the window's time condition is asked (PollState.stamps); a manual run asks on updated_at.
		let stamps: Stamps | undefined;

		const list = async (
			afterMs: number | undefined,
			maxItems = Infinity,
			slice: { afterUid?: string; stopAfter?: (page: IDataObject[]) => boolean } = {},
		): Promise<IDataObject[]> => {
			// The spec gives GET /tasks no parameter for time, status or assignee (a server may read such a name as a
			// custom field and return nothing), so those go to POST /tasks/query as conditions. Whatever comes back,
			// the trigger filters and de-duplicates on its side.
			const extra: IDataObject[] =
				sendTimeFilter && afterMs !== undefined ? [changedSinceCondition(afterMs, stamps)] : [];
			// The next slice of a window read over several polls: the query pages in uid order.
			if (slice.afterUid !== undefined)
				extra.push({ field: 'uid', operator: '>', value: slice.afterUid });
			if (extra.length > 0 || needsTaskQuery(filters, statuses)) {
				const body = { condition: taskQueryCondition(this.getNode(), filters, statuses, extra) };
				return await queryTasks(client, {
					body,
					archived: filters.archived === true,
					maxItems,
					stopAfter: slice.stopAfter,
				});
			}
			// GET /tasks (Send Time Filter off, custom-field filters only) is read whole: its order is not the uid's. Read
			// whole, it goes through the listing that picks the endpoint carrying the most tasks per request.
			const qs = customFieldQuery(this.getNode(), filters);
			if (maxItems !== Infinity)
				return await client.list({ method: 'GET', path: '/tasks', qs }, PAGE_SIZE, maxItems);
			const condition = taskQueryCondition(
				this.getNode(),
				{ customFields: filters.customFields },
				[],
			);
			return await listTasks(client, {
				qs,
				query: Object.keys(condition).length > 0 ? { condition } : {},
			});
		};

		if (this.getMode() === 'manual') {
			// A sample to map fields from: recent matching tasks, whether or not they are new. The listing is
			// oldest first, so short windows come first to keep it small; the state is left alone.
			for (const windowMs of SAMPLE_WINDOWS_MS) {
				const tasks = await list(
					windowMs === undefined ? undefined : now - windowMs,
					SAMPLE_MAX_ITEMS,
				);
				const sample = recent(event, tasks, matches);
				// The service may echo the token in any answer: the output never carries it.
				if (sample.length > 0)
					return [this.helpers.returnJsonArray(await client.redactOutput(sample))];
			}
			return null;
		}

		const key = `${this.getWorkflow().id ?? ''}:${this.getNode().id ?? this.getNode().name}`;
		// The last poll of this trigger still runs: it emits what this one would.
		if (!startPoll(key, now)) return null;
		try {
			const staticData = this.getWorkflowStaticData('node');
			// Tasks carry internal_updated_at or not: a few from GET /tasks tell, when the window's tasks could not.
			const probe = async () =>
				await client.list({ method: 'GET', path: '/tasks' }, STAMPS_PROBE_SIZE, STAMPS_PROBE_SIZE);
			// Where n8n did not save what the last poll left (it emitted nothing), its state from this process.
			const resumed = resumeState(key, staticData.state);
			const saved = resumed.state;
			let state: PollState;
			if (!isPollState(saved, event)) {
				// First poll (or another event chosen): emit nothing, start from the newest change the service has.
				const afterMs = now - BASELINE_MS - lookbackMs;
				state = {
					event,
					position: new Date(afterMs + lookbackMs).toISOString(),
					seen: {},
					pass: { afterMs, startedMs: now, baseline: true },
				};
			} else if (saved.pass && typeof saved.pass.startedMs === 'number') {
				// The window the last poll did not finish: its next slice.
				state = saved;
			} else {
				const start = windowStart(saved.position, lookbackMs);
				// 1 ms earlier: a server that reads updated_at_after as strictly-after still returns the tasks stamped
				// exactly at the window start; the duplicates are dropped by `seen`.
				state = {
					...saved,
					pass: {
						afterMs: start ? start[0] - 1 : undefined,
						startedMs: now,
						...(savedByVersion010(saved) && { seenByUpdatedAt: true }),
					},
				};
			}
			const pass = state.pass!;
			stamps = state.stamps;

			// Read until the next page would not end within the poll's budget (n8n 2.x abandons a poll that overruns,
			// and nothing it read counts): at least one page a poll, so every poll gets further. Stopping is only sound
			// when the pages come in uid order, as asked; otherwise the window is read whole, as before.
			const deadline = now + pollBudgetMs(this) * BUDGET_SHARE;
			let lastUid = pass.uid;
			let ordered = true;
			let pageStart = now;
			let longestPage = 0;
			let stopped = false;
			const stopAfter = (page: IDataObject[]) => {
				for (const task of page) {
					const uid = String(task.uid);
					if (lastUid !== undefined && !(uid > lastUid)) ordered = false;
					lastUid = uid;
				}
				const at = Date.now();
				longestPage = Math.max(longestPage, at - pageStart);
				pageStart = at;
				stopped = ordered && page.length > 0 && at + longestPage > deadline;
				return stopped;
			};
			let pages = 0;
			const slice = {
				afterUid: pass.uid,
				stopAfter: (page: IDataObject[]) => {
					pages++;
					return stopAfter(page);
				},
			};
			const read = list(pass.afterMs, Infinity, slice);
			const tasks = await read.catch((error: unknown) => {
				// A service that knows no internal_updated_at, or no `or`, in a query: updated_at alone, for good.
				if (stamps !== 'internal' || pages > 0 || !refusesCondition(error)) return read;
				stamps = 'refused';
				return list(pass.afterMs, Infinity, slice);
			});
			const { emit, next } = selectSlice(state, tasks, matches, lookbackMs, now, !stopped);
			const decided = next.pass ? stamps : await nextStamps(stamps, tasks, probe);
			if (decided === 'internal' && stamps !== 'internal' && !pass.baseline) {
				// This window asked on updated_at alone: the next one reads it again, for changes a caller dated before it.
				next.position = state.position;
				next.seen = { ...state.seen, ...next.seen };
			}
			if (decided) next.stamps = decided;
			staticData.state = next as unknown as IDataObject;
			if (emit.length > 0 && !pass.baseline)
				return [this.helpers.returnJsonArray(await client.redactOutput(emit))];
			carryOver(key, resumed.from, next);
			return null;
		} finally {
			endPoll(key, now);
			// The poll is over: its hold on the token's rate limiter ends (a manual run's lapses with its client).
			client.done();
		}
	}
}

/** Tasks read to tell whether the service fills internal_updated_at, when a window's tasks could not. */
const STAMPS_PROBE_SIZE = 5;

/** The newest few tasks in the event's state, for a manual run. */
function recent(
	event: PollEvent,
	tasks: IDataObject[],
	matches: (task: IDataObject) => boolean,
): IDataObject[] {
	return tasks
		.filter((task) => matches(task) && marker(event, task) !== undefined)
		.map((task) => ({ task, at: instant(changedAt(task)) ?? ([0, 0] as [number, number]) }))
		.sort((a, b) => compareInstants(b.at, a.at))
		.slice(0, SAMPLE_SIZE)
		.map(({ task }) => task);
}
