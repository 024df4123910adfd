import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A node the front forwards to. */
export interface FrontTarget {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** False once the node is stopping or gone; the front skips it. */
  available(): boolean;
}

/** Options of {@link startRoundRobinFront}. */
export interface FrontOptions {
  readonly port: number;
  readonly host: string;
  readonly targets: readonly FrontTarget[];
  /** Largest request body buffered for a retry on another node, in bytes. Default 8 MiB. */
  readonly maxBodyBytes?: number;
}

/** The running front. */
export interface RoundRobinFront {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/**
 * A small round-robin HTTP load balancer for the local cluster: each request goes to the next
 * available node; when a node refuses the connection (it is draining or died), the same request
 * is sent to the next one. Bodies are buffered (MCP requests are small) so a retry can resend
 * them; responses, SSE streams included, are piped through unbuffered.
 */
export async function startRoundRobinFront(options: FrontOptions): Promise<RoundRobinFront> {
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  let next = 0;
  // No keep-alive towards the nodes: a draining node closes its listener, and each request's
  // fresh connection then moves on to another node at once.
  const agent = new http.Agent({ keepAlive: false });

  const server = http.createServer((req, res) => {
    void forward(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 502, `Bad gateway: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req, maxBodyBytes);
    if (body === undefined) return sendError(res, 413, 'Request body too large');
    const targets = options.targets.filter((target) => target.available());
    if (targets.length === 0) return sendError(res, 503, 'No node is available');
    const start = next++ % targets.length;
    let lastError: unknown;
    for (let i = 0; i < targets.length; i += 1) {
      const target = targets[(start + i) % targets.length]!;
      try {
        await proxyTo(target, req, body, res);
        return;
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        lastError = error.cause;
      }
    }
    sendError(res, 502, `Bad gateway: no node answered (${lastError instanceof Error ? lastError.message : String(lastError)})`);
  }

  function proxyTo(target: FrontTarget, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
      headers['content-length'] = String(body.length);
      headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
      headers['x-forwarded-host'] = req.headers.host ?? '';
      let responded = false;
      const upstream = http.request(
        { host: target.host, port: target.port, method: req.method, path: req.url, headers, agent },
        (upstreamRes) => {
          responded = true;
          const out: http.OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(upstreamRes.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
          out['x-mcp-tasks-node'] = target.name;
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, out);
          res.flushHeaders();
          upstreamRes.pipe(res);
          upstreamRes.on('end', () => resolve());
          upstreamRes.on('error', reject);
          res.on('close', () => {
            upstreamRes.destroy();
            resolve();
          });
        },
      );
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (responded) return res.destroy(error);
        // Nothing reached the node: safe to send the same request elsewhere.
        if (error.code === 'ECONNREFUSED') reject(new ConnectError(error));
        else reject(error);
      });
      res.on('close', () => {
        if (!responded) upstream.destroy();
      });
      upstream.end(body);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

class ConnectError extends Error {
  constructor(override readonly cause: unknown) {
    super('connect failed');
  }
}

function readAll(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message } }));
}
