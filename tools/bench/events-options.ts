/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The command line of `npm run bench -- --events` (issue 19): its flags, their defaults, and the usage `--help` prints.
import * as path from 'path';

import { fail, readArgs, type FlagKind } from '../cli/args';
import type { N8nMajor } from '../n8n/n8n';

export const EVENTS_USAGE = `npm run bench -- --events [flags]: one-ticket executions (Webhook → create or update one task),
in a real n8n (regular mode), against the simulator at 60 requests per window with its undocumented batch limit of 50.
Latency is from an event's webhook call to its task being stored. Prints a table; writes <out>/events.json.

  --majors 2|1|2,1             n8n majors to run (default 2)
  --events-only ours,http,baseline
                               contenders: ours = this package (examples/create-and-forget.json), http = Webhook →
                               HTTP Request PUT /tasks/{uid} (Retry On Fail, n8n's defaults), baseline = the same
                               workflow as ours on the package built from --events-baseline (default: all three)
  --events-at-once 300         events sent at once (0: skip)
  --events-spread 1000         events sent evenly over --events-spread-seconds (0: skip)
  --events-spread-seconds 300
  --events-lone 3              lone events, each sent once the one before is stored and --events-lone-gap-ms has
                               passed, with no other traffic (0: skip)
  --events-lone-gap-ms N       (default: one window + 1 s, so each finds the window fresh)
  --events-http-max N          at most N events per run for the http contender (default: no cap)
  --events-baseline-max 60     at most N events per run for the baseline (it takes minutes per 100 events)
  --events-refused 0           also run ours on this many events at once of which five are refused on every try
                               (0: skip; 300 for the isolation issue's bursts): two side by side with the same plain
                               400 (a), a 400 naming its value, one answered 500 quoting its value (b), a 403 quoting
                               its value (c); with --events-queue-workers, in queue mode too. In regular mode
                               also a burst of the same size with (b) alone
  --events-queue-workers 0     also run ours in n8n queue mode (Redis, main + this many workers; 0: skip)
  --events-queue 1000          events sent at once in that run (0: none, the refused run only)
  --events-queue-only          only the queue-mode runs of ours (no regular-mode run)
  --events-queue-concurrency 10
                               each worker's --concurrency (n8n's default: 10)
  --events-queue-rpm 60        the credential's Requests per Minute in that run, which every worker reads as its own
                               budget: 60 (the service's limit) has the workers learn their shares from 429s; the
                               limit divided by the workers (15 for 4) is the README's setting for no 429 at all
  --events-postgres            regular-mode runs on PostgreSQL as n8n's database too (default: n8n's sqlite; queue
                               mode always runs on PostgreSQL)
  --events-baseline 5001a36^   the git ref of the baseline: built in a temporary git worktree and packed
  --window-ms 60000            the server's window and the credential's Rate Limit Window
  --out bench-results          where to write events.json
`;

export type EventsContender = 'ours' | 'http' | 'baseline';
export type EventsScenario =
	'lone' | 'atOnce' | 'spread' | 'queue' | 'refused' | 'crash' | 'queueRefused';
export const EVENTS_CONTENDERS: EventsContender[] = ['ours', 'http', 'baseline'];

export interface EventsOptions {
	majors: N8nMajor[];
	only: EventsContender[];
	atOnce: number;
	refused: number;
	spread: number;
	spreadSeconds: number;
	lone: number;
	loneGapMs?: number;
	httpMax: number;
	baselineMax: number;
	baselineRef: string;
	queueWorkers: number;
	queueEvents: number;
	queueConcurrency: number;
	queueRequestsPerMinute: number;
	/** only the queue-mode runs of ours */
	queueOnly: boolean;
	postgres: boolean;
	windowMs: number;
	out: string;
}

