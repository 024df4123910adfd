import { isLogLevel, LOG_LEVELS, type LogFields, type Logger, type LogLevel } from './logger.js';
import { activeTraceFields } from './trace-fields.js';

/** Options of {@link jsonLinesLogger}. */
export interface JsonLinesLoggerOptions {
  /** The least severe level written. Default `warn`: a library says nothing about tasks going well unless asked. */
  readonly level?: LogLevel;
  /** Fields on every line (e.g. `{ node }`). */
  readonly base?: LogFields;
  /** Where each line goes (with its `\n`). Default: standard error. */
  readonly write?: (line: string) => void;
}

/**
 * The logger of a host that brings none: one JSON object per line, with `level`, `time`, `msg`,
 * the active span's `traceId`/`spanId`, and the fields, the same names pino writes, so a log
 * pipeline reads both alike. `JSON.stringify` escapes every control character, so a value cannot
 * break a line; the line and paragraph separators, which it leaves as they are, are escaped too.
 */
export function jsonLinesLogger(options: JsonLinesLoggerOptions = {}): Logger {
  const level = options.level ?? 'warn';
  if (!isLogLevel(level)) throw new RangeError(`level must be one of ${LOG_LEVELS.join(', ')}`);
  const threshold = LOG_LEVELS.indexOf(level);
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const base = options.base ?? {};
  const at = (lineLevel: LogLevel) => (fields: LogFields, message: string) => {
    if (LOG_LEVELS.indexOf(lineLevel) > threshold) return;
    const record = { level: lineLevel, time: Date.now(), ...base, ...activeTraceFields(), ...fields, msg: message };
    write(`${JSON.stringify(record).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)}\n`);
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
