// Started before the server (`node --import ./dist/telemetry.js dist/server.js`), so the global
// tracer and meter providers exist when McpTasks makes its instruments. Traces go where the
// standard OTEL_* variables say (OTLP to localhost:4318 by default; OTEL_TRACES_EXPORTER=console
// prints them); metrics are served for Prometheus at http://localhost:9464/metrics.
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { NodeSDK } from '@opentelemetry/sdk-node';

process.env['OTEL_SERVICE_NAME'] ||= 'mcp-tasks-example';
const sdk = new NodeSDK({ metricReaders: [new PrometheusExporter({ port: Number(process.env['METRICS_PORT'] ?? 9464) })] });
sdk.start();
process.once('beforeExit', () => void sdk.shutdown());