const FLAGS: Record<string, FlagKind> = {
	'--events': 'switch',
	'--majors': 'value',
	'--events-only': 'value',
	'--events-at-once': 'value',
	'--events-refused': 'value',
	'--events-spread': 'value',
	'--events-spread-seconds': 'value',
	'--events-lone': 'value',
	'--events-lone-gap-ms': 'value',
	'--events-http-max': 'value',
	'--events-baseline-max': 'value',
	'--events-baseline': 'value',
	'--events-queue-workers': 'value',
	'--events-queue': 'value',
	'--events-queue-concurrency': 'value',
	'--events-queue-rpm': 'value',
	'--events-postgres': 'switch',
	'--events-queue-only': 'switch',
	'--window-ms': 'value',
	'--out': 'value',
};

export function parseEventsArgs(argv: string[]): EventsOptions {
	const options: EventsOptions = {
		majors: [2],
		only: [...EVENTS_CONTENDERS],
		atOnce: 300,
		refused: 0,
		spread: 1000,
		spreadSeconds: 300,
		lone: 3,
		httpMax: Infinity,
		baselineMax: 60,
		baselineRef: '5001a36^',
		queueWorkers: 0,
		queueEvents: 1000,
		queueConcurrency: 10,
		queueRequestsPerMinute: 60,
		queueOnly: false,
		postgres: false,
		windowMs: 60_000,
		out: path.resolve(__dirname, '..', '..', '..', 'bench-results'),
	};
	readArgs(argv, { usage: EVENTS_USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--majors':
				options.majors = arg.list().map((m) => Number(m) as N8nMajor);
				break;
			case '--events-only':
				options.only = arg.list() as EventsContender[];
				break;
			case '--events-at-once':
				options.atOnce = arg.int(0, 100_000);
				break;
			case '--events-refused':
				options.refused = arg.int(0, 100_000);
				// the refused events are at indexes up to 250: a smaller run would leave some out, (b) first
				if (options.refused > 0 && options.refused < 251)
					throw new Error(
						'--events-refused: 0 (skip) or at least 251 events (the refused ones go up to index 250)',
					);
				break;
			case '--events-spread':
				options.spread = arg.int(0, 100_000);
				break;
			case '--events-spread-seconds':
				options.spreadSeconds = arg.number();
				break;
			case '--events-lone':
				options.lone = arg.int(0, 1000);
				break;
			case '--events-lone-gap-ms':
				options.loneGapMs = arg.int(0, 3_600_000);
				break;
			case '--events-http-max':
				options.httpMax = arg.int(1, 100_000);
				break;
			case '--events-baseline-max':
				options.baselineMax = arg.int(1, 100_000);
				break;
			case '--events-baseline':
				options.baselineRef = arg.nonEmpty('a git ref');
				break;
			case '--events-queue-workers':
				options.queueWorkers = arg.int(0, 16);
				break;
			case '--events-queue':
				options.queueEvents = arg.int(0, 100_000);
				break;
			case '--events-queue-concurrency':
				options.queueConcurrency = arg.int(1, 1000);
				break;
			case '--events-postgres':
				options.postgres = true;
				break;
			case '--events-queue-only':
				options.queueOnly = true;
				break;
			case '--events-queue-rpm':
				options.queueRequestsPerMinute = arg.int(1, 60);
				break;
			case '--window-ms':
				options.windowMs = arg.int(100, 3_600_000);
				break;
			case '--out':
				options.out = path.resolve(arg.text());
				break;
		}
	});
	if (options.majors.some((m) => m !== 1 && m !== 2))
		fail('--majors takes 1 and/or 2', EVENTS_USAGE);
	if (options.only.some((c) => !EVENTS_CONTENDERS.includes(c)))
		fail('--events-only takes ours, http and/or baseline', EVENTS_USAGE);
	if (!(options.spreadSeconds > 0))
		fail('--events-spread-seconds takes a positive number', EVENTS_USAGE);
	return options;
}

/** How many events a contender gets in a run of `n` (the slow contenders may be capped). */
export function eventsFor(options: EventsOptions, contender: EventsContender, n: number): number {
	if (contender === 'http') return Math.min(n, options.httpMax);
	if (contender === 'baseline') return Math.min(n, options.baselineMax);
	return n;
}
