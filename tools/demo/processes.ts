/* eslint-disable @n8n/community-nodes/no-restricted-globals -- tool code, never ships */
// Everything the demo started, stopped in this order: n8n, the user folder, the simulator; on exit, on an error, and
// on SIGINT, SIGTERM and SIGHUP.
import type { N8nUserFolder } from '../n8n/n8n';
import type { Simulator } from '../simulator/simulator';
import type { DemoN8n } from './n8n-server';
import { elapsed, print, say, tilde } from './progress';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export class DemoProcesses {
	server?: DemoN8n;
	folder?: N8nUserFolder;
	sim?: Simulator;
	/** the simulator's state file, named when it stops */
	stateFile = '';
	/** ends the wait for Ctrl-C once a signal came */
	wakeUp: (reason: string) => void = () => undefined;
	private stopping?: Promise<void>;
	private firstSignal = 0;

	stopAll(): Promise<void> {
		return (this.stopping ??= (async () => {
			if (this.server) {
				say('stopping n8n ...');
				await this.server.stop().catch(() => undefined);
			}
			await this.folder?.dispose().catch(() => undefined);
			if (this.sim) {
				await this.sim.stop().catch(() => undefined); // writes the state file
				say(`simulator stopped; its state is kept in ${tilde(this.stateFile)}`);
			}
		})());
	}

	/** Stops everything and says the demo is done: its exit code. */
	async finish(): Promise<number> {
		await this.stopAll();
		say(`done in ${elapsed()}`);
		return 0;
	}

	listenForSignals() {
		for (const signal of SIGNALS) process.on(signal, this.onSignal);
	}

	/** The harness's own signal handlers remove the user folder at once; n8n must stop first (stopAll does both). */
	dropOtherSignalHandlers() {
		for (const signal of SIGNALS) {
			for (const listener of process.listeners(signal))
				if (listener !== this.onSignal) process.removeListener(signal, listener);
		}
	}

	private readonly onSignal = (signal: NodeJS.Signals) => {
		if (this.firstSignal) {
			// npm forwards the terminal's Ctrl-C to us as well: only a later, second signal means "stop now"
			if (Date.now() - this.firstSignal > 2000) {
				say(`${signal} again: killing everything now`);
				process.exit(130);
			}
			return;
		}
		this.firstSignal = Date.now();
		print();
		say(`${signal}: stopping (Ctrl-C again to kill at once) ...`);
		this.wakeUp(signal);
		void this.stopAll().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
	};
}
