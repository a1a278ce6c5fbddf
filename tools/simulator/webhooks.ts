/* eslint-disable @n8n/community-nodes/no-restricted-imports -- tool code, never ships */
// Webhook deliveries: one POST per task event and target, signed with the target's secret, kept in order per target.
import * as http from 'node:http';
import * as https from 'node:https';
import { createHmac } from 'node:crypto';

import type { Delivery, Task, WebhookEvent, WebhookTarget } from './types';

const postWebhook = (
	agent: http.Agent,
	target: WebhookTarget,
	raw: string,
	headers: Record<string, string>,
): Promise<number | 'error'> =>
	new Promise((resolve) => {
		let u: URL;
		try {
			u = new URL(target.url);
		} catch {
			resolve('error');
			return;
		}
		const mod = u.protocol === 'https:' ? https : http;
		const req = mod.request(
			u,
			{
				method: 'POST',
				headers: { ...headers, 'content-length': String(Buffer.byteLength(raw)) },
				agent: u.protocol === 'https:' ? false : agent,
				timeout: 5000,
			},
			(res) => {
				res.resume();
				res.on('end', () => resolve(res.statusCode ?? 0));
				res.on('error', () => resolve('error'));
			},
		);
		req.on('timeout', () => req.destroy(new Error('webhook timeout')));
		req.on('error', () => resolve('error'));
		req.end(raw);
	});

export class Webhooks {
	private readonly pending = new Set<Promise<void>>();
	private readonly chains = new Map<string, Promise<void>>();
	private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

	/** Each finished delivery is pushed onto `deliveries`. */
	constructor(private readonly deliveries: Delivery[]) {}

	emit(targets: WebhookTarget[], kind: string, task: Task): void {
		for (const target of targets) {
			if (target.events?.length && !target.events.includes(kind) && !target.events.includes('*'))
				continue;
			const event: WebhookEvent = {
				type: kind,
				data: { task: structuredClone(task) },
				info: {},
				sentAt: new Date().toISOString(),
			};
			const raw = JSON.stringify(event);
			const ts = String(Math.floor(Date.now() / 1000));
			const headers: Record<string, string> = {
				'content-type': 'application/json',
				'user-agent': 'task-backlog-simulator',
				'x-backlog-event': kind,
				[(target.timestampHeader ?? 'x-backlog-timestamp').toLowerCase()]: ts,
			};
			if (target.secret) {
				const signed = target.signTimestamp ? `${ts}.${raw}` : raw;
				headers[(target.signatureHeader ?? 'x-backlog-signature').toLowerCase()] =
					`sha256=${createHmac('sha256', target.secret).update(signed).digest('hex')}`;
			}
			// One chain per target keeps events in order, as a receiver would expect from a real service.
			const prev = this.chains.get(target.url) ?? Promise.resolve();
			const p: Promise<void> = prev
				.then(() => postWebhook(this.agent, target, raw, headers))
				.then((status) => {
					this.deliveries.push({ url: target.url, status, event });
				});
			this.chains.set(target.url, p);
			this.pending.add(p);
			void p.then(() => {
				this.pending.delete(p);
				if (this.chains.get(target.url) === p) this.chains.delete(target.url);
			});
		}
	}

	async flush(): Promise<void> {
		while (this.pending.size) await Promise.all([...this.pending]);
	}

	destroy(): void {
		this.agent.destroy();
	}
}
