// Types shared by the harness's modules.

export type N8nMajor = 1 | 2;

export interface N8nInstall {
	major: N8nMajor;
	/** n8n version, e.g. '2.41.1' (read from tools/n8n/n8n-<major>/package.json) */
	version: string;
	/** folder holding node_modules/n8n */
	dir: string;
	/** node binary to run n8n with (the cached Node 24) */
	nodeBin: string;
	/** `node --version` of nodeBin, e.g. 'v24.21.0' */
	nodeVersion: string;
	/** path of n8n's bin JS (run as `nodeBin n8nBin <command>`) */
	n8nBin: string;
	/** npm CLI JS of the pinned npm (run with nodeBin) */
	npmCli: string;
}

export type Log = (line: string) => void;

/** A Log that drops its lines. */
export const noop: Log = () => undefined;
