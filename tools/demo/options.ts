/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// The command line of `npm run demo`: its flags, their defaults, and the usage `--help` prints.
import * as path from 'path';

import { readArgs, type FlagKind } from '../cli/args';
import type { N8nMajor } from '../n8n/n8n';
import { DEMO_OWNER } from '../screenshot/screenshot';

const USAGE = `Usage: npm run demo -- [options]
  --once             run the ticket sync, print the summary and exit (the default when stdin is not a
                     terminal, as in CI: nobody could press Ctrl-C)
  --keep-running     leave n8n and the simulator running even when stdin is not a terminal
  --port N           n8n editor port on 127.0.0.1 (default 5678; a free port if taken; 0 = any free port)
  --sim-port N       simulator port on 127.0.0.1 (default 5680; a free port if taken; 0 = any free port)
  --n8n-major 1|2    n8n 2.x (default) or 1.x
  --reset            start the simulator from the seeded backlog again (forget earlier runs)
  --state FILE       simulator state file (default <cache>/demo/simulator-state.json)
  --screenshot [FILE]  also capture the Task Backlog node in the editor (headless Chromium) to FILE
                     (default examples/screenshot-node.png); sets up the owner ${DEMO_OWNER.email} / ${DEMO_OWNER.password}
  --hours N          stop n8n and the simulator after N hours at the latest (default 8)
`;

export interface Options {
	once: boolean;
	port: number;
	simPort: number;
	major: N8nMajor;
	reset: boolean;
	stateFile?: string;
	screenshot?: string;
	hours: number;
}

const FLAGS: Record<string, FlagKind> = {
	'--once': 'switch',
	'--keep-running': 'switch',
	'--port': 'value',
	'--sim-port': 'value',
	'--n8n-major': 'value',
	'--reset': 'switch',
	'--state': 'value',
	'--screenshot': 'optional',
	'--hours': 'value',
};

export function parseArgs(argv: string[], projectDir: string): Options {
	const opts: Options = {
		once: !process.stdin.isTTY,
		port: 5678,
		simPort: 5680,
		major: 2,
		reset: false,
		hours: 8,
	};
	readArgs(argv, { usage: USAGE, flags: FLAGS }, (arg) => {
		switch (arg.flag) {
			case '--once':
				opts.once = true;
				break;
			case '--keep-running':
				opts.once = false;
				break;
			case '--port':
				opts.port = arg.int(0, 65535);
				break;
			case '--sim-port':
				opts.simPort = arg.int(0, 65535);
				break;
			case '--n8n-major':
				opts.major = Number(arg.oneOf(['1', '2'])) as N8nMajor;
				break;
			case '--reset':
				opts.reset = true;
				break;
			case '--state':
				opts.stateFile = path.resolve(arg.nonEmpty('a file'));
				break;
			case '--screenshot':
				opts.screenshot = path.resolve(
					arg.raw ?? path.join(projectDir, 'examples', 'screenshot-node.png'),
				);
				break;
			case '--hours':
				opts.hours = arg.int(1, 24 * 7);
				break;
		}
	});
	return opts;
}
