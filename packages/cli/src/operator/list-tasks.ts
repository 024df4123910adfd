import { isTaskStatus } from '@mcp-tasks/core';
import type { OperatorTaskFilter, PostgresOperator } from '@mcp-tasks/postgres';
import type { CommandIo, OptionValue } from '../command.js';
import { UsageError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatAge, parseDuration } from './duration.js';
import { textTable } from './text-table.js';

const MAX_LIMIT = 10_000;

/** `tasks list`: every owner's tasks that match the filters, newest first. */
export async function listTasks(operator: PostgresOperator, values: Readonly<Record<string, OptionValue>>, io: CommandIo): Promise<number> {
  const tasks = await operator.listTasks(taskFilter(values));
  if (values['json'] === true) {
    io.out(JSON.stringify(tasks, null, 2));
    return ExitCode.ok;
  }
  if (tasks.length === 0) {
    io.out('No tasks match.');
    return ExitCode.ok;
  }
  const now = Date.now();
  io.out(
    textTable(
      ['TASK', 'STATUS', 'TOOL', 'OWNER', 'NODE', 'AGE', 'UPDATED', 'MESSAGE'],
      tasks.map((t) => [
        t.taskId,
        t.expired ? `${t.status} (expired)` : t.status,
        t.tool,
        t.ownerSubject,
        t.nodeId ?? '-',
        formatAge(now - t.createdAt.getTime()),
        `${formatAge(now - t.lastUpdatedAt.getTime())} ago`,
        t.statusMessage ?? '',
      ]),
    ),
  );
  return ExitCode.ok;
}

export function taskFilter(values: Readonly<Record<string, OptionValue>>): OperatorTaskFilter {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const status = text('status');
  if (status !== undefined && !isTaskStatus(status)) {
    throw new UsageError(`--status must be working, input_required, completed, failed or cancelled (got ${JSON.stringify(status)})`);
  }
  const limit = text('limit');
  const limitValue = limit === undefined ? undefined : Number(limit);
  if (limitValue !== undefined && (!Number.isSafeInteger(limitValue) || limitValue < 1 || limitValue > MAX_LIMIT)) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT} (got ${JSON.stringify(limit)})`);
  }
  const olderThan = text('older-than');
  const filter: { -readonly [K in keyof OperatorTaskFilter]: OperatorTaskFilter[K] } = {};
  if (status !== undefined) filter.status = status;
  if (text('tool') !== undefined) filter.tool = text('tool');
  if (text('node') !== undefined) filter.nodeId = text('node');
  if (text('owner') !== undefined) filter.ownerSubject = text('owner');
  if (olderThan !== undefined) filter.olderThanMs = parseDuration('--older-than', olderThan);
  if (limitValue !== undefined) filter.limit = limitValue;
  return filter;
}
