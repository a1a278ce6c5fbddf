/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never ships */
/**
 * Plain node:http servers for what the simulator does not do (answer a redirect, echo the token, stand on another
 * origin). Each listens on a free port of the given address and records what it got.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
	method: string;
	url: string;
	headers: IncomingMessage['headers'];
}

export interface LocalServer {
	/** http://host:port */
	origin: string;
	received: Received[];
	stop(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** Starts a server; it stops itself after `lifetimeMs` at the latest, so a failed test leaves nothing behind. */
export async function startServer(
	handler: Handler,
	host = '127.0.0.1',
	lifetimeMs = 60_000,
): Promise<LocalServer> {
	const received: Received[] = [];
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
			handler(req, res, Buffer.concat(chunks).toString('utf8'));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, host, resolve));
	const { port } = server.address() as AddressInfo;
	const stop = async () => {
		clearTimeout(timer);
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	};
	const timer = setTimeout(() => void stop(), lifetimeMs);
	timer.unref();
	return { origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, received, stop };
}

export function json(
	res: ServerResponse,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
) {
	res.writeHead(status, { 'content-type': 'application/json', ...headers });
	res.end(JSON.stringify(body));
}
