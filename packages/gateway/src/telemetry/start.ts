// Starts the OpenTelemetry SDK for the demo node. node/main.ts imports this module first, before
// anything that creates instruments or handles requests. Configuration comes from the standard
// OTEL_* environment variables (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
// OTEL_PROPAGATORS, OTEL_SDK_DISABLED, ...), with defaults that keep a bare `npm run serve` off the
// network: sdk-node would otherwise export traces and logs over OTLP to localhost.
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { NodeSDK } from '@opentelemetry/sdk-node';

/** What the rest of the demo needs from the SDK. */
export interface DemoTelemetry {
  /** The reader behind `GET /metrics`; absent when OTEL_SDK_DISABLED is set. */
  readonly prometheus: PrometheusExporter | undefined;
  /** Flushes and stops the SDK (pending spans are exported). */
  shutdown(): Promise<void>;
}

function startTelemetry(env: NodeJS.ProcessEnv): DemoTelemetry {
  if (isTrue(env['OTEL_SDK_DISABLED'])) return { prometheus: undefined, shutdown: async () => {} };
  env['OTEL_TRACES_EXPORTER'] ||= 'none';
  env['OTEL_LOGS_EXPORTER'] ||= 'none';
  env['OTEL_SERVICE_NAME'] ||= 'mcp-tasks-demo';
  // Only what the operator sets (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): the default
  // detectors publish the host name, pid, executable path, command line and process owner on
  // every export and on /metrics, which tell an attacker more than they tell an operator.
  // OTEL_NODE_RESOURCE_DETECTORS=all brings them back.
  env['OTEL_NODE_RESOURCE_DETECTORS'] ||= 'env';
  // Metrics are pulled from the node's own /metrics route, not from a second server on :9464.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const sdk = new NodeSDK({ metricReaders: [prometheus] });
  sdk.start();
  return { prometheus, shutdown: () => sdk.shutdown() };
}

function isTrue(value: string | undefined): boolean {
  return value !== undefined && value.trim().toLowerCase() === 'true';
}

export const demoTelemetry: DemoTelemetry = startTelemetry(process.env);
