// One seed decides a whole workload of the seeded simulation (harness.ts): K executions of the Task Backlog node with
// their operation, items, settings, start time and cancellation, and each item's fault. Everything here is a pure
// function of the seed and the fault families in play: the same seed gives the same workload on any machine.
import { uuidFromName } from '../../tools/simulator/simulator';
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../nodes/shared/identity';

/** A small deterministic PRNG (mulberry32): one seed, one sequence in [0, 1). */
export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** FNV-1a of the parts, in [0, 1): a decision that depends on what a request holds, not on when it came. */
export function hashUnit(...parts: Array<string | number>): number {
	let h = 0x811c9dc5;
	for (const part of parts) {
		const text = `${String(part)}\u0000`;
		for (let i = 0; i < text.length; i++) {
			h ^= text.charCodeAt(i);
			h = Math.imul(h, 0x01000193) >>> 0;
		}
	}
	// one more mixing round, so that neighbouring inputs do not give neighbouring values
	h = (h ^ (h >>> 16)) >>> 0;
	h = Math.imul(h, 0x45d9f3b) >>> 0;
	h = (h ^ (h >>> 16)) >>> 0;
	return h / 4294967296;
}

/**
 * The fault families a workload may draw from. Item families: a fault of one item, a function of its content and of
 * how many times the server has seen it. Request families: transient faults of a request, fewer than Max Attempts.
 * Settings families: what executions of one seed may differ in, or do to each other.
 */
export const FAMILIES = [
	// item: refused on every try
	'item-400-plain', // 400 "content policy violation": quotes nothing
	'item-400-quotes-value', // 400 quoting the item's title (with its marker)
	'item-400-quotes-number', // 400 quoting the item's number field
	'item-400-quotes-short', // 400 quoting the item's short (2-character) field
	'item-403-quotes-value', // 403 quoting the item's title
	'item-404-409', // 404 or 409, quoting the title or nothing
	'item-413', // 413: the item is too large for the server's body limit
	'item-422-names-index', // 422 whose detail names the item's index
	'item-500-always', // 500 on every try, quoting the title: a server crashing on the item's content
	// item: refused a few times, fewer than its execution's Max Attempts
	'item-500-transient',
	// request: transient, fewer than the Max Attempts of every execution whose items it carries
	'request-latency',
	'request-503',
	'request-reset',
	'request-429',
	'request-429-retry-after',
	// request: transient faults counted against the Max Attempts of the execution that asked for most, so fewer than
	// each innocent's but maybe not fewer than a stranger's (the stranger's own requests alone still stay under its own)
	'transient-beyond-a-strangers-max-attempts',
	// settings
	'cancel', // some executions are cancelled (n8n's Stop, a timeout) at a random moment
	'mixed-max-attempts', // executions of one seed ask for different Max Attempts (else all ask for the same)
	'mixed-batch-size', // executions of one seed have different Batch Size / Batching (else all batch alike)
	'base-url-spelling', // some executions' credential spells the same server http://LocalHost:P instead of 127.0.0.1
] as const;

export type Family = (typeof FAMILIES)[number];

export const ITEM_FAMILIES = FAMILIES.filter((family) => family.startsWith('item-'));
export const REQUEST_FAMILIES: Family[] = [
	'request-503',
	'request-reset',
	'request-429',
	'request-429-retry-after',
];

export type Operation = 'upsert' | 'create' | 'get';
export type Quote = 'value' | 'number' | 'short' | 'none';

export interface ItemFault {
	family: Family;
	status: number;
	quote: Quote;
	/** Refused on the first `times` sends of the item; Infinity: on every send. */
	times: number;
}

export interface ItemPlan {
	exec: number;
	n: number;
	/** `mk-<exec>-<n>-`: in the title and a custom field, so a leak of it is seen anywhere. */
	marker: string;
	title: string;
	/** A number only this item has (a value a message may quote). */
	amount: number;
	/** A short value (2 characters) only this execution has: what a message may quote that is too short to match. */
	code: string;
	/**
	 * A number and a short value many items have alike (a salary, a region): what two tickets refused alike quote, so
	 * that two refusals give the same message, as the issue's `fields.salary: 98000`.
	 */
	salary: number;
	region: string;
	uid: string;
	/** Upsert: the external ID the uid is derived from. */
	externalId?: string;
	/** Get: the task exists (seeded with this item's values before the executions start); else a 404. */
	exists?: boolean;
	fault?: ItemFault;
}

