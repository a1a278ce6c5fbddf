// What a bench run finds, per scenario: the contenders, the servers, and one result type per kind of run.
import type { N8nMajor } from '../n8n/n8n';
import type { ContenderKey } from './options';
import type { ProfileSummary } from './profile';

export type Contender = 'auto-map' | 'define-below' | 'http-request';
/** open: the lenient simulator (batches up to 1,000); capped50: the strict profile, batch limit 50, undocumented */
export type Server = 'open' | 'capped50';

export const CONTENDER: Record<ContenderKey, Contender> = {
	auto: 'auto-map',
	define: 'define-below',
	http: 'http-request',
};
export const CONTENDER_NAME: Record<Contender, string> = {
	'auto-map': 'Task Backlog, Map Automatically',
	'define-below': 'Task Backlog, Define Below',
	'http-request': 'HTTP Request node',
};

export interface SyncResult {
	scenario: 'sync';
	major: N8nMajor;
	contender: Contender;
	server: Server;
	n: number;
	windowMs: number;
	/** measured, or scaled up from a smaller real run */
	extrapolatedFrom?: number;
	ok: boolean;
	error?: string;
	requests: number;
	/** requests that wrote (not GET, not POST /tasks/query) */
	writeRequests: number;
	/** the least requests the job needs on this server: ceil(N / accepted batch size), or N for one PUT per item */
	requestsNeeded: number;
	rejected429: number;
	otherErrors: number;
	tasks: number;
	duplicates: number;
	missing: number;
	wrongValues: number;
	errorItems: number;
	/** n8n's own measure of the node's run */
	nodeMs: number;
	/** node start to its first request */
	prepMs: number;
	/** first request to the node's end */
	requestPhaseMs: number;
	/** ceil(requestsNeeded / 60) windows */
	floorMs: number;
	processWallMs: number;
	cpuMs?: number;
	peakRssMb?: number;
	/** seconds since the node started, per request; and those answered 429 */
	requestTimes: number[];
	rejectedTimes: number[];
}

export interface ReturnAllResult {
	scenario: 'returnAll';
	major: N8nMajor;
	/** open (pages of 100), or the server (GET /tasks pages of 13, /tasks/query pages of 100); open if absent */
	server?: 'open' | 'issue';
	ok: boolean;
	error?: string;
	tasks: number;
	items: number;
	requests: number;
	/** GET /tasks pages and POST /tasks/query pages (absent before issue 32) */
	listingGets?: number;
	queries?: number;
	rejected429: number;
	nodeMs: number;
	floorMs: number;
	processWallMs: number;
	peakRssMb?: number;
	/** the same workflow with Limit 1 instead of Return All */
	baselinePeakRssMb?: number;
	cpuMs?: number;
}

/** Sync Backlog of a churned backlog on the server (issue 32 item 5). */
export interface ScheduledSyncResult {
	scenario: 'scheduled';
	major: N8nMajor;
	n: number;
	windowMs: number;
	ok: boolean;
	error?: string;
	requests: number;
	/** GET /tasks (the listing's pages) */
	listingGets: number;
	/** GET /tasks/{uid} and the like */
	otherGets: number;
	/** POST /tasks/query that list (not `uid in [...]`) */
	listingQueries: number;
	/** POST /tasks/query with `uid in [...]`: the reads before writing */
	bulkReads: number;
	/** requests that wrote (not GET, not POST /tasks/query) */
	writeRequests: number;
	rejected429: number;
	otherErrors: number;
	/** what the churn should do */
	expected: { closed: number; created: number; updated: number };
	/** the node's output items by action */
	actions: Record<string, number>;
	/** the source's tasks after the run, those closed, tickets held by more than one task */
	tasks: number;
	closed: number;
	duplicates: number;
	/** ceil(N / 100) + the writes in batches of 50 */
	requestsNeeded: number;
	/** floor(1.1 × requestsNeeded + 5) */
	bound: number;
	nodeMs: number;
	/** ceil(requestsNeeded / 60) windows */
	floorMs: number;
	processWallMs: number;
	cpuMs?: number;
	peakRssMb?: number;
}

export interface OverheadRow {
	contender: Contender | 'set-node';
	ok: boolean;
	error?: string;
	requests: number;
	nodeMs: number;
	cpuMs?: number;
	/** CPU of the n8n process minus the same workflow with our node disabled, per 1,000 items */
	cpuSecondsPer1000?: number;
	peakRssMb?: number;
}

export interface OverheadResult {
	scenario: 'overhead';
	major: N8nMajor;
	n: number;
	/** the same workflow with our node disabled (n8n passes the items through) */
	baselineCpuMs?: number;
	rows: OverheadRow[];
}

export interface ProfileResult {
	major: N8nMajor;
	n: number;
	ok: boolean;
	error?: string;
	file?: string;
	nodeMs: number;
	/** the node's run on the profile's clock (µs) */
	window?: { startUs: number; endUs: number };
	/** the node's run only (samples between its start and end) */
	node?: ProfileSummary;
	/** the whole `n8n execute` process, start-up included */
	process?: ProfileSummary;
}

/** Everything one bench run found, as bench.json keeps it (and --report reads it back). */
export interface Results {
	sync: SyncResult[];
	returnAll: ReturnAllResult[];
	overhead: OverheadResult[];
	profiles: ProfileResult[];
	/** absent in bench.json files written before issue 32 */
	scheduled?: ScheduledSyncResult[];
}
