import { ErrorCode, type JsonObject } from '@mcp-tasks/core';
import { busyAwareFetch } from './busy-aware-fetch.js';
import { SideChannelInputs } from './side-channel-inputs.js';
import type { UpstreamCallOptions, UpstreamCallOutcome, UpstreamClient, UpstreamTask, UpstreamTool } from './upstream-client.js';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';

const REVISION = '2025-11-25';
/** The TTL asked for an upstream task: the proxy's own task bounds its life, this only bounds a leak. */
const UPSTREAM_TTL_MS = 24 * 3_600_000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

type SdkClient = import('@modelcontextprotocol/sdk/client/index.js').Client;
type SdkTypes = typeof import('@modelcontextprotocol/sdk/types.js');
interface Connection {
  readonly client: SdkClient;
  readonly types: SdkTypes;
  /** The upstream session this connection speaks in (a stateful upstream), if any. */
  readonly session: string | undefined;
}

/** Connections kept to sessions of other nodes' tasks (a relay taken over), the oldest closed first. */
const MAX_SESSION_CONNECTIONS = 64;
/** How long one `tasks/result` that carries a task's input requests stays open (the next poll opens another). */
const SIDE_CHANNEL_MS = 10 * 60_000;
/** What the proxy may be asked over a side channel: the relay checks each request against its own caller. */
const RELAYED_CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };

/** Options of {@link StreamableHttp2025Client}. */
export interface StreamableHttp2025Options {
  /** The mounted upstream's name: what errors say instead of its URL. */
  readonly name: string;
  readonly url: string;
  /** The bearer token the proxy presents upstream. */
  readonly token?: string;
  /** How long one upstream request may take. Default 30 000 ms. */
  readonly timeoutMs?: number;
}

/**
 * An upstream speaking 2025-11-25 with its tasks (`params.task` on `tools/call`, `tasks/get`,
 * `tasks/result`, `tasks/cancel`), through the 1.x SDK's client (`@modelcontextprotocol/sdk`, an
 * optional peer dependency loaded on first use). One connection per process, opened on first use
 * and again after a failure; a stateful upstream's tasks carry the session they were made in, and a
 * relay taken over by another node reaches its task through that session (no new `initialize`).
 * Input a 2025-11-25 upstream asks for over a task's `tasks/result` stream (server-to-client
 * requests tied to the task) is held ({@link SideChannelInputs}) and reported as the task's
 * `inputRequests`; an answer forwarded through {@link updateTask} becomes that request's response.
 */
export class StreamableHttp2025Client implements UpstreamClient {
  readonly revision = REVISION;
  readonly #options: StreamableHttp2025Options;
  #connection: Promise<Connection> | undefined;
  readonly #sessions = new Map<string, Promise<Connection>>();
  readonly #inputs = new SideChannelInputs();
  /** Upstream tasks with a `tasks/result` open on them, which carries their input requests. */
  readonly #following = new Set<string>();

  constructor(options: StreamableHttp2025Options) {
    this.#options = options;
  }

