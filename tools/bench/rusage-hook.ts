/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Loaded into every n8n process of a benchmark user folder with NODE_OPTIONS=--require <this file> (compiled to
// .build/tools/bench/rusage-hook.js). When the process exits it writes its own resource usage (CPU time, peak RSS =
// VmHWM) to $TASK_BACKLOG_RUSAGE_DIR/<pid>.json, so the benchmark can read what the `n8n execute` process used
// without sampling /proc. No dependencies, nothing else changes in the process.
import * as fs from 'fs';
import * as path from 'path';

const dir = process.env.TASK_BACKLOG_RUSAGE_DIR;
const startedAt = Date.now();
// The same instant on the monotonic clock (µs), which V8's CPU profiles (--cpu-prof) use: maps n8n's node start
// time (epoch ms) onto a profile's timeline.
const [hrSeconds, hrNanos] = process.hrtime();
const startedAtMonotonicUs = hrSeconds * 1e6 + hrNanos / 1e3;

if (dir) {
	process.on('exit', (code) => {
		try {
			const usage = process.resourceUsage();
			const record = {
				pid: process.pid,
				ppid: process.ppid,
				argv: process.argv.slice(1),
				exitCode: code,
				startedAt,
				startedAtMonotonicUs,
				endedAt: Date.now(),
				userCpuMs: usage.userCPUTime / 1000,
				systemCpuMs: usage.systemCPUTime / 1000,
				/** kilobytes, as getrusage(2) ru_maxrss: the peak resident set size (VmHWM) */
				maxRssKb: usage.maxRSS,
			};
			fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(record));
		} catch {
			// a benchmark aid must never change how n8n exits
		}
	});
}
