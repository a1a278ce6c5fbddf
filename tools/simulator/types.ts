// The simulator's public types: the service's resources (tasks, comments, users, pages) as the spec shows them, and
// the simulator's own options, request log and handle.
import type { Profile, Readings } from './readings';

export type TaskStatus = 'TODO' | 'STARTED' | 'DONE';

export interface TaskFields {
	title?: string;
	url?: string;
	[key: string]: unknown;
}

export interface User {
	uid: string;
	archived: boolean;
	role: string;
	email: string;
	first_name: string;
	last_name: string;
	skills: string[];
	legacy_data: Record<string, unknown>;
	created_at: string;
	updated_at: string;
	is_registered: boolean;
}

export interface TextBlock {
	id?: string;
	type?: string;
	props?: Record<string, unknown>;
	content?: unknown[];
	children?: TextBlock[];
}

export interface Task {
	uid: string;
	archived: boolean;
	status: TaskStatus;
	legacy_data: Record<string, unknown>;
	skills: string[];
	queue_uid?: string | null;
	assignee_uid: string | null;
	participants: Record<string, unknown>;
	case_uid: string | null;
	parent_uid: string | null;
	due_at: string;
	snooze_expires_at: string | null;
	fields: TaskFields;
	metadata_form_uid: string | null;
	form_data: Record<string, unknown>;
	form_type: string | null;
	assigned_at: string | null;
	started_at: string | null;
	done_at: string | null;
	created_at: string;
	updated_at: string;
	assignee_updated_by: string | null;
	queue_updated_by: string | null;
	is_assigned_player: boolean | null;
	internal_created_at: string | null;
	internal_updated_at: string | null;
	external_created_at: string | null;
	external_updated_at: string | null;
	external_status: TaskStatus | null;
	external_status_updated_at: string | null;
	external_assignee_uid: string | null;
	queue_time: number | null;
	queue_time_business: number | null;
	work_time: number | null;
	work_time_business: number | null;
	incremental_work_time: number | null;
	incremental_work_time_business: number | null;
	resolution_time: number | null;
	resolution_time_business: number | null;
	num_children: number;
	num_children_done: number;
	// Present only when expanded.
	assignee?: User | null;
	parent?: Task | null;
	children?: Task[] | null;
	comments?: TaskComment[] | null;
}

/** Create/update body of a task (section 2.2); every property optional at schema level. */
export interface TaskBody {
	uid?: string;
	archived?: boolean;
	status?: TaskStatus;
	status_global?: 'TODO' | 'DONE' | null;
	legacy_data?: Record<string, unknown>;
	skills?: string[];
	queue_uid?: string | null;
	assignee_uid?: string | null;
	assignee_email?: string | null;
	participants?: Record<string, unknown>;
	case_uid?: string | null;
	parent_uid?: string | null;
	fields?: TaskFields;
	due_at?: string;
	snooze_expires_at?: string | null;
	metadata_form_uid?: string | null;
	form_data?: Record<string, unknown>;
	form_type?: string | null;
	assigned_at?: string | null;
	started_at?: string | null;
	done_at?: string | null;
	created_at?: string;
	updated_at?: string;
	assignee_updated_by?: string | null;
	queue_updated_by?: string | null;
	is_assigned_player?: boolean | null;
	external_created_at?: string | null;
	external_updated_at?: string | null;
	external_status?: TaskStatus | null;
	external_status_updated_at?: string | null;
	external_assignee_uid?: string | null;
}

export interface TaskComment {
	uid: string;
	archived: boolean;
	task_uid: string;
	author_uid: string | null;
	text: string;
	blocks: TextBlock[];
	created_at: string;
	updated_at: string;
	task?: Task;
	author?: User | null;
}

export interface CommentBody {
	uid?: string;
	archived?: boolean;
	task_uid?: string;
	author_uid?: string | null;
	text?: string;
	blocks?: TextBlock[];
	created_at?: string;
	updated_at?: string;
}

export interface PageMeta {
	limit: number;
	self_cursor: string;
	prev_cursor: string;
	next_cursor: string;
	total_count: number;
}

export interface Page<T> {
	items: T[];
	meta: PageMeta;
}

