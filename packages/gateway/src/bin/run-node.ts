// First: the OpenTelemetry SDK starts before anything that uses its providers is imported.
import { demoTelemetry } from '../telemetry/start.js';
import { logSafe, setDefaultLogger } from '@mcp-tasks/core';
import { configFromEnv } from '../config.js';
import { startGatewayNode, type GatewayNodeOptions } from '../gateway-node.js';
import { demoLogger } from '../log/demo-logger.js';

/** What {@link runNode} serves, and how its log lines name it. */
export interface RunNodeOptions extends Omit<GatewayNodeOptions, 'prometheus' | 'logger'> {
  /** The start of its lines (`<label> listening on URL`); default `mcp-tasks gateway`. */
  readonly label?: string;
}

/**
 * Runs one gateway node in this process until a signal drains it: the environment's settings,
 * pino on standard output, the OpenTelemetry SDK behind `/metrics`. The `listening on URL` line is
 * said at any level: the launcher and the tests wait for it to know the node serves.
 */
export async function runNode(options: RunNodeOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const label = options.label ?? 'mcp-tasks gateway';
  const logger = demoLogger(env);
  setDefaultLogger(logger);
  const server = await startGatewayNode(configFromEnv(env), { ...nodeOptions(options), prometheus: demoTelemetry.prometheus, logger });
  logger.child({}, { level: 'info' }).info({ url: server.url }, `${label} listening on ${server.url}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${label}: ${signal}, draining`);
    server
      .close()
      .then(() => demoTelemetry.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: logSafe(error) }, `${label}: shutdown failed`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The terminal closed: drain as on a signal sent on purpose rather than die mid-task.
  process.on('SIGHUP', () => stop('SIGHUP'));
}

function nodeOptions({ label: _label, ...options }: RunNodeOptions): Omit<GatewayNodeOptions, 'prometheus' | 'logger'> {
  return options;
}
