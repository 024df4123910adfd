import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { defaultLogger, logSafe } from '@mcp-tasks/core';
import { forbiddenBody, foreignRequest, jsonTextTooDeep, MAX_JSON_DEPTH, type McpTasksHandler, type OriginPolicy } from '@mcp-tasks/server';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { EdgeAuth, EdgeAuthRequest } from '../auth/edge-auth.js';
import type { ConsoleHandler } from '../console/console-handler.js';
import { validHost } from './host-header.js';
import { metricsAuthorized } from './metrics-access.js';
import { readBody } from './read-body.js';
import { serveReadiness, type ReadinessCheck } from './readiness.js';

/** Options of {@link createEdge}. */
export interface EdgeOptions {
  /** The MCP endpoint; an `McpTasks.handler` has its direct path used for what it takes. */
  readonly handler: EdgeHandler;
  /** More MCP endpoints by path (e.g. `/other/mcp`), beside `handler` at `/mcp`. */
  readonly mounts?: Readonly<Record<string, EdgeHandler>>;
  /** Bearer-token authorization of the MCP paths, and their RFC 9728 metadata (absent: none). */
  readonly auth?: EdgeAuth | undefined;
  /** What `GET /readyz` reports (default: always ready). */
  readonly readiness?: ReadinessCheck;
  /** Answers `GET /metrics` (Prometheus text). */
  readonly metrics: (req: IncomingMessage, res: ServerResponse) => void;
  /** The bearer token `GET /metrics` needs (`MCP_TASKS_METRICS_TOKEN`); absent: none. */
  readonly metricsToken?: string | undefined;
  /** The operator console at `/console` (absent: off, `/console` is 404). */
  readonly console?: ConsoleHandler | undefined;
  /** The Host and Origin headers served (DNS rebinding protection); others get 403 on every path. Default: any host, no foreign origin. */
  readonly originPolicy?: OriginPolicy;
  /** Largest request body, in bytes. Default 4 MiB. */
  readonly maxBodyBytes?: number;
}

/** An MCP handler, with the direct path of `McpTasks.handler` when it has one. */
export type EdgeHandler = McpHttpHandler & Partial<Pick<McpTasksHandler, 'serveDirect'>>;

/**
 * The node's HTTP edge: `GET /healthz` (liveness: the process serves HTTP), `GET /readyz`
 * (readiness: PostgreSQL and the control listener), `GET /metrics` (behind `metricsToken` when one is
 * set), and MCP at `/mcp` (and each path of `mounts`). A request whose Host header is malformed
 * gets 400 on every path, and one whose Host or Origin `originPolicy` does not serve gets 403.
 * With `auth`, the MCP paths need a bearer token (401 otherwise) and their protected resource
 * metadata is served. It parses the body itself (bounded) and hands
 * `{ parsedBody, authInfo }` to the MCP handler (`McpTasks.handler`, which checks the body).
 */
