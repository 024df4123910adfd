import { activeTraceFields, isLogLevel, LOG_LEVELS } from '@mcp-tasks/core';
import { pino, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';

/**
 * The demo node's logger: pino, one JSON object per line on standard output (`level` as its name,
 * `time`, `node`, the active span's `traceId`/`spanId`, the line's fields, `msg`), or pino-pretty's
 * coloured lines in a terminal. `MCP_TASKS_LOG_LEVEL` (`error`, `warn`, `info` — the default —,
 * `debug`, `silent`) and `MCP_TASKS_LOG_FORMAT` (`json`, `pretty`; default: `pretty` when standard
 * output is a terminal). Writes are synchronous: a node that exits right after logging keeps the line.
 * No pid or host name: they tell an attacker who reads the log more than they tell an operator.
 */
export function demoLogger(env: NodeJS.ProcessEnv, nodeId: string | undefined = env['NODE_ID'] || undefined): PinoLogger {
  const level = (env['MCP_TASKS_LOG_LEVEL'] || 'info').trim().toLowerCase();
  if (!isLogLevel(level) && level !== 'silent') throw new RangeError(`MCP_TASKS_LOG_LEVEL must be one of ${[...LOG_LEVELS, 'silent'].join(', ')}`);
  const format = (env['MCP_TASKS_LOG_FORMAT'] || (process.stdout.isTTY ? 'pretty' : 'json')).trim().toLowerCase();
  if (format !== 'json' && format !== 'pretty') throw new RangeError('MCP_TASKS_LOG_FORMAT must be json or pretty');
  const options = {
    level,
    base: nodeId === undefined ? {} : { node: nodeId },
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: () => activeTraceFields(),
  };
  const destination = format === 'pretty' ? pretty({ sync: true, colorize: process.stdout.isTTY || env['FORCE_COLOR'] !== undefined, ignore: 'node', messageFormat: nodeId === undefined ? '{msg}' : `${nodeId}: {msg}` }) : pino.destination({ dest: 1, sync: true });
  return pino(options, destination);
}
