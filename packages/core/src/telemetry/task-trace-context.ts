import { createContextKey, isSpanContextValid, ROOT_CONTEXT, trace, type Context, type Link, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of the span active in `context` (the `tools/call` creating a task), to be
 * stored with the task; null outside a recorded span. Built from the span itself, not through the
 * propagator: it is this server's own span, not a value a client sent.
 */
export function traceparentOf(context: Context): string | null {
  const span = trace.getSpanContext(context);
  if (!span || !isSpanContextValid(span)) return null;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The creating span of a task, as a remote span context; undefined when none was stored or it is malformed. */
export function creatorSpanContext(task: { readonly traceContext?: string | null }): SpanContext | undefined {
  const match = task.traceContext ? TRACEPARENT.exec(task.traceContext) : null;
  if (!match) return undefined;
  const span: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(span) ? span : undefined;
}

/**
 * How long after its creating request a run still joins that request's trace as a child. A run
 * claimed later (a task queued for long, or released by a node that drained or died hours into
 * it) starts a trace of its own with a link to the creating span instead: tail-sampling collectors
 * have long decided the creating trace by then (30 s by default), and a child hours later would
 * stretch the trace's waterfall over all that time.
 */
export const TRACE_JOIN_MS = 10 * 60_000;

/** The creating span a run's context asks its `execute_tool` span to link to (set by {@link creatorContext}). */
const CREATOR_LINK = createContextKey('mcp-tasks creator link');

/**
 * The context a run of a claimed or resumed task starts in. Within {@link TRACE_JOIN_MS} of the
 * task's creation: its creating span as the parent, so the run's `execute_tool` span joins the
 * creating request's trace on whatever node runs it. Later: no parent, and the creating span to
 * link to ({@link creatorLinks}).
 */
export function creatorContext(task: { readonly traceContext?: string | null; readonly createdAt: Date }, now = Date.now()): Context | undefined {
  const span = creatorSpanContext(task);
  if (!span) return undefined;
  if (now - task.createdAt.getTime() <= TRACE_JOIN_MS) return trace.setSpanContext(ROOT_CONTEXT, span);
  return ROOT_CONTEXT.setValue(CREATOR_LINK, span);
}

/** The links a run's `execute_tool` span starts with: its creating span when {@link creatorContext} made it a root. */
export function creatorLinks(context: Context): Link[] {
  const creator = context.getValue(CREATOR_LINK) as SpanContext | undefined;
  return creator ? [{ context: creator, attributes: { 'mcp_tasks.link': 'task.created_by' } }] : [];
}

/** Links the active span (a `tasks/get`, `tasks/update`, `tasks/cancel` request) to the span that created the task. */
export function linkToCreator(task: { readonly traceContext?: string | null }): void {
  const creator = creatorSpanContext(task);
  const active = trace.getActiveSpan();
  if (!creator || !active || !active.isRecording()) return;
  if (active.spanContext().traceId === creator.traceId && active.spanContext().spanId === creator.spanId) return;
  active.addLink({ context: creator, attributes: { 'mcp_tasks.link': 'task.created_by' } });
  active.setAttribute('mcp_tasks.task.trace_id', creator.traceId);
}