export interface ExecPlan {
	exec: number;
	op: Operation;
	items: ItemPlan[];
	maxAttempts: number;
	retryDelayMs: number;
	batching: boolean;
	batchSize: number;
	continueOnFail: boolean;
	shareRequests: boolean;
	/** When it starts, in ms after the seed's first execution. */
	startAtMs: number;
	/** Cancelled this long after it started (undefined: never). */
	cancelAfterMs?: number;
	/** The credential spells the server's host `LocalHost` (base-url-spelling). */
	localhost: boolean;
}

export interface Workload {
	seed: number;
	families: Family[];
	/** The token's limit per window, at the server and in the credential. */
	limit: number;
	windowMs: number;
	/**
	 * Every request of the shared phase takes this long at the server, as over a real network: what other executions
	 * ask for meanwhile waits for the next turn, so executions share requests (an in-process server answers at once).
	 */
	latencyMs: number;
	/** Chance that a request gets a transient fault (within its budget). */
	requestFaultRate: number;
	execs: ExecPlan[];
}

export interface WorkloadOptions {
	families: readonly Family[];
	/** Executions at most (1 to maxExecs). */
	maxExecs: number;
	/** Items per execution at most (default 20). */
	maxItems?: number;
}

/** The short value of an execution: '¤' and a CJK character, which nothing else the node or server says holds. */
export const shortCode = (exec: number) => `¤${String.fromCharCode(0x4e00 + exec)}`;
/** The number of an item: 9 digits, unique per item, decodable back (amountOwner). */
export const amountOf = (exec: number, n: number) => 900_000_000 + exec * 1000 + n * 10 + 7;
export const markerOf = (exec: number, n: number) => `mk-${exec}-${n}-`;

const STATUS_OF: Partial<Record<Family, number[]>> = {
	'item-400-plain': [400],
	'item-400-quotes-value': [400],
	'item-400-quotes-number': [400],
	'item-400-quotes-short': [400],
	'item-403-quotes-value': [403],
	'item-404-409': [404, 409],
	'item-413': [413],
	'item-422-names-index': [422],
	'item-500-always': [500],
	'item-500-transient': [500],
};

const QUOTE_OF: Partial<Record<Family, Quote[]>> = {
	'item-400-plain': ['none'],
	'item-400-quotes-value': ['value'],
	'item-400-quotes-number': ['number'],
	'item-400-quotes-short': ['short'],
	'item-403-quotes-value': ['value'],
	'item-404-409': ['value', 'none'],
	'item-413': ['none'],
	'item-422-names-index': ['value'],
	'item-500-always': ['value'],
	'item-500-transient': ['value', 'none'],
};

