// Harness around a real n8n, installed from the npm registry into a cache folder outside the clone and run headless.
// Used by the end-to-end suite, the demo and the benchmark. The pinned versions are the newest 2.x and 1.x on the
// registry when they were chosen; the time limits were measured on this project's 2-core machine.
//
// Rules kept here: every child process has a time limit, runs in a process group of its own and is killed (the whole
// group) on stop/dispose and when this process exits; servers listen on 127.0.0.1 on free ports.
//
// The modules: install.ts (the cache, Node 24, the pinned n8n installs, packing this package), userFolder.ts (a user
// folder: import, execute, start and stop a server), processes.ts (spawning with time limits, process groups,
// cleanup at exit), helpers.ts; queue.ts and redis.ts (queue mode), workflows.ts (workflow JSON). This file is the
// entry point of the first four.
export type { Log, N8nInstall, N8nMajor } from './types';
export { disposeAll, killGroup, spawnTracked, type SpawnOptions, type Tracked } from './processes';
export { freePort } from './helpers';
export {
	NODE_VERSION,
	NPM_VERSION,
	cacheRoot,
	describeVersions,
	ensureN8n,
	ensureNode24,
	packPackage,
} from './install';
export { N8nUserFolder, parseRunOutput, type ExecuteResult, type N8nServer } from './userFolder';
