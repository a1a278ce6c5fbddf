/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, no-console -- tool code, never ships */
// The simulator's state: its options and readings, tasks, comments, users, the request log, rate-limit windows,
// scripted faults and webhook deliveries; the clock of updated_at, persistence to a file, reset and configure.
import { existsSync, promises as fsp, readFileSync, renameSync, writeFileSync } from 'node:fs';

import { USER_EPOCH, mulberry32, uuidFromName } from './helpers';
import { checkReadings, readingsFor, type Profile, type Readings } from './readings';
import type {
	Delivery,
	LoggedRequest,
	Meanwhile,
	ScriptedFault,
	SimulatorOptions,
	Task,
	TaskComment,
	User,
} from './types';
import { Webhooks } from './webhooks';

interface PersistedState {
	version: 1;
	tasks: Task[];
	comments: TaskComment[];
	users: Array<[string, string]>;
}

export class Store {
	readonly opts: SimulatorOptions;
	/** Effective readings of the spec's open points; recomputed by configure(). */
	R: Readings;
	rng: () => number;

	readonly tasks = new Map<string, Task>();
	readonly comments = new Map<string, TaskComment>();
	readonly users = new Map<string, string>(); // uid -> email, for assignees given by e-mail
	readonly requests: LoggedRequest[] = [];
	readonly deliveries: Delivery[] = [];
	readonly windows = new Map<string, { start: number; count: number }>();
	readonly scriptedFaults: ScriptedFault[] = [];
	readonly meanwhile: Meanwhile[] = [];
	readonly timers = new Set<NodeJS.Timeout>();
	readonly webhooks = new Webhooks(this.deliveries);
	stopped = false;
	hasParentLinks = false;
	private lastStampMs = 0;
	private saveTimer: NodeJS.Timeout | undefined;
	private saveSeq = 0;

	constructor(options: SimulatorOptions) {
		const opts: SimulatorOptions = {
			port: 0,
			tokens: ['test-token'],
			windowMs: 60000,
			maxPageSize: 100,
			webhooks: [],
			// The test matrix runs the same suites on each profile (jest project unit-strict sets SIM_PROFILE).
			profile: (process.env.SIM_PROFILE as Profile | undefined) || undefined,
			...options,
		};
		// maxBatchSize has no stored default: the profile decides it unless it is set (see readingsFor).
		const readingErrors = checkReadings(opts.profile, opts.readings);
		if (readingErrors.length) throw new Error(`startSimulator: ${readingErrors.join('; ')}`);
		if (opts.readings) opts.readings = { ...opts.readings };
		this.opts = opts;
		this.R = readingsFor(opts);
		this.rng = mulberry32(opts.seed ?? (Math.random() * 2 ** 32) >>> 0);
		this.load();
	}

	// ---- time: updated_at strictly increases, so polling on updated_at never sees two changes at one instant.
	peekStamp(): number {
		return Math.max(Date.now(), this.lastStampMs + 1);
	}

	takeStamp(ms: number): string {
		this.lastStampMs = Math.max(this.lastStampMs, ms);
		return new Date(ms).toISOString();
	}

	// ---- persistence
	private snapshot(): PersistedState {
		return {
			version: 1,
			tasks: [...this.tasks.values()],
			comments: [...this.comments.values()],
			users: [...this.users.entries()],
		};
	}

	private load(): void {
		const file = this.opts.persistFile;
		if (!file || !existsSync(file)) return;
		// A corrupt file stops the start rather than being overwritten with an empty state.
		const state = JSON.parse(readFileSync(file, 'utf8')) as PersistedState;
		for (const t of state.tasks ?? []) this.tasks.set(t.uid, t);
		for (const c of state.comments ?? []) this.comments.set(c.uid, c);
		for (const [u, e] of state.users ?? []) this.users.set(u, e);
		for (const t of this.tasks.values()) {
			this.lastStampMs = Math.max(
				this.lastStampMs,
				Date.parse(t.updated_at) || 0,
				Date.parse(t.created_at) || 0,
			);
			if (t.parent_uid) this.hasParentLinks = true;
		}
	}

	saveNow(): void {
		if (!this.opts.persistFile) return;
		const tmp = `${this.opts.persistFile}.${process.pid}.${++this.saveSeq}.tmp`;
		writeFileSync(tmp, JSON.stringify(this.snapshot()));
		renameSync(tmp, this.opts.persistFile);
	}

