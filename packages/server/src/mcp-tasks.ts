import { classifyOwnRpcError, MemoryTaskStore, TaskRuntime, type RpcErrorClassifier, type TaskNode, type TaskOwner, type TaskRuntimeOptions, type TaskStore } from '@mcp-tasks/core';
import { McpServer, ProtocolError, ProtocolErrorCode, requireScopes, type AuthInfo, type Implementation, type JSONRPCRequest, type McpHttpHandler, type McpRequestContext, type Result, type ServerContext } from '@modelcontextprotocol/server';
import { taskScopeChallenge, TASK_METHODS } from './auth/task-scope-challenge.js';
import { TASKS_EXTENSION } from './capability/tasks-extension.js';
import { classifySdkError } from './errors/classify-sdk-error.js';
import type { HandlerDeps } from './handlers/handler-deps.js';
import { looseParams } from './handlers/loose-params.js';
import { ListenStreamCaps, type ListenStreamCapOptions } from './limits/listen-stream-caps.js';
import { OwnerRateLimiter, type RateLimitOptions } from './limits/owner-rate-limiter.js';
import { withTaskListen, type TaskListenHandler, type TaskListenOptions } from './listen/task-listen.js';
import { tasksCancel } from './handlers/tasks-cancel.js';
import { tasksGet } from './handlers/tasks-get.js';
import { tasksUpdate } from './handlers/tasks-update.js';
import { taskToolsCall } from './handlers/tools-call.js';
import { defaultOwnerResolver, type DefaultOwnerOptions, type OwnerResolver } from './owner/owner-resolver.js';
import { McpRequestTracer } from './telemetry/mcp-request-tracer.js';
import type { AnyTaskTool, TaskTool } from './tool/define-tool.js';
import { runInline } from './tool/run-inline.js';

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
   * Per-owner token bucket on `tasks/*` and `subscriptions/listen` of the handlers {@link McpTasks.listen}
   * returns, per node. Default 50 requests/s, burst 200; `false` turns it off.
   */
  readonly rateLimit?: RateLimitOptions | false;
  /** Caps on open task listen streams of this node's handlers. Default 16 per owner, 1 000 per node; `false` turns them off. */
  readonly listenStreams?: ListenStreamCapOptions | false;
}

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** Options of {@link McpTasks.listen}. */
export interface McpTasksListenOptions extends Pick<TaskListenOptions, 'keepAliveMs' | 'maxTaskIds' | 'onerror'> {
  /** The name of the `McpServer`s the handler's factory builds (the server part of their tasks' owners). Default: `serverName` of the options. */
  readonly serverName?: string;
  /** Stamped on the listen result that closes a stream. Default `{ name: serverName, version: '0.0.0' }`. */
  readonly serverInfo?: Implementation;
}

/** The SDK seams this adapter uses that the `McpServer` types do not show. */
interface ServerSeams {
  _serverInfo?: { name?: string };
  _getRequestHandler(method: string): Handler | undefined;
}

/**
 * MCP tasks for servers built on `McpServer`: one instance per process owns the task runtime;
 * {@link register} adds task tools, `tasks/get|update|cancel` and the capability to each
 * `McpServer` the handler factory builds. Ordinary tools stay ordinary `registerTool` calls.
 *
 * ```ts
 * const tasks = new McpTasks({ store });
 * const handler = createMcpHandler(() => {
 *   const server = new McpServer({ name: 'files', version: '1.0.0' });
 *   server.registerTool('greet', { ... }, greet);
 *   tasks.register(server, [exportTool]);
 *   return server;
 * });
 * ```
 */
export class McpTasks {
  readonly runtime: TaskRuntime;
  readonly enabled: boolean;
  readonly #resolveOwner: OwnerResolver;
  readonly #serverName: string | undefined;
  readonly #maxArgumentBytes: number;
  readonly #classifyError: RpcErrorClassifier;
  readonly #tracer: McpRequestTracer;
  readonly #listens = new Set<TaskListenHandler>();
  readonly #node: TaskNode | undefined;
  readonly #rateLimiter: OwnerRateLimiter | undefined;
  readonly #streamCaps: ListenStreamCaps | undefined;

