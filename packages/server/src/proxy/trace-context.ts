import { context as otelContext, propagation } from '@opentelemetry/api';

const KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/**
 * The trace context to carry upstream in `_meta`: this request's span as injected by the global
 * propagator, or else (none registered) the caller's own `traceparent`, `tracestate` and
 * `baggage` as they came, so the upstream's spans join the caller's trace either way.
 */
export function upstreamTraceContext(callerMeta: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(otelContext.active(), carrier);
  if (carrier['traceparent'] !== undefined) return carrier;
  for (const key of KEYS) {
    const value = callerMeta?.[key];
    if (typeof value === 'string' && value.length <= 512) carrier[key] = value;
  }
  return carrier;
}
