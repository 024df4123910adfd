import { jsonLinesLogger } from './json-lines-logger.js';
import type { Logger } from './logger.js';

let installed: Logger | undefined;

/**
 * The process's logger for what the libraries report where no option reaches (an internal error
 * answered deep in a handler, a proxy's retry): the host's, once it called
 * {@link setDefaultLogger}, else JSON lines on standard error from `warn`.
 */
export function defaultLogger(): Logger {
  return (installed ??= jsonLinesLogger());
}

/** Makes `logger` the process's logger for the libraries (a host calls it once, at start). */
export function setDefaultLogger(logger: Logger): void {
  installed = logger;
}
