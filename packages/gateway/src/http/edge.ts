import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { defaultLogger, logSafe } from '@mcp-tasks/core';
import { forbiddenBody, foreignRequest, validHost, type McpTasksHandler, type NodeRequest, type OriginPolicy } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { EdgeAuth, EdgeAuthRequest } from '../auth/edge-auth.js';
import type { ConsoleHandler } from '../console/console-handler.js';
import { metricsAuthorized } from './metrics-access.js';
import { serveReadiness, type ReadinessCheck } from './readiness.js';

/** Options of {@link createEdge}. */
export interface EdgeOptions {
  /** The MCP endpoint (`McpTasks.handler`; its body limit is the handler's `maxBodyBytes`). */
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
}

/** An MCP endpoint served on node:http: `McpTasks.handler`, whose `node` listener has the fast lane. */
export type EdgeHandler = Pick<McpTasksHandler, 'node'>;

/**
 * The node's HTTP edge: `GET /healthz` (liveness: the process serves HTTP), `GET /readyz`
 * (readiness: PostgreSQL and the control listener), `GET /metrics` (behind `metricsToken` when one is
 * set), and MCP at `/mcp` (and each path of `mounts`). A request whose Host header is malformed
 * gets 400 on every path, and one whose Host or Origin `originPolicy` does not serve gets 403.
 * With `auth`, the MCP paths need a bearer token (401 otherwise) and their protected resource
 * metadata is served. The MCP request itself is the handler's `node` listener's (`req.auth` set
 * to the verified token): the library reads, checks and serves it.
 */
export function createEdge(options: EdgeOptions): RequestListener {
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
    // The protocol is the library's: body, fast lane, SDK lane (`handler.node`), with the token this edge verified.
    (req as NodeRequest).auth = authInfo;
    handler.node(req, res);
  }
}

/** A header as `Headers.get` reads it: repeated values joined by ", ". */
function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A small answer of this edge's own (metadata, an authorization challenge), whole. */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...headers, 'content-length': String(body.length) }).end(body);
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
