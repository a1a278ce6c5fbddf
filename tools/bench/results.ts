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

/** One `n8n execute` of the scheduled-sync scenario (run-scheduled.ts). */
export interface ScheduledRun {
	label: string;
	/** which tickets the run had (run-scheduled.ts scheduledTickets) */
	phase: number;
	windowMs: number;
	ok: boolean;
	error?: string;
	/** the node's summary: 'incremental' or 'full' (the Every Row copy, which has no summary, reads everything) */
	read: string;
	requests: number;
	/** GET /tasks (the listing's pages) */
	listingGets: number;
	/** POST /tasks/query that list the source */
	listingQueries: number;
	/** POST /tasks/query of the tasks changed since the last run (a condition on updated_at) */
	changesQueries: number;
	/** POST /tasks/query counting the source's open tasks */
	countQueries: number;
	/** POST /tasks/query with `uid in [...]` */
	byUidReads: number;
	/** GET /tasks/{uid} and the like */
	otherGets: number;
	/** requests that wrote (not GET, not POST /tasks/query) */
	writeRequests: number;
	rejected429: number;
	otherErrors: number;
	/** what the run should do to the store the run before left */
	expected: { closed: number; created: number; updated: number };
	/** the node's counts per action (its summary; the Every Row copy: its rows) */
	actions: Record<string, number>;
	/** the source's tasks afterwards are exactly the run's tickets open with their titles, every other one closed */
	storeMatches: boolean;
	outputItems: number;
	/** JSON bytes of the node's output items (json and pairedItem) */
	outputBytes: number;
	/** for a full read: ceil(N / 100) + the writes in batches of 100, and floor(1.1 × that + 5) */
	requestsNeeded?: number;
	bound?: number;
	nodeMs: number;
	processWallMs: number;
	cpuMs?: number;
	peakRssMb?: number;
}

/** The scheduled sync of a backlog of N (issue 46 item 4): a bulk load, the measured run, a series, a full read. */
export interface ScheduledSyncResult {
	scenario: 'scheduled';
	major: N8nMajor;
	n: number;
	runs: ScheduledRun[];
	/** why the part failed: a run did other than its tickets ask, or the full read after the series changed something */
	failure?: string;
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
	/** absent in bench.json files written before issue 32; entries without `runs` (one run of a full read, before issue
	 * 46) are not reported */
	scheduled?: ScheduledSyncResult[];
}
