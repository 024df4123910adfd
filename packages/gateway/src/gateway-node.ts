import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpTasks, proxyUpstream, type AnyTaskTool, type TaskListenHandler } from '@mcp-tasks/server';
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
import type { McpServer } from '@modelcontextprotocol/server';
import type { UpstreamConfig } from './config-file/config-schema.js';
import { prefixOf, startStdioUpstreams } from './stdio/start-stdio-upstreams.js';
import { startHttpPlainTools } from './http-plain/start-http-plain-tools.js';
import { addHttpUpstreamTools, distinctTools, ServedNames } from './upstreams/served-names.js';
import { LiveStdioTools } from './stdio/live-stdio-tools.js';

/** The server's default name: part of every task's owner, so every node must use the same one. */
export const GATEWAY_SERVER_NAME = 'mcp-tasks-gateway';

/** How long a starting node waits to be ready before it serves anyway. */
const STARTUP_READY_MS = 5_000;

async function readyWithin(readiness: () => Promise<string | undefined>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && (await readiness().catch((error: unknown) => String(error))) !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A running gateway node. */
export interface GatewayNode {
  readonly url: string;
  /** The URL of the second server (`/other/mcp`, `options.otherName`), when it is served. */
  readonly otherUrl: string;
  readonly tasks: McpTasks;
  /** The cluster node beside a PostgreSQL store (absent on the memory store). */
  readonly node: TaskNode | undefined;
  /** The `/mcp` handler, with `notifications/tasks` on `subscriptions/listen` (its open streams and follows). */
  readonly listen: TaskListenHandler;
  /** Stops taking requests, drains running tasks up to `drainMs`, closes the store. */
  close(drainMs?: number): Promise<void>;
}

/** What a gateway node serves in process, and how it reaches the process's OpenTelemetry SDK. */
export interface GatewayNodeOptions {
  /** The server's name (default {@link GATEWAY_SERVER_NAME}): part of every task's owner. */
  readonly name?: string;
  /**
   * A second server at `/other/mcp`: same tools, same store and runtime, another name. Its tasks
   * are not `/mcp`'s (the server is part of the owner), which proves several servers can share a database.
   */
  readonly otherName?: string;
  /** The in-process task tools (the modules'). */
  readonly tools?: readonly AnyTaskTool[];
  /** Registers the modules' ordinary tools on each server. */
  readonly register?: (server: McpServer) => void;
  /** The configuration file's upstreams (HTTP and stdio), beside `MCP_TASKS_UPSTREAM_URL`'s. */
  readonly upstreams?: readonly UpstreamConfig[];
  /** Where the configuration file's relative paths start. Default: the working directory. */
  readonly configDirectory?: string;
  /** The scopes the protected resource metadata lists (default: every scope the tools need). */
  readonly scopesSupported?: readonly string[];
  /**
   * The Prometheus reader of the SDK the process started (telemetry/start.ts): `/metrics` serves
   * it and instruments come from the global providers. Without it the node keeps a meter provider
   * of its own behind `/metrics`.
   */
  readonly prometheus?: PrometheusExporter | undefined;
  /** Where the node logs (node/main.ts: pino, see log/demo-logger.ts). Default: `defaultLogger()`. */
  readonly logger?: Logger;
}

/** Starts one gateway node (what `mcp-tasks-gateway` and `npm run serve` run). */
export async function startGatewayNode(config: DemoConfig, options: GatewayNodeOptions = {}): Promise<GatewayNode> {
  const metrics = demoMetrics(options.prometheus);
  const logger = options.logger ?? defaultLogger();
  if (config.directDatabaseUrl && !config.databaseUrl) throw new Error('DIRECT_DATABASE_URL needs DATABASE_URL: it is the direct way to the same database');
  if (config.console && !config.databaseUrl) throw new Error('MCP_TASKS_CONSOLE_TOKEN needs DATABASE_URL: the console shows the cluster from PostgreSQL');
  // Before any database connection: a stdio upstream that cannot start, or a name served twice, stops the node here.
  const stdio = await startStdioUpstreams(options.upstreams ?? [], options.configDirectory ?? process.cwd(), logger);
  const httpPlain = await startHttpPlainTools(options.upstreams ?? [], logger);
  const httpUpstreams = [
    ...(config.upstream ? [{ name: 'upstream', url: config.upstream.url, token: config.upstream.token, revision: config.upstream.revision, capacity: config.upstream.capacity, rate: config.upstream.rate, identity: config.upstream.identity, prefix: undefined }] : []),
    ...(options.upstreams ?? []).flatMap((upstream) => (upstream.url === undefined ? [] : [{ ...upstream, url: upstream.url, capacity: undefined, rate: undefined, identity: undefined }])),
  ];
  // Mounted on `/mcp` only. Their names are checked with the others' before any database connection.
  const mounts = httpUpstreams.map((upstream) => {
    const prefix = prefixOf(upstream);
    return proxyUpstream({
      name: upstream.name,
      url: upstream.url,
      rename: (tool) => `${prefix}${tool}`,
      // Its plain tools run here as tasks (startHttpPlainTools); the relay serves the rest.
      ...(httpPlain.plain.has(upstream.name) ? { filter: (tool: { name: string }) => !httpPlain.plain.get(upstream.name)!.has(tool.name) } : {}),
      ...(upstream.token ? { token: upstream.token } : {}),
      ...(upstream.revision ? { revision: upstream.revision } : {}),
      ...(upstream.capacity ? { capacity: upstream.capacity } : {}),
      ...(upstream.rate ? { rate: upstream.rate } : {}),
      ...(upstream.identity ? { identity: upstream.identity } : {}),
    });
  });
  let taskTools: readonly AnyTaskTool[];
  let stdioTools: LiveStdioTools;
  try {
    const others = new ServedNames();
    taskTools = distinctTools(others, [...(options.tools ?? [])], httpPlain.tools);
    // The configuration file's: the one-upstream shorthand's `upstream_` prefix meets no other upstream.
    await addHttpUpstreamTools(others, config.upstream ? mounts.slice(1) : mounts, logger);
    distinctTools(others.copy(), [], stdio.tools);
    // Served live: a stdio upstream's tool list change is served from the next request on.
    stdioTools = new LiveStdioTools(others, stdio.upstreams.map((upstream) => upstream.name), stdio.tools, logger);
    stdio.onToolsChanged((upstream, tools) => stdioTools.changed(upstream, tools));
  } catch (error) {
    for (const mount of mounts) mount.stopWatching();
    await stdio.stop();
    throw error;
  }
  const { store, node, readiness, operator, clusterStats, gauges } = await openStore(config.databaseUrl, {
    nodeId: config.nodeId,
    leaseMs: config.leaseMs,
    migrate: config.migrate,
    directDatabaseUrl: config.directDatabaseUrl,
    poolSize: config.poolSize,
    clusterStatsMs: config.clusterStatsMs,
    clusterFinishedStatsMs: config.clusterFinishedStatsMs,
    logger,
  }).catch(async (error: unknown) => {
    await stdio.stop();
    throw error;
  });
  if (clusterStats) observeClusterGauges(clusterStats, metrics.meterProvider, [...taskTools, ...stdioTools.live.current()].map((tool) => tool.name));
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
    ...config.storedBytes,
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
  tasks.claimTools([...taskTools, ...stdioTools.live.current()]);
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
      liveTools: stdioTools.live,
      ...(options.register ? { register: options.register } : {}),
      onerror: (error) => logger.error({ server: name, err: logSafe(error) }, 'MCP handler error'),
      // The upstreams' tools as `<prefix><name>`, with their task support (`/mcp` only).
      ...(upstreams && mounts.length > 0 ? { upstreams: mounts } : {}),
    });
  const handler = handlerFor(options.name ?? GATEWAY_SERVER_NAME, true);
  const otherHandler = options.otherName === undefined ? undefined : handlerFor(options.otherName);
  const scopesSupported = options.scopesSupported ?? [...new Set([...taskTools, ...stdioTools.live.current()].flatMap((tool) => tool.scopes ?? []))];
  const auth = config.auth ? createEdgeAuth({ ...config.auth, scopesSupported }) : undefined;
  const operatorConsole =
    config.console && operator && clusterStats ? createConsole({ config: config.console, operator, stats: clusterStats, verifier: config.auth?.verifier }) : undefined;
  const http: Server = createServer(
    createEdge({
      handler,
      mounts: otherHandler ? { '/other/mcp': otherHandler } : {},
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
      await otherHandler?.close();
      await closed;
      stopGauges();
      await tasks.close();
      await stdio.stop();
      await metrics.shutdown();
    },
  };
}
