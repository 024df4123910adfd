/** Severities, most severe first; a logger at one level writes it and those before it. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * What a line says besides its message. The names the libraries use: `node`, `taskId`, `tool`,
 * `owner` (its {@link ownerHash}, never the subject or a token), `status`, `ref` (the reference a
 * client was shown), `err` (always through `logSafe`). `traceId` and `spanId` come from the active
 * OpenTelemetry context.
 */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where the libraries write what they have to say. It has the shape of pino's logger (fields
 * first, then the message), so a host passes its `pino()` as it is; any other logger needs these
 * four methods. The libraries never print: a host that passes none gets {@link jsonLinesLogger}.
 */
export interface Logger {
  error(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  debug(fields: LogFields, message: string): void;
}

/** Whether `value` names a level. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