  constructor(options: McpTasksOptions = {}) {
    const { store, tasks, resolveOwner, hostScope, serverName, classifyError, maxArgumentBytes, rateLimit, listenStreams, ...runtimeOptions } = options;
    this.#rateLimiter = rateLimit === false ? undefined : new OwnerRateLimiter(rateLimit);
    this.#streamCaps = listenStreams === false ? undefined : new ListenStreamCaps(listenStreams);
    this.#node = options.node;
    const classify: RpcErrorClassifier = classifyError ? (error) => classifySdkError(error) ?? classifyError(error) : classifySdkError;
    this.runtime = new TaskRuntime({ ...runtimeOptions, store: store ?? new MemoryTaskStore(), classifyError: classify });
    // Inline runs recognise the same errors as tasks do (the runtime adds its own JsonRpcError).
    this.#classifyError = (error) => classifyOwnRpcError(error) ?? classify(error);
    this.enabled = tasks !== false;
    this.#resolveOwner = resolveOwner ?? defaultOwnerResolver(hostScope === undefined ? {} : { hostScope });
    this.#serverName = serverName;
    this.#maxArgumentBytes = maxArgumentBytes ?? 1024 * 1024;
    this.#tracer = new McpRequestTracer(runtimeOptions.telemetry?.tracerProvider);
  }

  /**
   * Adds `tools` to `server` (listed with `execution.taskSupport`), serves them as tasks to
   * requests that declare the extension, and adds `tasks/get`, `tasks/update`, `tasks/cancel`
   * and the extension capability. Call it once per `McpServer` instance (with `createMcpHandler`,
   * in the factory).
   *
   * With authorization, a tool's `scopes` are its SDK scope challenge (403 `insufficient_scope`
   * before the call is handled), and every `tasks/*` request on its tasks gets the same challenge
   * once the owner-scoped lookup found the task. Pass the factory's context (`requestInfo`) so
   * that check resolves the owner from the same HTTP request as the handlers.
   */
  register(server: McpServer, tools: readonly AnyTaskTool[], context?: Pick<McpRequestContext, 'requestInfo'>): void {
    const seams = server.server as unknown as ServerSeams;
    const serverName = this.#serverName ?? seams._serverInfo?.name ?? 'mcp-server';
    const ownerFor = (authInfo: AuthInfo | undefined, request: Request | undefined): Promise<TaskOwner> =>
      Promise.resolve(this.#resolveOwner({ authInfo, request, serverName }));
    const ownerOf = (ctx: ServerContext): Promise<TaskOwner> => ownerFor(ctx.http?.authInfo, ctx.http?.req ?? context?.requestInfo);
    const byName = new Map<string, TaskTool>();

    for (const erased of tools) {
      // Sound by construction: the adapter only ever calls a tool with what its own schema parsed.
      const tool = erased as unknown as TaskTool;
      byName.set(tool.name, tool);
      const registered = server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input,
          annotations: tool.annotations,
          ...(tool.scopes.length > 0 ? { scopeChallenge: requireScopes(...(tool.scopes as [string, ...string[]])) } : {}),
        },
        (async (args: unknown, ctx: ServerContext) => runInline(tool, args, await ownerOf(ctx), ctx)) as never,
      );
      if (this.enabled) {
        // registerTool has no `execution` option; tools/list reads it from the registered tool.
        (registered as { execution?: { taskSupport: string } }).execution = { taskSupport: tool.task };
      }
    }
    if (!this.enabled) return;

