// A front that makes a demo node look like a server of 2025-11-25 only, as a server on the 1.x
// SDK looks to a 2026-07-28 request: such a request is refused with HTTP 400 and that SDK's
// JSON-RPC error, `initialize` advertises no extensions, and everything else is passed through
// (streams as they come). It records the JSON-RPC methods it passed on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface LegacyOnlyFront {
  readonly url: string;
  /** `tools/call+task` for a tools/call with params.task; `response` for a POSTed answer. */
  readonly seen: string[];
  close(): Promise<void>;
}

export async function startLegacyOnlyFront(target: string): Promise<LegacyOnlyFront> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => void forward(req, res).catch((error: Error) => res.writeHead(502).end(error.message)));
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const version = req.headers['mcp-protocol-version'];
    let message: Record<string, any> = {};
    try {
      message = body ? JSON.parse(body) : {};
    } catch {
      // Passed on as it is.
    }
    if (version === '2026-07-28' || message['params']?.['_meta']?.['io.modelcontextprotocol/protocolVersion'] === '2026-07-28') {
      res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Bad Request: Unsupported protocol version: 2026-07-28 (supported versions: 2025-11-25)` }, id: null }),
      );
      return;
    }
    const method = typeof message['method'] === 'string' ? message['method'] : 'id' in message ? 'response' : 'other';
    seen.push(method === 'tools/call' && message['params']?.['task'] !== undefined ? 'tools/call+task' : method);
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'authorization']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(target, { method: req.method ?? 'POST', headers, ...(req.method === 'POST' ? { body } : {}) });
    const type = upstream.headers.get('content-type') ?? '';
    if (method === 'initialize' && type.includes('text/event-stream')) {
      // One frame: the InitializeResult, without the 2026-07-28 extensions a 2025-11-25 server has not heard of.
      const text = await upstream.text();
      const data = text.split('\n').find((line) => line.startsWith('data: '))!;
      const answer = JSON.parse(data.slice(6));
      delete answer.result.capabilities.extensions;
      res.writeHead(upstream.status, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
      return;
    }
    res.writeHead(upstream.status, type ? { 'content-type': type } : {});
    if (!upstream.body) return void res.end();
    Readable.fromWeb(upstream.body as never).pipe(res);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
