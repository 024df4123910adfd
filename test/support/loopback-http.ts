// A test's own node:http server on a free loopback port, and its close that never waits on
// keep-alive connections (a test's `after` must not hang on a client that stayed connected).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';

/** Listens on 127.0.0.1 and a free port; resolves with the server's `/mcp` URL. */
export async function listenOnLoopback(http: Server): Promise<string> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

/** Drops open connections and closes; a server that never started is already closed. */
export async function closeLoopback(http: Server | undefined): Promise<void> {
  if (!http) return;
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}

/** An MCP handler (anything with the SDK handler's `fetch`) served by node:http on loopback. */
export async function serveOnLoopback(handler: Parameters<typeof toNodeHandler>[0]): Promise<{ http: Server; url: string }> {
  const serve = toNodeHandler(handler);
  const http = createServer((req, res) => void serve(req, res));
  return { http, url: await listenOnLoopback(http) };
}
