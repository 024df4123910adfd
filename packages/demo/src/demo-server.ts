import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpTasks, proxyUpstream, type TaskListenHandler } from '@mcp-tasks/server';
import { defaultLogger, logSafe, type Logger, type TaskNode } from '@mcp-tasks/core';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { originPolicyFromEnv } from './http/origin-policy-env.js';
import { createEdgeAuth } from './auth/edge-auth.js';
import type { DemoConfig } from './config.js';
import { createConsole } from './console/console-handler.js';
import { createEdge } from './http/edge.js';
import { observeClusterGauges } from './metrics/cluster-gauges.js';
import { demoMetrics } from './metrics/demo-metrics.js';
import { observeNodeGauges } from './metrics/node-gauges.js';
import { openStore } from './store/open-store.js';
import { registerGreet, taskTools } from './tools/index.js';

/** The server's name: part of every task's owner, so every node must use the same one. */
export const DEMO_SERVER_NAME = 'mcp-tasks-demo';

/**
 * The second server, at `/other/mcp`: same tools, same store and runtime, another name. Its tasks
 * are not `/mcp`'s (the server is part of the owner), which proves several servers can share a database.
 */
export const OTHER_SERVER_NAME = 'mcp-tasks-other';

/** How long a starting node waits to be ready before it serves anyway. */
const STARTUP_READY_MS = 5_000;