	/** Something changed: saved (debounced) when there is a persist file. */
	changed(): void {
		if (!this.opts.persistFile || this.saveTimer || this.stopped) return;
		this.saveTimer = setTimeout(() => {
			this.saveTimer = undefined;
			const file = this.opts.persistFile;
			if (!file) return;
			// Distinct temp names: a debounced write still in flight must not collide with the final save in stop().
			const tmp = `${file}.${process.pid}.${++this.saveSeq}.tmp`;
			fsp
				.writeFile(tmp, JSON.stringify(this.snapshot()))
				.then(() => fsp.rename(tmp, file))
				.catch((e) => console.error(`simulator: cannot save ${file}: ${e.message}`));
		}, 200);
		this.saveTimer.unref();
	}

	// ---- users (made up on demand: the spec has no user endpoints)
	userFor(uid: string, role = 'agent'): User {
		return {
			uid,
			archived: false,
			role,
			email: this.users.get(uid) ?? `user.${uid.slice(0, 8)}@example.com`,
			first_name: 'Simulated',
			last_name: `User ${uid.slice(0, 8)}`,
			skills: [],
			legacy_data: {},
			created_at: USER_EPOCH,
			updated_at: USER_EPOCH,
			is_registered: true,
		};
	}

	tokenUser(token: string): string {
		return uuidFromName(`task-backlog-simulator:user:${token}`);
	}

	// ---- webhooks
	emit(kind: string, task: Task): void {
		if (this.stopped) return;
		this.webhooks.emit(this.opts.webhooks ?? [], kind, task);
	}

	flushDeliveries(): Promise<void> {
		return this.webhooks.flush();
	}

	/** A timer that stop() clears (fault latency). */
	sleep(ms: number): Promise<void> {
		return new Promise((resolve) => {
			const t = setTimeout(() => {
				this.timers.delete(t);
				resolve();
			}, ms);
			this.timers.add(t);
		});
	}

	// ---- reset, configure, options
	/** Options as JSON: `profile`, the effective `readings`, and the overrides set one by one (`readingOverrides`). */
	jsonOptions(): Record<string, unknown> {
		const { faults, readings, ...rest } = this.opts;
		const f = faults ? { ...faults, only: faults.only ? '[function]' : undefined } : undefined;
		return {
			...rest,
			faults: f,
			profile: this.opts.profile ?? 'lenient',
			readings: { ...this.R },
			readingOverrides: { ...(readings ?? {}) },
		};
	}

	reset(): void {
		this.tasks.clear();
		this.comments.clear();
		this.users.clear();
		this.requests.length = 0;
		this.deliveries.length = 0;
		this.windows.clear();
		this.scriptedFaults.length = 0;
		this.meanwhile.length = 0;
		this.hasParentLinks = false;
		if (this.opts.seed !== undefined) this.rng = mulberry32(this.opts.seed);
		this.changed();
	}

	configure(o: Partial<SimulatorOptions>): void {
		// Readings are checked before anything changes, so a bad one leaves the options as they were.
		const errors = checkReadings(o.profile, o.readings);
		if (errors.length) throw new Error(`configure: ${errors.join('; ')}`);
		if ('requestsPerWindow' in o || 'windowMs' in o || 'tokens' in o) this.windows.clear();
		for (const [k, v] of Object.entries(o)) {
			if (k === 'port' || k === 'persistFile') continue; // fixed for the life of the server
			if (k === 'readingOverrides') continue; // output only (GET /_sim/options)
			if (k === 'readings') {
				// Merged into the current overrides; a null/undefined value drops one, `readings: null` drops them all.
				if (v === undefined || v === null) {
					delete this.opts.readings;
					continue;
				}
				const merged: Record<string, unknown> = { ...(this.opts.readings ?? {}) };
				for (const [rk, rv] of Object.entries(v as Record<string, unknown>)) {
					if (rv === undefined || rv === null) delete merged[rk];
					else merged[rk] = rv;
				}
				this.opts.readings = merged as Partial<Readings>;
				continue;
			}
			(this.opts as unknown as Record<string, unknown>)[k] = v;
		}
		if ('seed' in o && o.seed !== undefined) this.rng = mulberry32(o.seed);
		this.R = readingsFor(this.opts);
	}

	/** Stops timers and the debounced save, saves once more, lets go of the webhook connections. */
	stop(): void {
		this.stopped = true;
		for (const t of this.timers) clearTimeout(t);
		this.timers.clear();
		if (this.saveTimer) {
			clearTimeout(this.saveTimer);
			this.saveTimer = undefined;
		}
		this.saveNow();
	}
}
