import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpTasks } from '@mcp-tasks/server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createEdgeAuth } from './auth/edge-auth.js';
import type { DemoConfig } from './config.js';
import { createEdge } from './http/edge.js';
import { countingStore } from './metrics/counting-store.js';
import { DemoMetrics } from './metrics/prometheus.js';
import { openStore } from './store/open-store.js';
import { registerGreet, taskTools } from './tools/index.js';

/** The server's name: part of every task's owner, so every node must use the same one. */
export const DEMO_SERVER_NAME = 'mcp-tasks-demo';

/**
 * The second server, at `/other/mcp`: same tools, same store and runtime, another name. Its tasks
 * are not `/mcp`'s (the server is part of the owner), which proves several servers can share a database.
 */
export const OTHER_SERVER_NAME = 'mcp-tasks-other';

/** A running demo node. */
export interface DemoServer {
  readonly url: string;
  /** The URL of the second server (`/other/mcp`, server {@link OTHER_SERVER_NAME}). */
  readonly otherUrl: string;
  readonly tasks: McpTasks;
  /** Stops taking requests, drains running tasks up to `drainMs`, closes the store. */
  close(drainMs?: number): Promise<void>;
}

/** Starts one demo node (what `npm run serve` runs). */
export async function startDemoServer(config: DemoConfig): Promise<DemoServer> {
  let metrics: DemoMetrics | undefined;
  const store = countingStore(await openStore(config.databaseUrl), () => {
    if (metrics) metrics.created += 1;
  });
  const tasks = new McpTasks({
    store,
    ...(config.nodeId === undefined ? {} : { nodeId: config.nodeId }),
    ...(config.ttlMs === undefined ? {} : { ttlMs: config.ttlMs }),
    ...(config.pollIntervalMs === undefined ? {} : { pollIntervalMs: config.pollIntervalMs }),
    ...(config.maxPerPrincipal === undefined ? {} : { maxPerPrincipal: config.maxPerPrincipal }),
  });
  metrics = new DemoMetrics(() => tasks.runtime.running);
  // Each McpServer's name is the server part of its tasks' owners.
  const handlerFor = (name: string) =>
    createMcpHandler(
      (context) => {
        const server = new McpServer({ name, version: '0.1.0' });
        registerGreet(server);
        tasks.register(server, taskTools, context);
        return server;
      },
      { onerror: (error) => console.error('demo: mcp error:', error) },
    );
  const handler = handlerFor(DEMO_SERVER_NAME);
  const otherHandler = handlerFor(OTHER_SERVER_NAME);
  const auth = config.auth ? createEdgeAuth({ ...config.auth, scopesSupported: ['export'] }) : undefined;
  const http: Server = createServer(createEdge({ handler, mounts: { '/other/mcp': otherHandler }, auth, metrics: () => metrics.render() }));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    otherUrl: `http://${host}:${address.port}/other/mcp`,
    tasks,
    async close(drainMs = 10_000) {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await tasks.drain(drainMs);
      http.closeAllConnections();
      await handler.close();
      await otherHandler.close();
      await closed;
      await tasks.close();
    },
  };
}
