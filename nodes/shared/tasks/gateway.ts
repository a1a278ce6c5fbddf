import type { IDataObject } from 'n8n-workflow';

import type { BacklogClient } from '../transport/client';
import type { Planned, WriteResult } from './batches';
import { writeAll } from './batches';
import { readTasksByUid } from './readByUid';

/**
 * How a planned write reaches the service, apart from what to write (writeTasks.ts decides that): the bulk read
 * the plan rests on, and the sending of the planned writes of one method. Two implementations: `directGateway`
 * (this execution's own requests) and the shared one (sharing/coalesce.ts: requests shared with the executions of
 * the same caller running at once in this process). Nothing in tasks/ imports the shared one.
 */
export interface TaskGateway {
	/** The current tasks of these uids, archived or not; a uid missing from the map has no task. */
	readTasks(client: BacklogClient, uids: string[]): Promise<Map<string, IDataObject>>;
	/** Sends planned writes of one method, each answered in order. */
	sendWrites(client: BacklogClient, writes: Planned[]): Promise<WriteResult[]>;
}

/** This execution's own requests: its reads, and its writes in batches of its own Batch Size. */
export const directGateway: TaskGateway = {
	readTasks: async (client, uids) => await readTasksByUid(client, uids),
	sendWrites: async (client, writes) =>
		writes.length === 0 ? [] : await writeAll(client, writes, writes[0].owner?.batchSize ?? 1),
};
