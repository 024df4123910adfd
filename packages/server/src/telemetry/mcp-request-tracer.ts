import {
  context as otelContext,
  isSpanContextValid,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ServerContext } from '@modelcontextprotocol/server';
import { creatorSpanContext } from '@mcp-tasks/core';
import { metaGetter } from './meta-carrier.js';

const SCOPE = '@mcp-tasks/server';
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
/** What the SDK answers for a handler error that is not a JSON-RPC error. */
const INTERNAL_ERROR = -32603;

/** What a request span knows before its handler runs. */
export interface McpRequestInfo {
  /** The JSON-RPC method, e.g. `tools/call`. */
  readonly method: string;
  /** `params.name` of a `tools/call`: names the span and sets `gen_ai.tool.name`. */
  readonly toolName?: string;
  /** `params.taskId` of a `tasks/*` request. */
  readonly taskId?: string;
}

/**
 * SERVER spans for the MCP requests McpTasks handles, after the OpenTelemetry MCP semantic
 * conventions: named `{mcp.method.name} {gen_ai.tool.name}` for `tools/call` and
 * `{mcp.method.name}` otherwise. The handler runs with the span active, so the `execute_tool` span
 * of a task the request creates becomes its child.
 *
 * The parent is the trace context the client put in `params._meta`, read with the global
 * propagator (an application that registers none gets no propagation, as for any other
 * instrumentation); the request's ambient context (an HTTP server span, say) is then linked.
 * Without `_meta` context the ambient context is the parent.
 */
export class McpRequestTracer {
  readonly #tracer: Tracer;

  constructor(tracerProvider?: TracerProvider) {
    // The global provider is a proxy, so an SDK started later is still picked up.
    this.#tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  }

  /**
   * Starts the span of a request whose answer is a stream (a task `subscriptions/listen`), with
   * the parent and attributes {@link McpRequestTracer.trace} gives; the caller ends it with the stream.
   */
  startStream(info: McpStreamInfo): StreamSpan {
    const ambient = otelContext.active();
    const parent = info.meta ? propagation.extract(ambient, info.meta, metaGetter) : ambient;
    const attributes: Attributes = { 'mcp.method.name': info.method, 'jsonrpc.request.id': String(info.requestId) };
    const fromEnvelope = info.meta?.[PROTOCOL_VERSION_KEY];
    const version = typeof fromEnvelope === 'string' ? fromEnvelope : info.request.headers.get('mcp-protocol-version');
    if (version) attributes['mcp.protocol.version'] = version;
    const sessionId = info.request.headers.get('mcp-session-id');
    if (sessionId) attributes['mcp.session.id'] = sessionId;
    const span = this.#tracer.startSpan(info.method, { kind: SpanKind.SERVER, attributes }, parent);
    let ended = false;
    let linked = 0;
    return {
      linkTask(task) {
        const creator = creatorSpanContext(task);
        if (ended || !creator) return;
        span.addLink({ context: creator, attributes: { 'mcp_tasks.link': 'task.created_by', 'mcp.task.id': task.taskId } });
        linked += 1;
        // One task: the task's own attributes, as a tasks/get span has them.
        if (linked === 1) {
          span.setAttribute('mcp.task.id', task.taskId);
          span.setAttribute('mcp_tasks.task.trace_id', creator.traceId);
        } else {
          span.setAttribute('mcp_tasks.listen.tasks', linked);
        }
      },
      fail(code, message) {
        if (ended) return;
        span.setAttribute('error.type', String(code));
        span.setAttribute('rpc.response.status_code', String(code));
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      },
      end() {
        if (ended) return;
        ended = true;
        span.end();
      },
    };
  }

  async trace<T>(info: McpRequestInfo, ctx: ServerContext, handle: () => Promise<T>): Promise<T> {
    const ambient = otelContext.active();
    const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
    const parent = meta ? propagation.extract(ambient, meta, metaGetter) : ambient;
    const links: Link[] = [];
    const ambientSpan = trace.getSpanContext(ambient);
    if (parent !== ambient && ambientSpan && isSpanContextValid(ambientSpan) && trace.getSpanContext(parent) !== ambientSpan) {
      links.push({ context: ambientSpan });
    }
    const span = this.#tracer.startSpan(
      info.toolName === undefined ? info.method : `${info.method} ${info.toolName}`,
      { kind: SpanKind.SERVER, attributes: requestAttributes(info, ctx), links },
      parent,
    );
    try {
      const result = await otelContext.with(trace.setSpan(parent, span), handle);
      recordResult(span, result);
      return result;
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
}

/** What a streaming request's span knows: a request that is not handled through a `ServerContext`. */
export interface McpStreamInfo {
  /** The JSON-RPC method, e.g. `subscriptions/listen`. */
  readonly method: string;
  readonly requestId: string | number;
  /** `params._meta`: the client's trace context and the 2026 envelope. */
  readonly meta: Record<string, unknown> | undefined;
  /** The HTTP request, for its `MCP-Protocol-Version` header. */
  readonly request: Request;
}

/** A SERVER span of a request whose answer is a stream: it lasts as long as the stream. */
export interface StreamSpan {
  /** Links the span to the span that created `task` (stored on its row), as `tasks/get` is. */
  linkTask(task: { readonly taskId: string; readonly traceContext?: string | null }): void;
  /** Records a JSON-RPC error answer. */
  fail(code: number, message: string): void;
  /** Ends the span; later calls do nothing. */
  end(): void;
}

function requestAttributes(info: McpRequestInfo, ctx: ServerContext): Attributes {
  const attributes: Attributes = { 'mcp.method.name': info.method };
  if (info.toolName !== undefined) {
    attributes['gen_ai.tool.name'] = info.toolName;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  }
  const id = ctx.mcpReq.id as unknown;
  if (typeof id === 'string' || typeof id === 'number') attributes['jsonrpc.request.id'] = String(id);
  const version = protocolVersion(ctx);
  if (version !== undefined) attributes['mcp.protocol.version'] = version;
  if (ctx.sessionId) attributes['mcp.session.id'] = ctx.sessionId;
  if (info.taskId !== undefined) attributes['mcp.task.id'] = info.taskId;
  return attributes;
}

/** The request's protocol revision: the 2026 envelope's, else the `MCP-Protocol-Version` header. */
function protocolVersion(ctx: ServerContext): string | undefined {
  const fromEnvelope = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_KEY];
  if (typeof fromEnvelope === 'string') return fromEnvelope;
  return ctx.http?.req?.headers.get('mcp-protocol-version') ?? undefined;
}

function recordResult(span: Span, result: unknown): void {
  if (typeof result !== 'object' || result === null) return;
  const fields = result as { resultType?: unknown; taskId?: unknown; status?: unknown; isError?: unknown };
  if (typeof fields.taskId === 'string') span.setAttribute('mcp.task.id', fields.taskId);
  if (typeof fields.status === 'string') span.setAttribute('mcp.task.status', fields.status);
  // A tool error is a successful JSON-RPC response; the conventions still count it as an error.
  if (fields.isError === true) {
    span.setAttribute('error.type', 'tool_error');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

function recordError(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  const rpcCode = typeof code === 'number' && Number.isInteger(code) ? code : INTERNAL_ERROR;
  span.setAttribute('error.type', String(rpcCode));
  span.setAttribute('rpc.response.status_code', String(rpcCode));
  const message = error instanceof Error ? error.message : undefined;
  span.setStatus(message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message });
  // JSON-RPC errors are answers; anything else is a fault worth its stack.
  if (rpcCode === INTERNAL_ERROR && error instanceof Error) span.recordException(error);
}
