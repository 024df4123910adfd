// First: the OpenTelemetry SDK starts before anything that uses its providers is imported.
import { demoTelemetry } from '../telemetry/start.js';
import { logSafe, setDefaultLogger } from '@mcp-tasks/core';
import { configFromEnv } from '../config.js';
import { startDemoServer } from '../demo-server.js';
import { demoLogger } from '../log/demo-logger.js';

const logger = demoLogger(process.env);
setDefaultLogger(logger);
const server = await startDemoServer(configFromEnv(process.env), { prometheus: demoTelemetry.prometheus, logger });
// Said at any level: the launcher and the tests wait for this line to know the node serves.
logger.child({}, { level: 'info' }).info({ url: server.url }, `mcp-tasks demo listening on ${server.url}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, `mcp-tasks demo: ${signal}, draining`);
  server
    .close()
    .then(() => demoTelemetry.shutdown())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: logSafe(error) }, 'mcp-tasks demo: shutdown failed');
        process.exit(1);
      },
    );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// The terminal closed: drain as on a signal sent on purpose rather than die mid-task.
process.on('SIGHUP', () => stop('SIGHUP'));
