import type { IncomingMessage, ServerResponse } from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

/** Where a demo node's metrics go and how `GET /metrics` serves them. */
export interface DemoMetrics {
  /** The provider to create instruments from; absent: the global one (an SDK the process started). */
  readonly meterProvider: MeterProvider | undefined;
  /** Answers `GET /metrics` in Prometheus text format. */
  readonly serve: (req: IncomingMessage, res: ServerResponse) => void;
  shutdown(): Promise<void>;
}

/**
 * The metrics of one demo node. With the exporter of the process's OpenTelemetry SDK
 * (node/main.ts), `/metrics` shows what the global meter provider collects. Without one (tests,
 * embedding, OTEL_SDK_DISABLED), the node keeps a meter provider of its own, so `/metrics` still
 * works and shows this node only.
 */
export function demoMetrics(sdkExporter: PrometheusExporter | undefined): DemoMetrics {
  if (sdkExporter) {
    return { meterProvider: undefined, serve: (req, res) => sdkExporter.getMetricsRequestHandler(req, res), shutdown: async () => {} };
  }
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  return { meterProvider, serve: (req, res) => exporter.getMetricsRequestHandler(req, res), shutdown: () => meterProvider.shutdown() };
}
