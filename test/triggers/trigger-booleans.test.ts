/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- test code, never ships */
/**
 * Issue 44: the boolean parameters of the Task Backlog Trigger and the Task Backlog Poll Trigger are read through the
 * one reader (booleanSetting, nodes/shared/parameters.ts), as the Task Backlog node's are: an expression's text "true" or "false" is that
 * value (any case, trimmed), unset is the parameter's default, anything else an error naming the parameter.
 * Before: Drop Repeated Deliveries and Send Time Filter took "false" for on (`!== false`), Signature Covers Timestamp
 * and the Archived filter took "true" for off (`=== true`).
 */
import { randomUUID } from 'node:crypto';

import type { INodeParameters } from 'n8n-workflow';

import { TaskBacklogPollTrigger } from '../../nodes/TaskBacklogPollTrigger/TaskBacklogPollTrigger.node';
import { TaskBacklogTrigger } from '../../nodes/TaskBacklogTrigger/TaskBacklogTrigger.node';
import { startSimulator, type Simulator } from '../../tools/simulator/simulator';
import { clockPastStamps } from '../helpers/clock';
import { activePoller, postRaw, signedHeaders, useWebhookReceivers } from './harness';

const SECRET = 'whsec-booleans-4a7c';
const post = postRaw;

/** Signed over `timestamp.body`, or over the body alone. */
const signed = (raw: string, coversTimestamp = true) =>
	signedHeaders(SECRET, raw, { coversTimestamp });

const event = () =>
	JSON.stringify({
		type: 'task.completed',
		data: { task: { uid: randomUUID(), updated_at: '2024-05-01T10:00:00Z' } },
	});

const receive = useWebhookReceivers(() => new TaskBacklogTrigger());
const listen = (parameters: INodeParameters, typeVersion?: number) =>
	receive({ parameters, ...(typeVersion === undefined ? {} : { typeVersion }) });

const hmacNode: INodeParameters = {
	authentication: 'hmacSha256',
	secret: SECRET,
	signatureCoversTimestamp: true,
};

describe('Task Backlog Trigger', () => {
	it('Drop Repeated Deliveries given the text "false" by an expression delivers every repeat', async () => {
		const r = await listen({ ...hmacNode, options: { dropRepeats: '={{ "false" }}' } });
		const raw = event();
		const headers = signed(raw);
		const answers = [await post(r.url, raw, headers), await post(r.url, raw, headers)];
		expect(answers).toEqual([
			{ status: 200, body: { received: true } },
			{ status: 200, body: { received: true } },
		]);
		expect(r.executions()).toHaveLength(2);
	});

	it('Drop Repeated Deliveries given the text "TRUE" by an expression drops the repeat', async () => {
		const r = await listen({ ...hmacNode, options: { dropRepeats: '={{ " TRUE " }}' } });
		const raw = event();
		const headers = signed(raw);
		await post(r.url, raw, headers);
		const again = await post(r.url, raw, headers);
		expect(again).toEqual({ status: 200, body: { received: true, duplicate: true } });
		expect(r.executions()).toHaveLength(1);
	});

	it('Drop Repeated Deliveries given "no" by an expression fails visibly, naming the option, and starts nothing', async () => {
		const r = await listen({ ...hmacNode, options: { dropRepeats: '={{ "no" }}' } });
		const raw = event();
		const answer = await post(r.url, raw, signed(raw));
		expect(answer.status).toBe(500);
		expect(String((r.calls[0].error as Error).message)).toBe(
			'Options › Drop Repeated Deliveries is "no": it must be true or false',
		);
		expect(r.executions()).toHaveLength(0);
	});

	it('Signature Covers Timestamp given the text "true" by an expression (version 1, node parameters) verifies the signature over timestamp.body', async () => {
		const r = await listen({ ...hmacNode, signatureCoversTimestamp: '={{ "true" }}' }, 1);
		const raw = event();
		const covering = await post(r.url, raw, signed(raw, true));
		expect(covering).toEqual({ status: 200, body: { received: true } });
		// A signature over the body alone no longer passes: the timestamp is part of what is signed.
		const other = event();
		const bodyOnly = await post(r.url, other, signed(other, false));
		expect(bodyOnly.status).toBe(401);
		expect(r.executions()).toHaveLength(1);
	});
});

describe('Task Backlog Poll Trigger', () => {
	const TOKEN = 'test-token-booleans';
	let sim: Simulator;
	beforeEach(async () => {
		sim = await startSimulator({ tokens: [TOKEN] });
	});
	afterEach(async () => {
		await sim.stop();
	});

	const poller = (parameters: INodeParameters) =>
		activePoller(
			{
				nodeType: new TaskBacklogPollTrigger(),
				parameters,
				credentials: { baseUrl: sim.url, token: TOKEN, requestsPerMinute: 100000 },
			},
			{ beforeFirstPoll: () => clockPastStamps(sim) },
		);
	const listings = () =>
		sim.requests.filter(
			(request) =>
				request.path === '/tasks/query' || (request.method === 'GET' && request.path === '/tasks'),
		);

	it('Send Time Filter given the text "false" by an expression asks for no time condition', async () => {
		sim.seedTasks(3);
		const p = poller({ event: 'updatedTask', options: { sendTimeFilter: '={{ "false" }}' } });
		expect(await p.poll()).toBeNull();
		sim.clearRequests();
		await p.poll();
		expect(listings().length).toBeGreaterThan(0);
		expect(JSON.stringify(listings().map((request) => request.body ?? null))).not.toMatch(
			/updated_at/,
		);
	});

	it('the Archived filter given the text "true" by an expression asks for archived tasks', async () => {
		sim.seedTasks(2, (i) => ({ archived: i === 0 }));
		const p = poller({ event: 'newTask', filters: { archived: '={{ "true" }}' } });
		await p.poll();
		expect(listings().length).toBeGreaterThan(0);
		expect(listings().every((request) => request.query.archived === 'true')).toBe(true);
	});

	it('Send Time Filter given "maybe" by an expression is an error naming the option, before any request', async () => {
		const p = poller({ event: 'updatedTask', options: { sendTimeFilter: '={{ "maybe" }}' } });
		await expect(p.poll()).rejects.toThrow(
			'Options › Send Time Filter is "maybe": it must be true or false',
		);
		expect(listings()).toHaveLength(0);
	});
});