    const deps: HandlerDeps = { runtime: this.runtime, ownerOf };
    server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    // The SDK asks McpServer.resolveScopeChallenge before dispatching each request (a seam it
    // marks internal; test/auth-*.test.ts covers it): tasks/* get their task's scopes there.
    const sdkChallenge = server.resolveScopeChallenge;
    const taskChallenge = taskScopeChallenge({ store: this.runtime.store, ownerFor: (authInfo) => ownerFor(authInfo, context?.requestInfo) });
    server.resolveScopeChallenge = (challengeContext) =>
      TASK_METHODS.has(challengeContext.request.method) ? taskChallenge(challengeContext) : sdkChallenge(challengeContext);
    const traced = (method: string, handle: (params: unknown, ctx: ServerContext) => Promise<Result>) =>
      (params: unknown, ctx: ServerContext) => this.#tracer.trace({ method, ...taskIdOf(params) }, ctx, () => handle(params, ctx));
    server.server.setRequestHandler('tasks/get' as never, { params: looseParams } as never, traced('tasks/get', tasksGet(deps)) as never);
    server.server.setRequestHandler('tasks/update' as never, { params: looseParams } as never, traced('tasks/update', tasksUpdate(deps)) as never);
    server.server.setRequestHandler('tasks/cancel' as never, { params: looseParams } as never, traced('tasks/cancel', tasksCancel(deps)) as never);

    // A CreateTaskResult must leave unwrapped (the wrapped tools/call handler validates results
    // as CallToolResult), so tools/call moves to the fallback handler and delegates to the
    // McpServer's own handler for everything that is not a task.
    const inline = seams._getRequestHandler('tools/call');
    if (!inline) throw new Error('McpTasks.register: the McpServer has no tools/call handler');
    server.server.removeRequestHandler('tools/call');
    const previous = server.server.fallbackRequestHandler;
    const toolsCall = taskToolsCall(deps, { tools: byName, inline, maxArgumentBytes: this.#maxArgumentBytes, classifyError: this.#classifyError });
    server.server.fallbackRequestHandler = async (request, ctx) => {
      if (request.method === 'tools/call') return this.#tracer.trace({ method: 'tools/call', ...toolNameOf(request) }, ctx, () => toolsCall(request, ctx));
      if (previous) return previous(request, ctx);
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    };
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
      ownerOf: (authInfo, request) => Promise.resolve(this.#resolveOwner({ authInfo, request, serverName })),
      serverInfo: options.serverInfo ?? { name: serverName, version: '0.0.0' },
      ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
      ...(options.maxTaskIds === undefined ? {} : { maxTaskIds: options.maxTaskIds }),
      ...(options.onerror === undefined ? {} : { onerror: options.onerror }),
      ...(this.#rateLimiter ? { rateLimiter: this.#rateLimiter } : {}),
      ...(this.#streamCaps ? { streamCaps: this.#streamCaps } : {}),
    });
    this.#listens.add(listen);
    return listen;
  }

  /**
   * Stops taking tasks and waits up to `deadlineMs` for running ones; the rest fail clearly. Then
   * ends the open task listen streams (after a last look at their tasks, so the failures go out).
   */
  async drain(deadlineMs: number): Promise<void> {
    await this.runtime.drain(deadlineMs);
    await Promise.all([...this.#listens].map((listen) => listen.endStreams()));
  }

  /** Stops the runtime, then the node's services, then closes the store. */
  async close(): Promise<void> {
    await Promise.all([...this.#listens].map((listen) => listen.endStreams()));
    await this.runtime.close();
    await this.#node?.stop();
    await this.runtime.store.close();
  }
}

function taskIdOf(params: unknown): { taskId?: string } {
  const taskId = typeof params === 'object' && params !== null ? (params as { taskId?: unknown }).taskId : undefined;
  return typeof taskId === 'string' ? { taskId } : {};
}

function toolNameOf(request: JSONRPCRequest): { toolName?: string } {
  const name = (request.params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? { toolName: name } : {};
}
