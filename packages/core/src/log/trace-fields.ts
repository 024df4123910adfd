import { context, isSpanContextValid, trace } from '@opentelemetry/api';

/** The active span's ids as log fields (`traceId`, `spanId`), or none outside a span. */
export function activeTraceFields(): { traceId?: string; spanId?: string } {
  const span = trace.getSpanContext(context.active());
  if (!span || !isSpanContextValid(span)) return {};
  return { traceId: span.traceId, spanId: span.spanId };
}
