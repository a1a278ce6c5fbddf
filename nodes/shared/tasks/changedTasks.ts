import type { IDataObject } from 'n8n-workflow';

import type { BacklogClient } from '../transport/client';
import { statusOf } from '../transport/errors';
import { queryTasks, UnsoundPagingError } from './queryTasks';
import type { Stamps } from './stamps';
import { changedAt, changedSinceCondition, compareInstants, instant } from './stamps';

/** Which tasks changed since a time, and how that was asked. */
export interface ChangedSince {
	/** What selects the tasks (a /tasks/query condition, e.g. a source's custom field); the time condition is ANDed. */
	condition: IDataObject;
	/** Milliseconds since the epoch: tasks whose changedAt is at or after it. */
	sinceMs: number;
	/** How the time condition is asked (stamps.ts); `internal` asks on internal_updated_at too. */
	stamps?: Stamps;
	itemIndex?: number;
}

export type ChangedTasks =
	| {
			read: 'changes';
			/** The tasks the condition selects that changed since then, archived and not (each carries `archived`). */
			tasks: IDataObject[];
			/** How the condition was asked in the end: `refused` when internal_updated_at was refused on the way. */
			stamps?: Stamps;
	  }
	| {
			/**
			 * What changed cannot be read that way: the server answered a task changed before the time (it does not
			 * filter by time: `unfiltered`), refused the condition (`refused`: a 4xx but 401, 408, 429), or paged it
			 * out of uid order (`unsound`). The caller reads everything instead.
			 */
			read: 'unfiltered' | 'refused' | 'unsound';
			stamps?: Stamps;
	  };

/** A 4xx to a query but 401 (the run ends), 408 and 429 (retried, then failing as they came): the query is refused. */
const refused = (error: unknown) => {
	const status = statusOf(error) ?? 0;
	return status >= 400 && status < 500 && ![401, 408, 429].includes(status);
};

/**
 * A query's tasks, or its failure when the query itself cannot be read that way (refused, or paged out of uid
 * order); any other failure (a 401, a 429 or 5xx after the retries) fails the read as it came.
 */
const answered = async (read: Promise<IDataObject[]>): Promise<IDataObject[] | Error> =>
	await read.catch<IDataObject[] | Error>((error: unknown) =>
		error instanceof UnsoundPagingError || refused(error) ? (error as Error) : read,
	);

/** A task the server answered although it changed before `sinceMs`: the time condition was not applied. */
const olderThan = (sinceMs: number) => (task: IDataObject) => {
	const at = instant(changedAt(task));
	return at !== undefined && compareInstants(at, [sinceMs, 0]) < 0;
};

/**
 * The tasks a condition selects that changed since a time (spec 4.3 conditions on `updated_at`, and on
 * `internal_updated_at` where the service fills it), not archived and archived (spec 4.2: the query's `archived`
 * parameter shows one or the other), each read to its end through queryTasks.
 *
 * The spec documents neither time conditions nor their operators, so the answer is checked: a server that answers a
 * task whose stamps are all before the time does not filter by time, and the read stops at the first such page
 * (`unfiltered`), rather than reading every task of the service as "changed". A refusal of `internal_updated_at`
 * (400/422) asks on `updated_at` alone (`refused`, kept by the caller); a refusal of that too, or paging out of uid
 * order, says the changes cannot be read this way. A 401, 429 or 5xx fails as it came.
 */
export async function readChangedTasks(
	client: BacklogClient,
	read: ChangedSince,
): Promise<ChangedTasks> {
	let stamps = read.stamps;
	const old = olderThan(read.sinceMs);
	const tasks: IDataObject[] = [];
	for (const archived of [false, true]) {
		let unfiltered = false;
		const ask = async () =>
			await queryTasks(client, {
				body: {
					condition: {
						combinator: 'and',
						conditions: [read.condition, changedSinceCondition(read.sinceMs, stamps)],
					},
				},
				archived,
				itemIndex: read.itemIndex,
				stopAfter: (page) => (unfiltered = page.some(old)),
			});
		let page = await answered(ask());
		if (page instanceof Error && !(page instanceof UnsoundPagingError) && stamps === 'internal') {
			// A service that knows no internal_updated_at, or no `or`, in a query: updated_at alone, for good.
			stamps = 'refused';
			page = await answered(ask());
		}
		if (page instanceof UnsoundPagingError) return { read: 'unsound', stamps };
		if (page instanceof Error) return { read: 'refused', stamps };
		if (unfiltered) return { read: 'unfiltered', stamps };
		// The query parameter decides; a task that does not say is taken as the parameter asked.
		tasks.push(...page.map((task) => ('archived' in task ? task : { ...task, archived })));
	}
	return { read: 'changes', tasks, stamps };
}

/**
 * How many tasks a condition selects (not archived), as the server counts them: `meta.total_count` of a one-task
 * page (spec 2.5b). Undefined when the server gives no count, or refuses the condition.
 */
export async function countTasks(
	client: BacklogClient,
	condition: IDataObject,
	itemIndex?: number,
): Promise<number | undefined> {
	let total: number | undefined;
	const read = queryTasks(client, {
		body: { condition },
		maxItems: 1,
		itemIndex,
		onMeta: (meta) => {
			if (total === undefined && typeof meta?.total_count === 'number') total = meta.total_count;
		},
	});
	return (await answered(read)) instanceof Error ? undefined : total;
}
