import { MAX_BULK_CANCEL, type OperatorTaskFilter, type OperatorTaskSummary, type PostgresOperator } from '@mcp-tasks/postgres';
import type { CommandIo, OptionValue } from '../command.js';
import { UsageError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { printable } from '../printable.js';
import { confirmed } from './confirm.js';
import { taskFilter } from './list-tasks.js';
import { textTable } from './text-table.js';

/** How many of the matched tasks the question lists before "and N more". */
const LISTED = 10;

/**
 * `tasks cancel --status/--tool/--node/--owner/--older-than …`: the live tasks that match, shown
 * and confirmed (`--yes` without a terminal), then cancelled by id, exactly those: a task that
 * matches only after the question is not taken. Each cancelled task's history records who and
 * by which filter. At most {@link MAX_BULK_CANCEL} at once.
 */
export async function cancelTasks(operator: PostgresOperator, values: Readonly<Record<string, OptionValue>>, actor: string, io: CommandIo): Promise<number> {
  const filter = taskFilter(values);
  if (filter.status !== undefined && filter.status !== 'working' && filter.status !== 'input_required') {
    throw new UsageError(`--status must be working or input_required for a cancel: a ${filter.status} task has ended`);
  }
  if (filter.limit !== undefined) throw new UsageError('tasks cancel takes no --limit: it takes every match, at most 1000');
  const words = describeFilter(values);
  const matched = await liveMatches(operator, filter);
  if (matched.length === 0) {
    io.out(`No live tasks match ${words}.`);
    return ExitCode.ok;
  }
  if (matched.length > MAX_BULK_CANCEL) throw new UsageError(`more than ${MAX_BULK_CANCEL} live tasks match ${words}: narrow the filter`);
  io.out(printable(textTable(['TASK', 'STATUS', 'TOOL', 'OWNER', 'NODE'], matched.slice(0, LISTED).map((t) => [t.taskId, t.status, t.tool, t.ownerSubject, t.nodeId ?? '-']))));
  if (matched.length > LISTED) io.out(`… and ${matched.length - LISTED} more`);
  if (!(await confirmed(io, `Cancel these ${matched.length} live tasks matching ${words}?`, values['yes'] === true, true))) {
    io.out('Nothing cancelled.');
    return ExitCode.ok;
  }
  const cancelled = await operator.cancelTasks({ taskIds: matched.map((t) => t.taskId), actor, filter: words });
  const ended = matched.length - cancelled.length;
  io.out(`Operator cancel: ${cancelled.length} of ${matched.length} tasks cancelled${ended > 0 ? ` (${ended} ended meanwhile)` : ''}.`);
  return ExitCode.ok;
}

async function liveMatches(operator: PostgresOperator, filter: OperatorTaskFilter): Promise<OperatorTaskSummary[]> {
  const statuses = filter.status === undefined ? (['working', 'input_required'] as const) : [filter.status];
  const pages = await Promise.all(statuses.map((status) => operator.listTasks({ ...filter, status, limit: MAX_BULK_CANCEL + 1 })));
  return pages.flat().filter((task) => !task.expired);
}

/** The filter as the command line gave it, for the question and the history. */
export function describeFilter(values: Readonly<Record<string, OptionValue>>): string {
  const parts = ['status', 'tool', 'node', 'owner', 'older-than'].filter((name) => typeof values[name] === 'string').map((name) => `--${name} ${String(values[name])}`);
  return parts.join(' ');
}