async function readyWithin(readiness: () => Promise<string | undefined>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && (await readiness().catch((error: unknown) => String(error))) !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A running demo node. */
export interface DemoServer {
  readonly url: string;
  /** The URL of the second server (`/other/mcp`, server {@link OTHER_SERVER_NAME}). */
  readonly otherUrl: string;
  readonly tasks: McpTasks;
  /** The cluster node beside a PostgreSQL store (absent on the memory store). */
  readonly node: TaskNode | undefined;
  /** The `/mcp` handler, with `notifications/tasks` on `subscriptions/listen` (its open streams and follows). */
  readonly listen: TaskListenHandler;
  /** Stops taking requests, drains running tasks up to `drainMs`, closes the store. */
  close(drainMs?: number): Promise<void>;
}

/** How a demo node reaches the process's OpenTelemetry SDK. */
export interface DemoServerOptions {
  /**
   * The Prometheus reader of the SDK the process started (telemetry/start.ts): `/metrics` serves
   * it and instruments come from the global providers. Without it the node keeps a meter provider
   * of its own behind `/metrics`.
   */
  readonly prometheus?: PrometheusExporter | undefined;
  /** Where the node logs (node/main.ts: pino, see log/demo-logger.ts). Default: `defaultLogger()`. */
  readonly logger?: Logger;
}

/** Starts one demo node (what `npm run serve` runs). */
export async function startDemoServer(config: DemoConfig, options: DemoServerOptions = {}): Promise<DemoServer> {
  const metrics = demoMetrics(options.prometheus);
  const logger = options.logger ?? defaultLogger();
  if (config.directDatabaseUrl && !config.databaseUrl) throw new Error('DIRECT_DATABASE_URL needs DATABASE_URL: it is the direct way to the same database');
  if (config.console && !config.databaseUrl) throw new Error('MCP_TASKS_CONSOLE_TOKEN needs DATABASE_URL: the console shows the cluster from PostgreSQL');
  const { store, node, readiness, operator, clusterStats, gauges } = await openStore(config.databaseUrl, {
    nodeId: config.nodeId,
    leaseMs: config.leaseMs,
    migrate: config.migrate,
    directDatabaseUrl: config.directDatabaseUrl,
    poolSize: config.poolSize,
    clusterStatsMs: config.clusterStatsMs,
    logger,
  });
  if (clusterStats) observeClusterGauges(clusterStats, metrics.meterProvider);
  const stopGauges = gauges ? observeNodeGauges(gauges, metrics.meterProvider) : () => {};
  const tasks = new McpTasks({
    store,
    logger,
    ...(node ? { node } : {}),
    ...(metrics.meterProvider ? { telemetry: { meterProvider: metrics.meterProvider } } : {}),
    ...(node || config.nodeId === undefined ? {} : { nodeId: config.nodeId }),
    ...(config.ttlMs === undefined ? {} : { ttlMs: config.ttlMs }),
    ...(config.pollIntervalMs === undefined ? {} : { pollIntervalMs: config.pollIntervalMs }),
    ...(config.maxPerPrincipal === undefined ? {} : { maxPerPrincipal: config.maxPerPrincipal }),
    ...(config.maxRuns === undefined ? {} : { maxConcurrentRuns: config.maxRuns }),
    ...(config.abortGraceMs === undefined ? {} : { abortGraceMs: config.abortGraceMs }),
    ...(config.rateLimit === undefined ? {} : { rateLimit: config.rateLimit }),
    ...(config.inFlight === undefined ? {} : { inFlight: config.inFlight }),
    ...(config.admission === undefined ? {} : { admission: config.admission }),
    ...(config.refusalHold === undefined ? {} : { refusalHold: config.refusalHold }),
  });
  // Claim queued and released tasks from the start, before any request reaches this node. That
  // opens the LISTEN connection now: serve once the node is ready (or after a bound, and let
  // /readyz say why not), so a node is ready as soon as it prints its URL.
  tasks.claimTools(taskTools);
  await readyWithin(readiness, STARTUP_READY_MS);
  // Each server's name is the server part of its tasks' owners. tasks.handler is the whole
  // endpoint: task tools, tasks/*, notifications/tasks on subscriptions/listen, the body checks.
  const originPolicy = config.originPolicy ?? originPolicyFromEnv({}, config.host);
  const handlerFor = (name: string, upstreams = false) =>
    tasks.handler({
      name,
      version: '0.1.0',
      // The edge refuses what this policy does not serve before any route; the handler keeps the same policy, not its own default.
      allowedHosts: originPolicy.allowedHosts,
      allowedOrigins: originPolicy.allowedOrigins,
      tools: taskTools,
      register: registerGreet,
      onerror: (error) => logger.error({ server: name, err: logSafe(error) }, 'MCP handler error'),
      // The upstream's tools as `upstream_<name>`, with its task support (`/mcp` only).
      ...(upstreams && config.upstream ? { upstreams: [proxyUpstream({ name: 'upstream', url: config.upstream.url, ...(config.upstream.token ? { token: config.upstream.token } : {}), ...(config.upstream.revision ? { revision: config.upstream.revision } : {}), ...(config.upstream.capacity ? { capacity: config.upstream.capacity } : {}), ...(config.upstream.rate ? { rate: config.upstream.rate } : {}), ...(config.upstream.identity ? { identity: config.upstream.identity } : {}) })] } : {}),
    });
  const handler = handlerFor(DEMO_SERVER_NAME, true);
  const otherHandler = handlerFor(OTHER_SERVER_NAME);
  const auth = config.auth ? createEdgeAuth({ ...config.auth, scopesSupported: ['export'] }) : undefined;
  const operatorConsole =
    config.console && operator && clusterStats ? createConsole({ config: config.console, operator, stats: clusterStats, verifier: config.auth?.verifier }) : undefined;
  const http: Server = createServer(
    createEdge({
      handler,
      mounts: { '/other/mcp': otherHandler },
      auth,
      readiness,
      metrics: metrics.serve,
      metricsToken: config.metricsToken,
      console: operatorConsole,
      originPolicy,
    }),
  );
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
    node,
    listen: handler,
    async close(drainMs = config.drainMs ?? 10_000) {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await tasks.drain(drainMs);
      http.closeAllConnections();
      await handler.close();
      await otherHandler.close();
      await closed;
      stopGauges();
      await tasks.close();
      await metrics.shutdown();
    },
  };
}
