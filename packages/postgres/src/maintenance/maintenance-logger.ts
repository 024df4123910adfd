import { defaultLogger, logSafe, type Logger } from '@mcp-tasks/core';

/** Where the store's background services report problems nobody awaits. */
export interface MaintenanceLogger {
  warn(message: string, error?: unknown): void;
  error(message: string, error?: unknown): void;
}

/** The services' reports as lines of a host's logger, the error under `err` (escaped and cut). */
export function maintenanceLoggerOf(logger: Logger): MaintenanceLogger {
  const fields = (error: unknown) => (error === undefined ? {} : { err: logSafe(error) });
  return {
    warn: (message, error) => logger.warn(fields(error), message),
    error: (message, error) => logger.error(fields(error), message),
  };
}

/** The default: the process's logger ({@link defaultLogger}) as the call finds it, so a host's `setDefaultLogger` applies. */
export const consoleLogger: MaintenanceLogger = {
  warn: (message, error) => maintenanceLoggerOf(defaultLogger()).warn(message, error),
  error: (message, error) => maintenanceLoggerOf(defaultLogger()).error(message, error),
};