  async listTools(): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page += 1) {
      const result = await this.#call((client) => client.listTools(cursor === undefined ? {} : { cursor }, this.#requestOptions()), 'tools/list');
      for (const tool of result.tools) {
        tools.push({
          name: tool.name,
          inputSchema: tool.inputSchema as JsonObject,
          ...(tool.title === undefined ? {} : { title: tool.title }),
          ...(tool.description === undefined ? {} : { description: tool.description }),
          ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as JsonObject }),
          ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as JsonObject }),
          ...((tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport === 'required' ? { taskRequired: true } : {}),
        });
      }
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new UpstreamError(this.#options.name, 'answered something that is not MCP (tools/list did not end after 50 pages)');
  }

  async callTool(name: string, args: JsonObject, options: UpstreamCallOptions): Promise<UpstreamCallOutcome> {
    const { session } = await this.#connect(undefined);
    const result = (await this.#call(
      (client, types) =>
        client.request(
          {
            method: 'tools/call',
            params: {
              name,
              arguments: args,
              ...(options.tasks ? { task: { ttl: UPSTREAM_TTL_MS } } : {}),
              ...(options.traceContext && Object.keys(options.traceContext).length > 0 ? { _meta: { ...options.traceContext } } : {}),
            },
          },
          types.ResultSchema,
          this.#requestOptions(),
        ),
      'tools/call',
    )) as JsonObject;
    const task = result['task'];
    if (typeof task === 'object' && task !== null && !Array.isArray(task)) {
      return { kind: 'task', task: { ...this.#task(task as JsonObject), ...(session === undefined ? {} : { session }) } };
    }
    if (!Array.isArray(result['content'])) throw new UpstreamError(this.#options.name, 'answered something that is not MCP (a tools/call result has no content)');
    return { kind: 'result', result };
  }

  async getTask(taskId: string, session?: string): Promise<UpstreamTask | undefined> {
    let raw: JsonObject;
    try {
      raw = (await this.#call((client, types) => client.request({ method: 'tasks/get', params: { taskId } }, types.ResultSchema, this.#requestOptions()), 'tasks/get', session)) as JsonObject;
    } catch (error) {
      if (error instanceof UpstreamRpcError && error.code === ErrorCode.InvalidParams) return undefined;
      throw error;
    }
    const task = this.#task(raw);
    if (task.status === 'input_required') {
      // That revision asks for input only on a stream of tasks/result: keep one open.
      this.#follow(taskId, session);
      return { ...task, inputRequests: this.#inputs.outstanding(taskId) };
    }
    if (task.status === 'working') return task;
    this.#inputs.drop(taskId);
    if (task.status === 'cancelled') return task;
    // The outcome is the payload of tasks/result: the call's result, or the JSON-RPC error it failed with.
    try {
      const result = (await this.#call((client, types) => client.request({ method: 'tasks/result', params: { taskId } }, types.ResultSchema, this.#requestOptions()), 'tasks/result', session)) as JsonObject;
      const { _meta: _ignored, ...payload } = result;
      return { ...task, status: 'completed', result: payload };
    } catch (error) {
      if (!(error instanceof UpstreamRpcError)) throw error;
      return { ...task, status: 'failed', error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
    }
  }

  /** Answers the held side-channel requests by key: the SDK client posts each as its request's response. */
  async updateTask(taskId: string, inputResponses: JsonObject): Promise<void> {
    this.#inputs.answer(taskId, inputResponses);
  }

  /** Opens a `tasks/result` on the task, unless one is open: the requests it carries are held until answered. */
  #follow(taskId: string, session: string | undefined): void {
    if (this.#following.has(taskId)) return;
    this.#following.add(taskId);
    void this.#call((client, types) => client.request({ method: 'tasks/result', params: { taskId } }, types.ResultSchema, { timeout: SIDE_CHANNEL_MS }), 'tasks/result', session)
      // Its outcome is read again once tasks/get shows the task terminal; a failure is retried at the next poll.
      .catch(() => undefined)
      .finally(() => this.#following.delete(taskId));
  }

  async cancelTask(taskId: string, session?: string): Promise<void> {
    // Nobody answers what a cancelled task asked: its held requests are let go.
    this.#inputs.drop(taskId);
    await this.#call((client, types) => client.request({ method: 'tasks/cancel', params: { taskId } }, types.ResultSchema, this.#requestOptions()), 'tasks/cancel', session);
  }

  #task(raw: JsonObject): UpstreamTask {
    const { taskId, status } = raw;
    if (typeof taskId !== 'string' || typeof status !== 'string' || !(TERMINAL.has(status) || status === 'working' || status === 'input_required')) {
      throw new UpstreamError(this.#options.name, 'answered something that is not MCP (a task has no taskId or a status it does not define)');
    }
    return {
      taskId,
      status: status as UpstreamTask['status'],
      ...(typeof raw['statusMessage'] === 'string' ? { statusMessage: raw['statusMessage'] } : {}),
      ...(typeof raw['pollInterval'] === 'number' ? { pollIntervalMs: raw['pollInterval'] } : {}),
    };
  }

  #requestOptions(): { timeout: number } {
    return { timeout: this.#options.timeoutMs ?? 30_000 };
  }

  async #call<T>(run: (client: SdkClient, types: SdkTypes) => Promise<T>, method: string, session?: string): Promise<T> {
    const { client, types } = await this.#connect(session);
    try {
      return await run(client, types);
    } catch (error) {
      throw this.#translate(error, method, types, session);
    }
  }

  #translate(error: unknown, method: string, types: SdkTypes, session: string | undefined): Error {
    const { name } = this.#options;
    if (error instanceof UpstreamError) return error;
    if (error instanceof types.McpError) {
      if (error.code === types.ErrorCode.RequestTimeout) return new UpstreamError(name, `${method} did not answer within ${this.#options.timeoutMs ?? 30_000} ms`);
      if (error.code === types.ErrorCode.ConnectionClosed) {
        this.#forget(session);
        return new UpstreamError(name, `${method}: the connection to the upstream closed`);
      }
      // The SDK reports a result it could not parse as -32602/-32603 of its own; the upstream's
      // own errors come through with their codes.
      return new UpstreamRpcError(name, error.code, error.message.replace(/^MCP error -?\d+: /, ''), error.data);
    }
    // Transport failures (connection refused, HTTP errors) drop the connection: the next call opens another.
    this.#forget(session);
    return new UpstreamError(name, `${method} could not reach the upstream`);
  }

  #forget(session: string | undefined): void {
    if (session === undefined) this.#connection = undefined;
    else this.#sessions.delete(session);
  }

  /** The process's connection, or, for a task of another session, a connection to that session. */
  async #connect(session: string | undefined): Promise<Connection> {
    const own = this.#connection ?? (this.#connection = this.#open(undefined));
    if (session === undefined) return own;
    const current = await own.catch(() => undefined);
    if (current?.session === session) return current;
    let other = this.#sessions.get(session);
    if (!other) {
      other = this.#open(session);
      this.#sessions.set(session, other);
      other.catch(() => this.#sessions.delete(session));
      if (this.#sessions.size > MAX_SESSION_CONNECTIONS) {
        const [oldest, closing] = this.#sessions.entries().next().value as [string, Promise<Connection>];
        this.#sessions.delete(oldest);
        void closing.then((connection) => connection.client.close()).catch(() => undefined);
      }
    }
    return other;
  }

  /** A new connection: `initialize` for a new session, none to reach an existing `session`. */
  async #open(session: string | undefined): Promise<Connection> {
    const { name, url, token, timeoutMs = 30_000 } = this.#options;
    try {
      const [{ Client }, { StreamableHTTPClientTransport }, types] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
        import('@modelcontextprotocol/sdk/types.js'),
      ]);
      const client = new Client({ name: 'mcp-tasks-proxy', version: '0.1.0' }, { capabilities: RELAYED_CAPABILITIES });
      const held = (method: string) => async (request: { params?: Record<string, unknown> }, extra: { requestId: string | number }) => {
        const upstreamTaskId = SideChannelInputs.taskOf(request.params);
        // Only a task's input has a relay to answer it.
        if (upstreamTaskId === undefined) throw new types.McpError(types.ErrorCode.InvalidRequest, `${method} outside a task is not relayed by this proxy`);
        return (await this.#inputs.hold(upstreamTaskId, extra.requestId, { method, params: withoutRelatedTask(request.params) })) as never;
      };
      client.setRequestHandler(types.ElicitRequestSchema, held('elicitation/create'));
      client.setRequestHandler(types.CreateMessageRequestSchema, held('sampling/createMessage'));
      client.setRequestHandler(types.ListRootsRequestSchema, held('roots/list'));
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        fetch: busyAwareFetch(name),
        ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
        ...(session === undefined ? {} : { sessionId: session }),
      });
      await client.connect(transport, { timeout: timeoutMs });
      return { client, types, session: transport.sessionId };
    } catch (error) {
      this.#forget(session);
      // A busy upstream is alive: whoever asked stands back for its Retry-After.
      if (error instanceof UpstreamError && error.busy) throw error;
      if (error instanceof Error && /Cannot find (module|package)/.test(error.message)) {
        throw new UpstreamError(name, 'a 2025-11-25 upstream needs the @modelcontextprotocol/sdk package installed');
      }
      throw new UpstreamError(name, 'initialize could not reach the upstream');
    }
  }
}

/** A request's params without the related-task `_meta` entry (the proxy asks under its own task). */
function withoutRelatedTask(params: Record<string, unknown> | undefined): JsonObject {
  const { _meta, ...rest } = params ?? {};
  const meta = { ...((_meta as Record<string, unknown> | undefined) ?? {}) };
  delete meta['io.modelcontextprotocol/related-task'];
  return (Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest) as JsonObject;
}