export interface FaultOptions {
	error5xxRate?: number;
	rateLimitRate?: number;
	retryAfterRate?: number;
	retryAfterSeconds?: number;
	resetRate?: number;
	/**
	 * Fraction of the requests that got no other fault whose work is done (and kept) before the connection is cut:
	 * the client never learns it succeeded, the nasty case for duplicates. Drawn (a seventh draw) only when set, so
	 * seeded runs without it are unchanged.
	 */
	resetAfterEffectRate?: number;
	latencyMs?: [number, number];
	/**
	 * Each request reaches the server (and its rate limit) this much later than it was sent, by a varying amount, as
	 * through a busy network or a load balancer: the server counts requests in another order and at other times than
	 * the client sent them. Not drawn from the seeded faults (their runs are unchanged).
	 */
	arrivalDelayMs?: [number, number];
	only?: (req: { method: string; path: string }) => boolean;
}

/** One scripted failure, answered to the next matching request instead of its real answer (no side effect). */
export interface ScriptedFault {
	/** HTTP status to answer, or 'reset' to destroy the socket without an answer. */
	status: number | 'reset';
	/** Seconds to put in a Retry-After header. */
	retryAfter?: number;
	body?: unknown;
	/** Do the request's work first, then cut the connection: the client never learns it succeeded. */
	afterEffect?: boolean;
	/** Which requests it applies to; any API request when absent. */
	when?: (req: { method: string; path: string }) => boolean;
}

/** A text the service refuses with a status and message of its choosing (SimulatorOptions.refuseContent). */
export interface ContentRefusal {
	text: string;
	status: number;
	/** The answer's message; absent: `<where>: forbidden content "<text>"`. */
	message?: string;
}

export interface WebhookTarget {
	url: string;
	secret?: string;
	events?: string[];
	signatureHeader?: string;
	timestampHeader?: string;
	signTimestamp?: boolean;
}

export interface SimulatorOptions {
	port?: number;
	tokens?: string[];
	requestsPerWindow?: number;
	windowMs?: number;
	/** When true, the window limiter's 429 carries `Retry-After` (seconds to the end of the window). Default false. */
	retryAfterOnLimit?: boolean;
	maxPageSize?: number;
	/** The service's body limit in bytes: a larger request body is answered 413 (default: none below 50 MB). */
	maxBodyBytes?: number;
	/** Largest batch; default 1000 under the lenient profile, 50 under strict. Overridden by `readings.maxBatchSize`. */
	maxBatchSize?: number;
	/**
	 * How to read the spec's open points: `lenient` (default, the friendly reading of each) or `strict` (the unfriendly
	 * one). See readings.ts and the table in README.md.
	 */
	profile?: Profile;
	/**
	 * Readings set one by one; each overrides the profile. `configure()` merges these into the current ones (a key set
	 * to null or undefined drops that override; `readings: undefined` drops them all).
	 */
	readings?: Partial<Readings>;
	faults?: FaultOptions;
	/**
	 * Texts the service refuses to store: a task write (POST/PUT/PATCH `/tasks`, `/tasks/{uid}`, `/tasks/batch`) whose
	 * body contains one of them is answered 400 `{"message": "<where>: forbidden content \"<text>\""}` before any
	 * side effect, `<where>` naming the first string that holds it (`items[3].fields.title` in a batch, `fields.title`
	 * in a single write), and the request is logged with fault `refused-content`. Checked after the rate limit and the
	 * faults; empty or absent: nothing refused. An entry given as a ContentRefusal answers with its own status and
	 * message instead (a plain one, one quoting a number, a 403, a 500 on every try).
	 */
	refuseContent?: Array<string | ContentRefusal>;
	/**
	 * Parts of a POST /tasks/query body the service ignores, as a server that does not filter or sort on them would:
	 * `uid` drops every condition on the field `uid` (answering as if it were absent), `sorts` drops the sorts (answers
	 * in its own order: created_at, then uid), `time` drops every condition on a time field (`updated_at`,
	 * `internal_updated_at`, `created_at`, …: a server that does not filter by time). Empty or absent: nothing ignored.
	 */
	queryIgnores?: Array<'uid' | 'sorts' | 'time'>;
	/**
	 * Fields a POST /tasks/query condition may not name, as a server without such a column: a condition on one is a
	 * 422 (`loc` the condition's `field`, `msg` `unknown field`). Empty or absent: any field may be named.
	 */
	queryUnknownFields?: string[];
	/**
	 * A test's hand in every API request (test/simulation: per-item and per-request faults decided from the request's
	 * content): called after the rate limit, the faults and refused contents, before any side effect. It answers the
	 * request (`status`, `body`, `headers`), cuts its connection (`reset`), or lets it through (undefined), after
	 * waiting `delayMs` when given. The request is logged with fault `intercepted-<status>` or `intercepted-reset`.
	 */
	intercept?: (
		req: Pick<LoggedRequest, 'method' | 'path' | 'query' | 'body'>,
	) => Intercepted | undefined;
	webhooks?: WebhookTarget[];
	persistFile?: string;
	seed?: number;
}

