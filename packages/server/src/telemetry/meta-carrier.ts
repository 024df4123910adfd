import type { TextMapGetter } from '@opentelemetry/api';

/**
 * Reads W3C trace context (`traceparent`, `tracestate`, `baggage`) from a request's `params._meta`,
 * where MCP clients put it (the OpenTelemetry MCP conventions, SEP-414). Only string values count.
 */
export const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};
