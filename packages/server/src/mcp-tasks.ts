import type { MeterProvider } from '@opentelemetry/api';
import { classifyOwnRpcError, defaultLogger, logSafe, MemoryTaskStore, TaskRuntime, type Logger, type RpcErrorClassifier, type TaskNode, type TaskOwner, type TaskRuntimeOptions, type TaskStore } from '@mcp-tasks/core';
import {
  createMcpHandler,
  McpServer,
  requireScopes,
  type CreateMcpHandlerOptions,
  type Implementation,
  type JSONRPCRequest,
  type McpHttpHandler,
  type McpRequestContext,
  type McpServerOptions,
  type Result,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { TaskReadMemo } from './access/task-read-memo.js';
import { taskScopeChallenge, TASK_METHODS } from './access/task-scope-challenge.js';
import { TASKS_EXTENSION } from './capability/tasks-extension.js';
import { classifySdkError } from './errors/classify-sdk-error.js';
import { clientMistakeKind } from './errors/client-mistake.js';
import { ClientMistakeLog, type ClientMistakeLogOptions } from './errors/client-mistake-log.js';
import type { HandlerDeps } from './handlers/handler-deps.js';
import { looseParams } from './handlers/loose-params.js';
import { originPolicyOf } from './front/request-origin.js';
import { ListenStreamCaps, type ListenStreamCapOptions } from './limits/listen-stream-caps.js';
import type { AdmissionOptions } from './limits/node-admission.js';
import type { InFlightOptions } from './limits/owner-in-flight-cap.js';
import type { RateLimitOptions } from './limits/owner-rate-limiter.js';
import { RequestLimits } from './limits/request-limits.js';
import { Admission } from './limits/admission.js';
import type { ToolRunOptions } from './limits/tool-run-limits.js';
import { LimitRefusalCounter } from './limits/limit-refusal-counter.js';
import { RefusalHold, type RefusalHoldOptions } from './limits/refusal-hold.js';
import { withTaskListen, type TaskListenHandler, type TaskListenOptions } from './listen/task-listen.js';
import { taskRequestServer } from './direct/task-request-server.js';
import { toolCallServer } from './direct/tool-call-server.js';
import { frontDoor, type McpTasksHandler } from './front/front-door.js';
import { fastLane } from './front/fast-lane.js';
import { ownerOfRequest } from './access/request-owner.js';
import { TASK_METHODS_2026, type TaskHandler } from './front/method-table.js';
import { taskToolsCall } from './handlers/tools-call.js';
import { defaultOwnerResolver, type DefaultOwnerOptions, type OwnerResolver } from './access/owner-resolver.js';
import { McpRequestTracer } from './telemetry/mcp-request-tracer.js';
import type { AnyTaskTool, TaskTool } from './tool/define-tool.js';
import type { LiveTaskTools } from './tool/live-task-tools.js';
import { runInline } from './tool/run-inline.js';
import { claimedTaskExecute } from './tool/task-execute.js';
import { assertSdkSeams } from './sdk/assert-sdk-seams.js';
import { challengeMethods, registeredToolNames, type SdkRequestHandler, serverNameOf, setTaskSupport, takeOverToolsCall, takeOverToolsList } from './sdk/server-seams.js';
import { legacyTasksCapability, servesTaskList, type ListTasksPolicy } from './legacy/legacy-capability.js';
import { withLegacyTasks, type LegacyTasksHandler } from './legacy/legacy-tasks-edge.js';
import { LEGACY_REVISION } from './legacy/legacy-tools-call.js';
import { UpstreamProxy } from './proxy/upstream-proxy.js';
import type { UpstreamMount } from './proxy/upstream-mount.js';

/** Options of {@link McpTasks}; the runtime options keep the seed's defaults. */
export interface McpTasksOptions extends Omit<TaskRuntimeOptions, 'store' | 'classifyError'> {
  /** Where tasks live. Default: a `MemoryTaskStore` (one node). */
  readonly store?: TaskStore;
  /** `false` turns tasks off: task tools run like any other tool and the extension is not advertised. */
  readonly tasks?: boolean;
  /** Whom a request's tasks belong to. Default: {@link defaultOwnerResolver} with `hostScope`. */
  readonly resolveOwner?: OwnerResolver;
  /** The subject of callers without a token, for the default resolver. Default `"host"`. */
  readonly hostScope?: DefaultOwnerOptions['hostScope'];
  /** The server name recorded in owners. Default: the McpServer's own name. */
  readonly serverName?: string;
  /** Recognises more tool-thrown errors as JSON-RPC errors (the SDK's `ProtocolError` is built in). */
  readonly classifyError?: RpcErrorClassifier;
  /** Largest serialised `arguments` of a task tool call, in bytes. Default 1 MiB. */
  readonly maxArgumentBytes?: number;
  /**
   * Per-owner token bucket on `tasks/*`, `subscriptions/listen` and POSTed answers of the handlers
   * {@link McpTasks.listen} returns, per node, for requests with an authenticated subject (auth
   * info; without one every caller is one owner, and the node's `admission` protects it instead).
   * Default 50 requests/s, burst 200, raised for an owner that polls many tasks: two reads per task
   * per `pollIntervalMs` for each task it polled lately (at most the quota's worth). `false` turns
   * off every per-owner rate, that of task tool calls (`toolRuns.createsPerSecond`) included.
   */
  readonly rateLimit?: RateLimitOptions | false;
  /**
   * Per-owner cap on the same requests under way at once on this node (a listen until its
   * acknowledgement), for requests with an authenticated subject: past it a request waits in its
   * owner's FIFO (default 128 deep, at most 2 s), and only past that is it refused. Default 8 per
   * owner; `false` turns it off.
   */
  readonly inFlight?: InFlightOptions | false;
  /**
   * The node's admission control, which every limited request meets, with or without a subject:
   * at most 16 served at once (about the store pool's 10 connections), up to 1 024 waiting (round-robin across authenticated owners) for
   * at most 2 s; past either HTTP 503 with `Retry-After`. `false` turns it off.
   */
  readonly admission?: AdmissionOptions | false;
  /**
   * Limits of `tools/call` of task tools (a task created, or a run held open inline): an
   * authenticated owner's rate (10/s, burst 100) and share (16 under way, then a brief queue), and
   * 256 under way on the node (HTTP 503 past it). `false` turns them off.
   */
  readonly toolRuns?: ToolRunOptions | false;
  /** Caps on open task listen streams of this node's handlers. Default 16 per authenticated owner, 1 000 per node; `false` turns them off. */
  readonly listenStreams?: ListenStreamCapOptions | false;
  /**
   * Caps on open 2025-11-25 `tasks/result` streams, apart from the listens' (so listens held open
   * never take a 2025-11-25 client's way to its result). Default 16 per authenticated owner,
   * 1 000 per node; `false` turns them off.
   */
  readonly resultStreams?: ListenStreamCapOptions | false;
  /**
   * Paces the refusals of these limits: past a prompt share per owner (10 a second, burst 20), a
   * refused request is answered after about a second, so a caller that retries at once sends
   * about one request a second per connection instead of one per refusal. At most 256 held per
   * owner and 1 000 per node, requests of at most 16 KiB; past them a refusal is answered at once.
   * `false` answers every refusal at once.
   */
  readonly refusalHold?: RefusalHoldOptions | false;
  /** When 2025-11-25 `tasks/list` is advertised and served. Default `'authorized'`: only to requests with auth info. */
  readonly listTasks?: ListTasksPolicy;
  /**
   * Requests the SDK refuses as malformed (client mistakes) are counted
   * (`mcp_tasks.client_mistakes`) and logged at most as one line a minute, without a stack,
   * instead of reaching a handler's `onerror` each with its stack.
   */
  readonly clientMistakes?: ClientMistakeLogOptions;
}

/** Options of {@link McpTasks.listen}. */
export interface McpTasksListenOptions extends Pick<TaskListenOptions, 'keepAliveMs' | 'maxTaskIds' | 'onerror'> {
  /** The name of the `McpServer`s the handler's factory builds (the server part of their tasks' owners). Default: `serverName` of the options. */
  readonly serverName?: string;
  /** Stamped on the listen result that closes a stream. Default `{ name: serverName, version: '0.0.0' }`. */
  readonly serverInfo?: Implementation;
}

/** Options of {@link McpTasks.legacyTasks}. */
export interface McpTasksLegacyOptions {
  /** The name of the `McpServer`s the handler's factory builds. Default: `serverName` of the options. */
  readonly serverName?: string;
  /** Interval of `: keepalive` comments on `tasks/result` streams. Default 15 s. */
  readonly keepAliveMs?: number;
  readonly onerror?: (error: Error) => void;
}

/** Options of {@link McpTasks.handler}. */
export interface McpTasksHandlerOptions extends Pick<TaskListenOptions, 'keepAliveMs' | 'maxTaskIds'> {
  /** The McpServer's name: the server part of its tasks' owners, so every node must use the same one. */
  readonly name: string;
  readonly version: string;
  /** The task tools ({@link defineTool}). */
  readonly tools?: readonly AnyTaskTool[];
  /** Task tools beside `tools` whose list changes while serving: each request gets the list of its moment ({@link LiveTaskTools}). */
  readonly liveTools?: LiveTaskTools;
  /** Adds the ordinary SDK tools, resources and prompts to each request's McpServer (`server.registerTool(...)`). */
  readonly register?: (server: McpServer, context: McpRequestContext) => void;
  /** The McpServer's options (instructions, capabilities, ...). */
  readonly serverOptions?: McpServerOptions;
  /** `createMcpHandler`'s options (legacy, responseMode, bus, ...); `onerror` is the one below. */
  readonly handlerOptions?: Omit<CreateMcpHandlerOptions, 'onerror'>;
  /** Errors that do not reach the client, from the SDK's handler and from task listen streams. */
  readonly onerror?: (error: Error) => void;
  /** Upstream MCP servers whose tools are served next to these ({@link proxyUpstream}); their tasks become this server's. */
  readonly upstreams?: readonly UpstreamMount[];
  /**
   * Serve the 2026-07-28 `tasks/get|update|cancel`, and the `tools/call` of a task tool that
   * becomes a task, in front of the SDK without a per-request McpServer (same answers; see
   * {@link McpTasksHandler.serveDirect}). Default true; `false`
   * sends every request through the SDK.
   */
  readonly directTasks?: boolean;
  /**
   * Host names the `Host` header may name (no port; `[::1]` for IPv6), against DNS rebinding:
   * others get 403 before anything else. Default `'any'`: a handler does not know where it is
   * bound; a server on loopback should pass `LOOPBACK_HOSTS` (the demo does).
   */
  readonly allowedHosts?: readonly string[] | 'any';
  /**
   * Origins a browser's request may come from besides the server's own host name: origins
   * (`https://app.example`) or host names; `'any'` turns the check off. Default none: a request
   * with a foreign `Origin` gets 403 (the MCP transport asks servers to validate it); one without
   * `Origin` (every non-browser client) is served.
   */
  readonly allowedOrigins?: readonly string[] | 'any';
  /** Largest request body {@link McpTasksHandler.node} reads, in bytes (413 past it). Default 4 MiB. */
  readonly maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What {@link McpTasks.register} reads of the `createMcpHandler` factory's context. */
export type RegisterContext = Pick<McpRequestContext, 'requestInfo'> & Partial<Pick<McpRequestContext, 'era' | 'authInfo'>>;

/** Changed in place when a handler's {@link LiveTaskTools} change: the fast path and each request's McpServer read it then. */
interface PreparedTools {
  readonly byName: Map<string, TaskTool>;
  readonly registrations: Array<{ readonly tool: TaskTool; readonly config: ReturnType<typeof toolConfig> }>;
}

/**
 * MCP tasks for servers built on `McpServer`: one instance per process owns the task runtime;
 * {@link handler} returns the whole MCP endpoint (task tools, ordinary tools, `tasks/*`, the
 * listen edge, the body checks). Ordinary tools stay ordinary `registerTool` calls.
 *
 * ```ts
 * const tasks = new McpTasks({ store, node });
 * const handler = tasks.handler({ name: 'files', version: '1.0.0', tools: [exportTool], register: (server) => server.registerTool(...) });
 * http.createServer(handler.node).listen(3000);
 * ```
 */
export class McpTasks {
  readonly runtime: TaskRuntime;
  readonly enabled: boolean;
  readonly #resolveOwner: OwnerResolver;
  /** Whether owners are {@link defaultOwnerResolver}'s (the handler then refuses tokens without a subject). */
  readonly #defaultOwner: boolean;
  readonly #serverName: string | undefined;
  readonly #maxArgumentBytes: number;
  readonly #classifyError: RpcErrorClassifier;
  readonly #tracer: McpRequestTracer;
  readonly #logger: Logger;
  readonly #listens = new Set<TaskListenHandler>();
  readonly #node: TaskNode | undefined;
  readonly #claimed = new Set<string>();
  readonly #limits: RequestLimits;
  readonly #streamCaps: ListenStreamCaps | undefined;
  readonly #resultStreamCaps: ListenStreamCaps | undefined;
  readonly #refusalHold: RefusalHold;
  /** The one admission of every request of this instance's handlers, on either lane. */
  readonly #admission: Admission;
  readonly #mistakes: ClientMistakeLog;
  readonly #listTasks: ListTasksPolicy;
  readonly #legacyEdges = new Set<LegacyTasksHandler>();
  readonly #proxies = new Set<UpstreamProxy>();
  /** Upstreams mounted by this instance's handlers: each relays its tasks under one name, on one handler. */
  readonly #upstreamNames = new Set<string>();
  readonly #meterProvider: MeterProvider | undefined;

  constructor(options: McpTasksOptions = {}) {
    assertSdkSeams();
    const { store, tasks, resolveOwner, hostScope, serverName, classifyError, maxArgumentBytes, rateLimit, inFlight, admission, toolRuns, listenStreams, resultStreams, refusalHold, listTasks, clientMistakes, ...runtimeOptions } =
      options;
    this.#mistakes = new ClientMistakeLog(runtimeOptions.telemetry?.meterProvider, clientMistakes);
    this.#listTasks = listTasks ?? 'authorized';
    this.#streamCaps = listenStreams === false ? undefined : new ListenStreamCaps(listenStreams);
    this.#resultStreamCaps = resultStreams === false ? undefined : new ListenStreamCaps(resultStreams, 'resultStreams', 'open tasks/result streams');
    this.#refusalHold = new RefusalHold(refusalHold, new LimitRefusalCounter(runtimeOptions.telemetry?.meterProvider));
    this.#node = options.node;
    this.#logger = options.logger ?? defaultLogger();
    const classify: RpcErrorClassifier = classifyError ? (error) => classifySdkError(error) ?? classifyError(error) : classifySdkError;
    this.runtime = new TaskRuntime({ ...runtimeOptions, store: store ?? new MemoryTaskStore(), classifyError: classify });
    this.#limits = new RequestLimits({
      rateLimit,
      inFlight,
      admission,
      toolRuns,
      pollIntervalMs: this.runtime.pollIntervalMs,
      maxTasksPerOwner: this.runtime.maxPerPrincipal,
      meterProvider: runtimeOptions.telemetry?.meterProvider,
    });
    this.#admission = new Admission(this.#limits, this.#refusalHold);
    // Inline runs recognise the same errors as tasks do (the runtime adds its own JsonRpcError).
    this.#classifyError = (error) => classifyOwnRpcError(error) ?? classify(error);
    this.enabled = tasks !== false;
    this.#defaultOwner = resolveOwner === undefined;
    this.#resolveOwner = resolveOwner ?? defaultOwnerResolver(hostScope === undefined ? {} : { hostScope });
    this.#serverName = serverName;
    this.#maxArgumentBytes = maxArgumentBytes ?? 1024 * 1024;
    this.#tracer = new McpRequestTracer(runtimeOptions.telemetry?.tracerProvider);
    this.#meterProvider = runtimeOptions.telemetry?.meterProvider;
  }

  /**
   * The whole MCP endpoint in one call: a `createMcpHandler` handler whose per-request
   * `McpServer` (named `name`, the server part of its tasks' owners) has the task `tools`, the
   * ordinary tools `register` adds, `tasks/get|update|cancel` and the extension capability; in
   * front of it the `notifications/tasks` listen edge ({@link listen}) and the body checks
   * ({@link checkRequestBody}). Serve it as the SDK's own handler:
   * `createServer(handler.node)` on node:http (with the fast lane), or
   * `handler.fetch(request, { authInfo, parsedBody })` on Express, Hono or any fetch host. {@link drain} and
   * {@link close} end its listen streams; close the handler itself before `tasks.close()`.
   */
  handler(options: McpTasksHandlerOptions): McpTasksHandler {
    const { name, version, tools = [], liveTools, register, serverOptions, handlerOptions, onerror, upstreams = [], directTasks, allowedHosts, allowedOrigins, maxBodyBytes, ...listenOptions } = options;
    const originPolicy = originPolicyOf(allowedHosts ?? 'any', allowedOrigins ?? []);
    const prepared = this.#prepare(liveTools ? [...tools, ...liveTools.current()] : tools);
    liveTools?.onChange((now) => this.#refill(prepared, [...tools, ...now]));
    for (const mount of upstreams) {
      if (this.#upstreamNames.has(mount.name)) throw new Error(`McpTasks: upstream ${mount.name} is already mounted by another handler`);
      this.#upstreamNames.add(mount.name);
    }
    const proxy = upstreams.length === 0 ? undefined : new UpstreamProxy(this.runtime, this.enabled, upstreams, this.#maxArgumentBytes, { meterProvider: this.#meterProvider });
    if (proxy) this.#proxies.add(proxy);
    // Proxied and live tools need the McpServer's tool handlers even when the host has no tool of its own (yet).
    const mcpOptions = proxy || liveTools ? { ...serverOptions, capabilities: { tools: {}, ...serverOptions?.capabilities } } : serverOptions;
    const sdkHandler = createMcpHandler(
      (context) => {
        const server = new McpServer({ name, version }, mcpOptions);
        register?.(server, context);
        this.#install(server, prepared, name, context, proxy);
        return server;
      },
      {
        ...handlerOptions,
        // A client's mistake is counted and sampled, never one stack per request in the host's log.
        onerror: (error: Error) => {
          const mistake = clientMistakeKind(error);
          if (mistake) this.#mistakes.record(mistake, error);
          else onerror?.(error);
        },
      },
    );
    const errors = onerror === undefined ? {} : { onerror };
    const legacy = this.enabled
      ? this.legacyTasks(sdkHandler, { serverName: name, ...errors, ...(listenOptions.keepAliveMs === undefined ? {} : { keepAliveMs: listenOptions.keepAliveMs }) })
      : sdkHandler;
    const listen = this.listen(legacy, { ...listenOptions, serverName: name, serverInfo: { name, version }, ...errors });
    // The direct path answers in JSON, as the SDK does unless told to stream every answer.
    const direct = this.enabled && directTasks !== false && handlerOptions?.responseMode !== 'sse';
    // With upstreams the proxy routes every tools/call first: those stay the SDK lane's.
    const fast = direct
      ? fastLane({
          resolveOwner: this.#resolveOwner,
          serverName: name,
          admission: this.#admission,
          tasks: taskRequestServer({
            runtime: this.runtime,
            serverInfo: { name, version },
            tracer: this.#tracer,
            admission: this.#admission,
            onerror,
            ...(proxy ? { cancelling: (deps, cancel) => proxy.cancelling(deps, cancel) } : {}),
          }),
          toolCalls:
            !proxy && (prepared.byName.size > 0 || liveTools)
              ? toolCallServer({
                  runtime: this.runtime,
                  serverInfo: { name, version },
                  tracer: this.#tracer,
                  tools: prepared.byName,
                  maxArgumentBytes: this.#maxArgumentBytes,
                  admission: this.#admission,
                })
              : undefined,
        })
      : undefined;
    return frontDoor({
      sdk: listen,
      fast,
      originPolicy,
      // The default owner has no owner for a token without a subject; a host's own resolver decides.
      subjectRequired: this.#defaultOwner,
      maxBodyBytes: maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      onerror: onerror ?? ((error) => this.#logger.error({ err: logSafe(error.message) }, 'MCP request failed')),
    });
  }

  /**
   * Adds `tools` to `server` (listed with `execution.taskSupport`), serves them as tasks to
   * requests that declare the extension, and adds `tasks/get`, `tasks/update`, `tasks/cancel`
   * and the extension capability. Call it once per `McpServer` instance (with `createMcpHandler`,
   * in the factory). {@link handler} does this, and the rest of the wiring, in one call.
   *
   * With authorization, a tool's `scopes` are its SDK scope challenge (403 `insufficient_scope`
   * before the call is handled), and every `tasks/*` request on its tasks gets the same challenge
   * once the owner-scoped lookup found the task. Pass the factory's context (`requestInfo`) so
   * that check resolves the owner from the same HTTP request as the handlers; its `era` and
   * `authInfo` tell a 2025-11-25 request (served that revision's task calls and `capabilities.tasks`).
   */
  register(server: McpServer, tools: readonly AnyTaskTool[], context?: RegisterContext): void {
    this.#install(server, this.#prepare(tools), this.#serverName ?? serverNameOf(server) ?? 'mcp-server', context);
  }

  /**
   * Puts 2025-11-25 tasks in front of `handler` (the SDK's stateless legacy serving could neither
   * stream a task's input requests nor receive their answers): that revision's `tasks/get`,
   * `tasks/list`, `tasks/cancel`, `tasks/result` and the POSTed answers to input requests are
   * served from the task rows; everything else goes to `handler`. {@link handler} does this;
   * hosts that build their own put it inside {@link listen}. See {@link withLegacyTasks}.
   */
  legacyTasks(handler: McpHttpHandler, options: McpTasksLegacyOptions = {}): LegacyTasksHandler {
    const serverName = options.serverName ?? this.#serverName;
    if (serverName === undefined) throw new Error('McpTasks.legacyTasks: pass serverName (the name of the McpServer the handler serves)');
    const onerror = options.onerror;
    const edge = withLegacyTasks(handler, {
      runtime: this.runtime,
      ownerOf: ownerOfRequest(this.#resolveOwner, serverName),
      listTasks: this.#listTasks,
      keepAliveMs: options.keepAliveMs ?? 15_000,
      onerror: onerror ?? ((error) => this.#logger.error({ err: logSafe(error.message) }, 'legacy tasks edge failed')),
      ...(this.#resultStreamCaps ? { streamCaps: this.#resultStreamCaps } : {}),
      refusalHold: this.#refusalHold,
      tracer: this.#tracer,
      cancelled: (ref) => {
        for (const proxy of this.#proxies) proxy.cancelled(ref);
      },
    });
    this.#legacyEdges.add(edge);
    return edge;
  }

  /** What registering `tools` needs that does not depend on the request: done once per handler. */
  #prepare(tools: readonly AnyTaskTool[]): PreparedTools {
    this.claimTools(tools);
    const byName = new Map<string, TaskTool>();
    const registrations = tools.map((erased) => {
      // Sound by construction: the adapter only ever calls a tool with what its own schema parsed.
      const tool = erased as unknown as TaskTool;
      if (byName.has(tool.name)) throw new Error(`McpTasks: two task tools are named ${tool.name}`);
      byName.set(tool.name, tool);
      return { tool, config: toolConfig(tool) };
    });
    return { byName, registrations };
  }

  /** Serves `tools` instead (a live list changed): checked and claimed first, then changed in place. */
  #refill(prepared: PreparedTools, tools: readonly AnyTaskTool[]): void {
    const next = this.#prepare(tools);
    prepared.byName.clear();
    for (const [name, tool] of next.byName) prepared.byName.set(name, tool);
    prepared.registrations.splice(0, prepared.registrations.length, ...next.registrations);
  }

  #install(server: McpServer, prepared: PreparedTools, serverName: string, context: RegisterContext | undefined, proxy?: UpstreamProxy): void {
    const requestInfo = context?.requestInfo;
    const legacy = context?.era === 'legacy';
    const ownerFor = ownerOfRequest(this.#resolveOwner, serverName);
    const ownerOf = (ctx: ServerContext): Promise<TaskOwner> => ownerFor(ctx.http?.authInfo, ctx.http?.req ?? requestInfo);

    for (const { tool, config } of prepared.registrations) {
      const registered = server.registerTool(
        tool.name,
        config,
        (async (args: unknown, ctx: ServerContext) => runInline(tool, args, await ownerOf(ctx), ctx)) as never,
      );
      if (this.enabled) setTaskSupport(registered, tool.task);
    }
    // One memo per McpServer, so per request: the scope challenge's read serves the handler.
    const memo = new TaskReadMemo();
    const deps: HandlerDeps = { runtime: this.runtime, ownerOf, memo };
    if (proxy) {
      takeOverToolsList(server, (own) => async (request, ctx) => {
        const listed = (await own(request, ctx)) as Result & { tools?: Array<{ name: string }> };
        const ownTools = listed.tools ?? [];
        return { ...listed, tools: [...ownTools, ...(await proxy.listings(new Set(ownTools.map((tool) => tool.name))))] };
      });
      takeOverToolsCall(server, (own) => {
        const local = this.enabled && prepared.byName.size > 0 ? this.#toolsCall(deps, prepared, own, legacy) : own;
        const route = proxy.route(deps, local, registeredToolNames(server), legacy && this.enabled ? LEGACY_REVISION : undefined);
        return (request, ctx) => this.#tracer.trace({ method: 'tools/call', ...toolNameOf(request) }, ctx, () => route(request, ctx));
      });
    }
    if (!this.enabled) return;

    // One revision's advertisement each: a 2025-11-25 client reads `capabilities.tasks` in
    // `initialize` (auth info decides tasks/list), and the 2026-07-28 extension is not defined
    // there (SEP-2663), so it is not put beside it.
    if (legacy) server.server.registerCapabilities({ tasks: legacyTasksCapability(servesTaskList(this.#listTasks, context?.authInfo !== undefined)) } as never);
    else server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    challengeMethods(server, TASK_METHODS, taskScopeChallenge({ store: this.runtime.store, ownerFor: (authInfo) => ownerFor(authInfo, requestInfo), memo }));
    const traced = (method: string, handle: (params: unknown, ctx: ServerContext) => Promise<Result>) =>
      (params: unknown, ctx: ServerContext) => this.#tracer.trace({ method, ...taskIdOf(params) }, ctx, () => handle(params, ctx));
    // The SDK lane's way through the method table: each row's handler on the McpServer (the fast lane calls the same ones).
    for (const [method, row] of Object.entries(TASK_METHODS_2026)) {
      const handle: TaskHandler = method === 'tasks/cancel' && proxy ? proxy.cancelling(deps, row.handler(deps)) : row.handler(deps);
      server.server.setRequestHandler(method as never, { params: looseParams } as never, traced(row.span, handle) as never);
    }
    if (prepared.byName.size === 0 || proxy) return;

    // A CreateTaskResult must leave unwrapped (the McpServer's tools/call validates results as
    // CallToolResult); its own handler still serves everything that is not a task.
    takeOverToolsCall(server, (own) => {
      const toolsCall = this.#toolsCall(deps, prepared, own, legacy);
      return (request, ctx) => this.#tracer.trace({ method: 'tools/call', ...toolNameOf(request) }, ctx, () => toolsCall(request, ctx));
    });
  }

  #toolsCall(deps: HandlerDeps, prepared: PreparedTools, own: SdkRequestHandler, legacy: boolean): SdkRequestHandler {
    return taskToolsCall(deps, {
      tools: prepared.byName,
      inline: own,
      maxArgumentBytes: this.#maxArgumentBytes,
      classifyError: this.#classifyError,
      ...(legacy ? { revision: LEGACY_REVISION } : {}),
    });
  }

  /**
   * Lets this node run the tasks of `tools` that it claims: tasks queued beyond a node's
   * `maxConcurrentRuns`, and resumable tasks released by a node that was lost or drained. Call it
   * at start-up, so a node claims before any request reached it ({@link register} calls it too). A
   * claimed run has the stored arguments and client capabilities, and `prepare`'s value when it
   * was JSON of at most 64 KiB (`undefined` otherwise); a 2025-11-25 task runs `prepare` there.
   */
  claimTools(tools: readonly AnyTaskTool[]): void {
    if (!this.enabled) return;
    for (const erased of tools) {
      const tool = erased as unknown as TaskTool;
      if (this.#claimed.has(tool.name)) continue;
      this.#claimed.add(tool.name);
      this.runtime.registerTool(tool.name, {
        resumable: tool.resumable,
        execute: claimedTaskExecute(tool),
      });
    }
  }

  /**
   * Puts `notifications/tasks` on `subscriptions/listen` in front of `handler` (the SDK serves
   * listens only for list-changed kinds): the returned handler serves listens that carry
   * `params.notifications.taskIds` for the caller's own tasks (owner resolved as for `tasks/*`,
   * with their scopes) and passes everything else to `handler`. {@link drain} and {@link close}
   * end its open streams. See {@link withTaskListen}.
   */
  listen(handler: McpHttpHandler, options: McpTasksListenOptions = {}): TaskListenHandler {
    const serverName = options.serverName ?? this.#serverName;
    if (serverName === undefined) throw new Error('McpTasks.listen: pass serverName (the name of the McpServer the handler serves)');
    const listen = withTaskListen(handler, {
      runtime: this.runtime,
      ownerOf: ownerOfRequest(this.#resolveOwner, serverName),
      serverInfo: options.serverInfo ?? { name: serverName, version: '0.0.0' },
      ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
      ...(options.maxTaskIds === undefined ? {} : { maxTaskIds: options.maxTaskIds }),
      ...(options.onerror === undefined ? {} : { onerror: options.onerror }),
      limits: this.#limits,
      // Tools this instance runs as tasks: their calls meet the limits of task tool calls.
      isTaskTool: (tool) => this.#claimed.has(tool),
      ...(this.#streamCaps ? { streamCaps: this.#streamCaps } : {}),
      refusalHold: this.#refusalHold,
      tracer: this.#tracer,
    });
    this.#listens.add(listen);
    return listen;
  }

  /**
   * Stops taking tasks and waits up to `deadlineMs` for running ones; the rest fail clearly. Then
   * ends the open task listen streams (after a last look at their tasks, so the failures go out).
   */
  async drain(deadlineMs: number): Promise<void> {
    this.#refusalHold.stop();
    await this.runtime.drain(deadlineMs);
    await Promise.all([...this.#listens].map((listen) => listen.endStreams()));
    for (const edge of this.#legacyEdges) edge.endStreams();
  }

  /** Stops the runtime, then the node's services, then closes the store. */
  async close(): Promise<void> {
    for (const proxy of this.#proxies) proxy.stop();
    this.#refusalHold.stop();
    this.#limits.stop();
    await Promise.all([...this.#listens].map((listen) => listen.endStreams()));
    for (const edge of this.#legacyEdges) edge.endStreams();
    await this.runtime.close();
    await this.#node?.stop();
    await this.runtime.store.close();
  }
}

/** What `registerTool` gets for a task tool: what tools/list shows, and the SDK's scope challenge. */
function toolConfig(tool: TaskTool) {
  return {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    annotations: tool.annotations,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.icons ? { icons: [...tool.icons] } : {}),
    ...(tool._meta ? { _meta: { ...tool._meta } } : {}),
    ...(tool.scopes.length > 0 ? { scopeChallenge: requireScopes(...(tool.scopes as [string, ...string[]])) } : {}),
  };
}

function taskIdOf(params: unknown): { taskId?: string } {
  const taskId = typeof params === 'object' && params !== null ? (params as { taskId?: unknown }).taskId : undefined;
  return typeof taskId === 'string' ? { taskId } : {};
}

function toolNameOf(request: JSONRPCRequest): { toolName?: string } {
  const name = (request.params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? { toolName: name } : {};
}