export function makeWorkload(seed: number, options: WorkloadOptions): Workload {
	// Two sequences: `rng` decides the workload's shape (executions, items, settings, start times), `frng` the faults.
	// The shape draws the same values whatever the families, so a seed has the same executions under any families,
	// and a family only adds its faults.
	const rng = mulberry32(seed);
	const frng = mulberry32(seed ^ 0x5bd1e995);
	const pick = <T>(values: readonly T[], from = rng): T =>
		values[Math.floor(from() * values.length)];
	const int = (lo: number, hi: number, from = rng) => lo + Math.floor(from() * (hi - lo + 1));
	const has = (family: Family) => options.families.includes(family);
	// A seed draws its item faults from one to three families, so that faults alike meet in one request.
	const itemFamilies = ITEM_FAMILIES.filter(has)
		.map((family) => ({ family, order: hashUnit(seed, family) }))
		.sort((a, b) => a.order - b.order)
		.slice(0, 1 + Math.floor(frng() * 3))
		.map(({ family }) => family);

	// Mostly small seeds, some large: K skewed towards 1..maxExecs/3.
	const k = 1 + Math.floor(rng() ** 1.7 * options.maxExecs);
	const itemFaultRate = pick([0, 0.05, 0.1, 0.2, 0.3], frng);
	const requestFaultRate = pick([0.05, 0.15, 0.3], frng);
	const sameMaxAttempts = int(2, 5);
	const sameBatchSize = pick([5, 10, 20, 100]);
	const workload: Workload = {
		seed,
		families: [...options.families],
		limit: pick([40, 60, 100]),
		windowMs: 1000,
		latencyMs: pick([10, 30, 60, 100]),
		requestFaultRate: REQUEST_FAMILIES.some(has) ? requestFaultRate : 0,
		execs: [],
	};
	for (let exec = 0; exec < k; exec++) {
		const op: Operation = pick(['upsert', 'upsert', 'upsert', 'create', 'create', 'get']);
		const count = 1 + Math.floor(rng() ** 2 * (options.maxItems ?? 20));
		const ownMaxAttempts = int(1, 5);
		const maxAttempts = has('mixed-max-attempts') ? ownMaxAttempts : sameMaxAttempts;
		const cancel = rng() < 0.15;
		const cancelAfterMs = int(0, 300);
		const localhost = rng() < 0.5;
		const batching = rng() < 0.85;
		const batchSize = pick([1, 2, 3, 5, 8, 10, 20, 100]);
		const mixedBatches = has('mixed-batch-size');
		const plan: ExecPlan = {
			exec,
			op,
			items: [],
			maxAttempts,
			retryDelayMs: int(1, 20),
			batching: mixedBatches ? batching : true,
			batchSize: mixedBatches ? batchSize : sameBatchSize,
			continueOnFail: rng() < 0.6,
			shareRequests: rng() < 0.9,
			startAtMs: Math.floor(rng() ** 2 * 300),
			cancelAfterMs: has('cancel') && cancel ? cancelAfterMs : undefined,
			localhost: has('base-url-spelling') && localhost,
		};
		for (let n = 0; n < count; n++) {
			const marker = markerOf(exec, n);
			const externalId = `${marker}ext`;
			const exists = rng() < 0.85;
			const item: ItemPlan = {
				exec,
				n,
				marker,
				title: `${marker}${pick(['Printer jams', 'VPN drops', 'Invoice VAT', 'Laptop for starter'])}`,
				amount: amountOf(exec, n),
				code: shortCode(exec),
				salary: hashUnit(seed, marker, 'salary') < 0.5 ? 98000 : 120000,
				region: hashUnit(seed, marker, 'region') < 0.5 ? 'NY' : 'EU',
				uid:
					op === 'upsert'
						? uuidV5(externalId, DEFAULT_EXTERNAL_ID_NAMESPACE)
						: uuidFromName(`simulation:${seed}:${marker}`),
				...(op === 'upsert' && { externalId }),
				...(op === 'get' && { exists }),
			};
			const [faulty, which, status, quote, times] = [frng(), frng(), frng(), frng(), frng()];
			if (itemFamilies.length && faulty < itemFaultRate) {
				const family = itemFamilies[Math.floor(which * itemFamilies.length)];
				// Get has no batches: only what a single read can get makes sense for it.
				const fits = op !== 'get' || ['item-403-quotes-value', 'item-500-always'].includes(family);
				const transient = family === 'item-500-transient';
				if (fits && !(transient && maxAttempts < 2)) {
					const statuses = STATUS_OF[family]!;
					const quotes = QUOTE_OF[family]!;
					item.fault = {
						family,
						status: statuses[Math.floor(status * statuses.length)],
						quote: quotes[Math.floor(quote * quotes.length)],
						times: transient ? 1 + Math.floor(times * (maxAttempts - 1)) : Infinity,
					};
				}
			}
			plan.items.push(item);
		}
		workload.execs.push(plan);
	}
	return workload;
}

/** One line per execution: what the seed decided (printed with a failing seed). */
export function describeWorkload(workload: Workload): string[] {
	return workload.execs.map((e) => {
		const faults = e.items
			.filter((item) => item.fault)
			.map(
				(item) =>
					`#${item.n}:${item.fault!.status}${item.fault!.times === Infinity ? '' : `x${item.fault!.times}`}/${item.fault!.quote}`,
			);
		return (
			`  exec ${e.exec}: ${e.op} ${e.items.length} item(s), start ${e.startAtMs} ms, max attempts ${e.maxAttempts}, ` +
			`${e.batching ? `batch ${e.batchSize}` : 'batching off'}, ${e.continueOnFail ? 'continue on fail' : 'stop on fail'}` +
			`${e.shareRequests ? '' : ', sharing off'}${e.cancelAfterMs !== undefined ? `, cancel at ${e.cancelAfterMs} ms` : ''}` +
			`${e.localhost ? ', LocalHost' : ''}${faults.length ? `, faults ${faults.join(' ')}` : ''}`
		);
	});
}
