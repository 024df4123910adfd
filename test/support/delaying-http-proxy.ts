import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP proxy in front of an MCP endpoint that can hold back the answers to one method (an upstream slowed down). */
export interface DelayingHttpProxy {
  readonly url: string;
  /** Holds each answer to `method` for `ms` after the target answered it (0: no delay). */
  delay(method: string, ms: number): void;
  /** How many requests of `method` reached the target. */
  count(method: string): number;
  close(): Promise<void>;
}

export async function startDelayingHttpProxy(target: string): Promise<DelayingHttpProxy> {
  const delays = new Map<string, number>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const method = String(req.headers['mcp-method'] ?? '');
        counts.set(method, (counts.get(method) ?? 0) + 1);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
        try {
          const answer = await fetch(target, { method: req.method ?? 'POST', headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}), signal: AbortSignal.timeout(30_000) });
          const body = Buffer.from(await answer.arrayBuffer());
          const ms = delays.get(method) ?? 0;
          if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(body);
        } catch {
          res.writeHead(502).end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    delay: (method, ms) => delays.set(method, ms),
    count: (method) => counts.get(method) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
