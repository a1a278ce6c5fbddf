/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never ships */
// A scripted stand-in for an OpenAI-compatible chat completions endpoint (POST /chat/completions), on 127.0.0.1,
// so that n8n's AI Agent can run without network access. It is not a model: each answer is decided by `script`
// from the request (the tools offered and the messages so far). Plain and streamed (SSE) answers are supported.
import * as http from 'http';
import type { AddressInfo } from 'net';

export interface ChatTool {
	type: 'function';
	function: { name: string; description?: string; parameters?: unknown };
}
export interface ChatMessage {
	role: string;
	content?: unknown;
	tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
	tool_call_id?: string;
}
export interface ChatRequest {
	model?: string;
	messages: ChatMessage[];
	tools?: ChatTool[];
	stream?: boolean;
}
export type ScriptedAnswer =
	{ content: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

export interface FakeOpenAi {
	url: string;
	requests: ChatRequest[];
	stop(): Promise<void>;
}

export async function startFakeOpenAi(
	script: (request: ChatRequest, turn: number) => ScriptedAnswer,
): Promise<FakeOpenAi> {
	const requests: ChatRequest[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			if (req.method !== 'POST' || !/\/chat\/completions$/.test(req.url ?? '')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `not scripted: ${req.method} ${req.url}` } }));
				return;
			}
			let body: ChatRequest;
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
			} catch {
				res.writeHead(400).end();
				return;
			}
			requests.push(body);
			let answer: ScriptedAnswer;
			try {
				answer = script(body, requests.length - 1);
			} catch (error) {
				res.writeHead(500, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: (error as Error).message } }));
				return;
			}
			const id = `chatcmpl-${requests.length}`;
			const created = Math.floor(Date.now() / 1000);
			const model = body.model ?? 'fake';
			const toolCall =
				'toolCall' in answer
					? {
							id: `call_${requests.length}`,
							type: 'function',
							function: {
								name: answer.toolCall.name,
								arguments: JSON.stringify(answer.toolCall.arguments),
							},
						}
					: undefined;
			const finish = toolCall ? 'tool_calls' : 'stop';
			const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
			if (body.stream) {
				res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
				const send = (delta: object, finishReason: string | null) =>
					res.write(
						`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
					);
				send(
					toolCall
						? { role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall }] }
						: { role: 'assistant', content: (answer as { content: string }).content },
					null,
				);
				send({}, finish);
				res.write(
					`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`,
				);
				res.end('data: [DONE]\n\n');
				return;
			}
			const message = toolCall
				? { role: 'assistant', content: null, tool_calls: [toolCall] }
				: { role: 'assistant', content: (answer as { content: string }).content };
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(
				JSON.stringify({
					id,
					object: 'chat.completion',
					created,
					model,
					choices: [{ index: 0, message, finish_reason: finish }],
					usage,
				}),
			);
		});
	});
	server.requestTimeout = 30_000;
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		stop: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