export function createEdge(options: EdgeOptions): RequestListener {
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const originPolicy: OriginPolicy = options.originPolicy ?? { allowedHosts: 'any', allowedOrigins: [] };
  return (req, res) => {
    serve(req, res).catch((error: unknown) => {
      defaultLogger().error({ err: logSafe(error) }, 'request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error');
      else res.destroy();
    });
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host === undefined ? 'localhost' : validHost(req.headers.host);
    if (host === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request: malformed Host header');
      return;
    }
    // Before any route: a rebound name reaches no handler, console or metrics.
    const foreign = foreignRequest(host, headerOf(req, 'origin'), originPolicy);
    if (foreign) {
      res.writeHead(403, { 'content-type': 'application/json' }).end(forbiddenBody(foreign));
      return;
    }
    const url = new URL(req.url ?? '/', `http://${host}`);
    if (url.pathname === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (url.pathname === '/readyz' && req.method === 'GET') return serveReadiness(options.readiness ?? (async () => undefined), res);
    if (url.pathname === '/metrics' && req.method === 'GET') {
      if (!metricsAuthorized(req, options.metricsToken)) {
        res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' }).end('Unauthorized');
        return;
      }
      options.metrics(req, res);
      return;
    }
    if (options.console && (url.pathname === '/console' || url.pathname.startsWith('/console/'))) return options.console(req, res, url, host);
    const mcpPaths = ['/mcp', ...Object.keys(options.mounts ?? {})];
    // What the authorization reads of the request, without a WHATWG Request for each one served.
    const authRequest: EdgeAuthRequest = { url: url.href, method: req.method ?? 'GET', headers: { get: (name) => headerOf(req, name.toLowerCase()) ?? null } };
    const document = options.auth?.metadata(authRequest, mcpPaths);
    if (document) return writeResponse(res, document);
    const handler = url.pathname === '/mcp' ? options.handler : options.mounts?.[url.pathname];
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    let authInfo: AuthInfo | undefined;
    if (options.auth) {
      const verdict = await options.auth.authenticate(authRequest, url.pathname);
      if (verdict instanceof Response) return writeResponse(res, verdict);
      authInfo = verdict;
    }
    let body: string | undefined;
    let parsedBody: unknown;
    if (req.method === 'POST') {
      body = await readBody(req, maxBodyBytes);
      if (body === undefined) {
        // The rest of the body is never read: the connection closes after the answer.
        res.setHeader('connection', 'close');
        return jsonRpcError(res, 413, -32600, `Request body is larger than ${maxBodyBytes} bytes`);
      }
      // Refused before the parse: nothing past the bound is ever walked (it overflowed the stack).
      if (jsonTextTooDeep(body)) return jsonRpcError(res, 400, -32700, `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      try {
        parsedBody = JSON.parse(body);
      } catch (error) {
        return jsonRpcError(res, 400, -32700, `Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`);
      }
    }
    let request: Request | undefined;
    const toRequest = () => (request ??= webRequestOf(req, res, url, body));
    if (req.method === 'POST' && handler.serveDirect) {
      // tasks/get|update|cancel and task-creating tools/call go from the parsed body to the socket: no WHATWG round trip.
      // Its length is read only when a limit refuses it (the refusal hold keeps small requests only): not measured per request.
      const direct = await handler.serveDirect({
        method: 'POST',
        header: (name) => headerOf(req, name),
        body: parsedBody,
        get bodyBytes() {
          return body === undefined ? undefined : Buffer.byteLength(body);
        },
        authInfo,
        toRequest,
      });
      if (direct) {
        res.writeHead(direct.status, { ...direct.headers, 'content-length': String(Buffer.byteLength(direct.body)) }).end(direct.body);
        return;
      }
    }
    const response = await handler.fetch(toRequest(), { ...(req.method === 'POST' ? { parsedBody } : {}), ...(authInfo ? { authInfo } : {}) });
    await writeResponse(res, response);
  }
}

/** A header as `Headers.get` reads it: repeated values joined by ", ". */
function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function webRequestOf(req: IncomingMessage, res: ServerResponse, url: URL, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const abort = new AbortController();
  // Only a client that left before the answer aborts the request: aborting after every answer
  // would build an AbortError (and the SDK's teardown errors) for each request served.
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return new Request(url, { method: req.method ?? 'GET', headers, body, signal: abort.signal });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') headers[name] = response.headers.getSetCookie();
    else headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    // A whole JSON answer goes out in one write with a length: no chunked framing, one syscall.
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, 'content-length': String(body.length) }).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  // What the stream has ready in this turn of the event loop (a listen's acknowledgement and, when
  // it follows nothing, its close) goes out with the headers in one write, not one write each: a
  // flood of short listens is mostly those writes. The headers still leave in this turn.
  res.cork();
  res.flushHeaders();
  process.nextTick(() => res.uncork());
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } finally {
    res.end();
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
