// The workflows one n8n major runs, imported together before the first run: one per (contender, N, credential,
// settings), made when a scenario first needs it.
import type { Json, Workflow } from '../n8n/workflows';
import * as W from '../n8n/workflows';
import { CONTENDER_NAME, type Contender } from './results';
import { BATCH_SIZE, httpContender } from './setup';

export class BenchWorkflows {
	private readonly workflows = new Map<string, Workflow>();

	constructor(
		private readonly baseUrl: string,
		/** the HTTP Request contender's credential */
		private readonly header: W.CredentialRef,
		private readonly windowMs: number,
	) {}

	/** The id of the workflow of N tickets into this contender. */
	sync(contender: Contender, n: number, credential: W.CredentialRef, settings: Json = {}): string {
		const key = `${contender}:${n}:${credential.id}:${JSON.stringify(settings)}`;
		let workflow = this.workflows.get(key);
		if (!workflow) {
			const id =
				`bench${String(this.workflows.size).padStart(3, '0')}${contender.slice(0, 4)}${String(n).padStart(5, '0')}`.slice(
					0,
					16,
				);
			const node =
				contender === 'http-request'
					? W.httpPutNode('HTTP Request', this.baseUrl, this.header, httpContender(this.windowMs))
					: W.backlogNode(
							'Task Backlog',
							credential,
							contender === 'auto-map'
								? W.autoMapParameters({ batchSize: BATCH_SIZE })
								: W.upsertParameters({ batchSize: BATCH_SIZE }),
							settings,
						);
			workflow = W.workflow(
				id,
				`bench: ${CONTENDER_NAME[contender]} ${n}${settings.disabled ? ' (disabled)' : ''} (${credential.name})`,
				[W.manualTrigger(), W.ticketsNode('Tickets', n), node],
			);
			this.workflows.set(key, workflow);
		}
		return workflow.id;
	}

	/** A workflow of its own (keyed by its id); its id. */
	add(workflow: Workflow): string {
		this.workflows.set(workflow.id, workflow);
		return workflow.id;
	}

	all(): Workflow[] {
		return [...this.workflows.values()];
	}
}