/** What SimulatorOptions.intercept makes of a request. */
export interface Intercepted {
	/** Wait this long first (latency). */
	delayMs?: number;
	/** Answer with this status (and body, headers), or cut the connection ('reset'); absent: let it through. */
	status?: number | 'reset';
	body?: unknown;
	headers?: Record<string, string>;
}

export interface LoggedRequest {
	method: string;
	/** Path relative to the `/api/v1` prefix (e.g. `/tasks/batch`); the full path for requests outside it. */
	path: string;
	query: Record<string, string | string[]>;
	/** HTTP status sent; 0 while in flight or when the socket was reset by a fault. */
	status: number;
	at: number;
	headers: Record<string, string | string[] | undefined>;
	body?: unknown;
	/**
	 * Injected fault: 'reset', 'error-500' | 'error-502' | 'error-503', 'rate-limit', 'reset-after-effect', or
	 * 'refused-content' (a 400 for a text of `refuseContent`).
	 */
	fault?: string;
}

export interface Delivery {
	url: string;
	status: number | 'error';
	event: unknown;
}

export interface WebhookEvent {
	type: string;
	data: { task: Task };
	info: Record<string, unknown>;
	sentAt: string;
}

/** Another caller's writes while a request is under way (Simulator.meanwhile). */
export interface Meanwhile {
	/** Which request they happen during: the next one this matches. */
	when: (req: Pick<LoggedRequest, 'method' | 'path' | 'query' | 'body'>) => boolean;
	action: () => void | Promise<void>;
}

/** A request handed to the simulator without a socket (Simulator.handle). */
export interface InProcessRequest {
	method: string;
	/** The path and query (`/api/v1/tasks?limit=5`), or a whole URL whose origin is ignored. */
	url: string;
	/** Lower-case names. */
	headers: Record<string, string | string[] | undefined>;
	/** The body as sent on the wire (JSON text), if any. */
	body?: string;
	/** Whether the client has gone (aborted): the server then does nothing more for it, as for a closed socket. */
	gone?: () => boolean;
}

/**
 * What the simulator does with a request: an answer as it would go on the wire (lower-case header names, the body's
 * text), `reset` (the connection cut) or `gone` (the client went away: nothing sent).
 */
export type InProcessOutcome =
	{ status: number; headers: Record<string, string>; body: string } | 'reset' | 'gone';

export interface Simulator {
	url: string;
	port: number;
	requests: LoggedRequest[];
	tasks: Map<string, Task>;
	comments: Map<string, TaskComment>;
	deliveries: Delivery[];
	/** Current effective options (read-only view). */
	readonly options: Readonly<SimulatorOptions>;
	configure(options: Partial<SimulatorOptions>): void;
	reset(): void;
	seedTasks(n: number, make?: (i: number) => Partial<TaskBody>): Task[];
	clearRequests(): void;
	flushDeliveries(): Promise<void>;
	/** Queues failures answered, in order, to the next matching requests (for "a 503 twice then 200"). */
	failNext(...faults: ScriptedFault[]): void;
	/**
	 * Another caller's writes while a request is under way: `action` runs once, when the next request `when` matches
	 * has passed the rate limit and the faults, and is awaited before the server reads or writes anything for it (so
	 * a listing answered then shows what `action` wrote).
	 */
	meanwhile(when: Meanwhile['when'], action: Meanwhile['action']): void;
	/**
	 * Handles one API request without a socket, exactly as the HTTP server does (log, auth, window, faults, intercept,
	 * routes): the in-process transport of the seeded simulation. The /_sim control routes are HTTP only.
	 */
	handle(request: InProcessRequest): Promise<InProcessOutcome>;
	stop(): Promise<void>;
}
