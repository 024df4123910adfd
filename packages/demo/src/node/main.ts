// First: the OpenTelemetry SDK starts before anything that uses its providers is imported.
import { demoTelemetry } from '../telemetry/start.js';
import { configFromEnv } from '../config.js';
import { startDemoServer } from '../demo-server.js';

const server = await startDemoServer(configFromEnv(process.env), { prometheus: demoTelemetry.prometheus });
console.log(`mcp-tasks demo listening on ${server.url}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`mcp-tasks demo: ${signal}, draining`);
  server
    .close()
    .then(() => demoTelemetry.shutdown())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('mcp-tasks demo: shutdown failed:', error);
        process.exit(1);
      },
    );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// The terminal closed: drain as on a signal sent on purpose rather than die mid-task.
process.on('SIGHUP', () => stop('SIGHUP'));
