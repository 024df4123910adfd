/** Where the store's background services report problems nobody awaits. */
export interface MaintenanceLogger {
  warn(message: string, error?: unknown): void;
  error(message: string, error?: unknown): void;
}

/** Logs to the console with an `mcp-tasks:` prefix. */
export const consoleLogger: MaintenanceLogger = {
  warn: (message, error) => (error === undefined ? console.warn(`mcp-tasks: ${message}`) : console.warn(`mcp-tasks: ${message}`, error)),
  error: (message, error) => (error === undefined ? console.error(`mcp-tasks: ${message}`) : console.error(`mcp-tasks: ${message}`, error)),
};
