/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The command line of `npm run bench`: its flags, their defaults, and the usage `--help` prints. (`--queue` has a
// command line of its own, in queue.ts.)
import * as path from 'path';

import { fail, readArgs, type FlagKind } from '../cli/args';
import type { N8nMajor } from '../n8n/n8n';

const USAGE = `npm run bench [-- flags]: the Task Backlog node (Input Data "Map Automatically" and "Define Below") against
n8n's HTTP Request node, in a real n8n, against the simulator with its rate limit on (60 requests per window).
Prints tables; writes bench-results/bench.json and bench-results/requests-over-time.svg.

  --majors 2|1|2,1          n8n majors to run (default 2)
  --sizes 1000,10000,50000  tickets synced against the open server (batches of 100 accepted)
  --capped-sizes 10000      tickets synced against a strict-profile server whose batch limit is 50 and
                            undocumented (a longer batch is a 413 that states no limit); empty to skip
  --window-ms 1000          the rate-limit window: a time-scaled minute (default 1000)
  --http-max 10000          run the HTTP Request contender for real up to this N (once per N), and extrapolate
                            above it, linearly and marked as such
  --only auto,define,http   contenders: auto = Map Automatically, define = Define Below, http = HTTP Request
  --parts sync,capped,returnAll,overhead,scheduled
                            what to run (overhead: CPU per 1,000 items with the rate limit off; scheduled: one Sync
                            Backlog v3 workflow run again by n8n execute as a schedule runs it: a bulk load, the
                            measured run of a churned backlog at the real minute, 3 more with a small churn, a full
                            read that must change nothing, one run on a server that ignores time conditions; and
                            Return All of 10,000 on the issue 32 server, GET /tasks pages of 13, /tasks/query pages
                            of 100)
  --scheduled-sizes 10000,50000
                            backlogs the scheduled part syncs (its measured run: 1 % of titles changed, 0.5 % new,
                            0.5 % gone)
  --real-minute             also run our node at N = 10,000 with the service's real 60 s window (minutes)
  --cpu-prof                profile one 10,000-item Map Automatically run (rate limit off) with node --cpu-prof
                            on the n8n process; prints the top of the profile, keeps the .cpuprofile in --out
  --out bench-results       where to write the results
  --report a.json,b.json    run nothing: print the tables and draw the chart again from saved bench.json files
                            (e.g. one per n8n major), into --out
  --queue                   instead: the scale-out run in n8n queue mode (Redis, main + workers) at the real
                            minute; npm run bench -- --queue --help lists its flags
  --events                  instead: one-ticket executions at once, spread and alone (real minute); npm run bench
                            -- --events --help lists its flags
`;

export type ContenderKey = 'auto' | 'define' | 'http';
export type Part = 'sync' | 'capped' | 'returnAll' | 'overhead' | 'scheduled';
const PARTS: Part[] = ['sync', 'capped', 'returnAll', 'overhead', 'scheduled'];

export interface Options {
	majors: N8nMajor[];
	sizes: number[];
	cappedSizes: number[];
	/** backlogs the scheduled part syncs */
	scheduledSizes: number[];
	windowMs: number;
	httpMax: number;
	only: ContenderKey[];
	parts: Part[];
	realMinute: boolean;
	cpuProf: boolean;
	out: string;
	/** bench.json files to report on again (nothing is run) */
	reportFrom: string[];
}

const FLAGS: Record<string, FlagKind> = {
	'--majors': 'value',
	'--sizes': 'value',
	'--capped-sizes': 'value',
	'--scheduled-sizes': 'value',
	'--window-ms': 'value',
	'--http-max': 'value',
	'--only': 'value',
	'--parts': 'value',
	'--real-minute': 'switch',
	'--no-real-minute': 'switch',
	'--cpu-prof': 'switch',
	'--out': 'value',
	'--report': 'value',
};

export function parseArgs(argv: string[]): Options {
	const options: Options = {
		majors: [2],
		sizes: [1000, 10000, 50000],
		cappedSizes: [10000],
		scheduledSizes: [10000, 50000],
		windowMs: 1000,
		httpMax: 10000,
		only: ['auto', 'define', 'http'],
		parts: [...PARTS],
		realMinute: false,
		cpuProf: false,
		out: path.resolve(__dirname, '..', '..', '..', 'bench-results'),
		reportFrom: [],
	};
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--majors':
				options.majors = arg.list().map((m) => Number(m) as N8nMajor);
				break;
			case '--sizes':
				options.sizes = arg.numbers();
				break;
			case '--capped-sizes':
				options.cappedSizes = arg.numbers();
				break;
			case '--scheduled-sizes':
				options.scheduledSizes = arg.numbers();
				break;
			case '--window-ms':
				options.windowMs = arg.number();
				break;
			case '--http-max':
				options.httpMax = arg.number();
				break;
			case '--only':
				options.only = arg.list() as ContenderKey[];
				break;
			case '--parts':
				options.parts = arg.list() as Part[];
				break;
			case '--real-minute':
				options.realMinute = true;
				break;
			case '--no-real-minute': // the default; kept for older command lines
				options.realMinute = false;
				break;
			case '--cpu-prof':
				options.cpuProf = true;
				break;
			case '--out':
				options.out = path.resolve(arg.text());
				break;
			case '--report':
				options.reportFrom = arg.list().map((file) => path.resolve(file));
				break;
		}
	});
	if (options.majors.some((m) => m !== 1 && m !== 2)) fail('--majors takes 1 and/or 2', USAGE);
	if (
		[...options.sizes, ...options.cappedSizes, ...options.scheduledSizes].some(
			(n) => !Number.isInteger(n) || n < 1,
		)
	)
		fail('--sizes, --capped-sizes and --scheduled-sizes take whole numbers', USAGE);
	if (options.only.some((c) => !['auto', 'define', 'http'].includes(c)))
		fail('--only takes auto, define and/or http', USAGE);
	if (options.parts.some((p) => !PARTS.includes(p)))
		fail('--parts takes sync, capped, returnAll, overhead and/or scheduled', USAGE);
	return options;
}
