import type { PostgresOperator } from '@mcp-tasks/postgres';
import type { CommandIo } from '../command.js';
import { CommandError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { printable } from '../printable.js';
import { confirmed } from './confirm.js';

/**
 * `tasks retry ID`: a failed or cancelled task run again as a new task with the same arguments
 * and owner, where its tool allows it; queued for whichever node serves the tool. Asks first on
 * a terminal (`--yes` skips); both tasks' histories record who retried which.
 */
export async function retryTask(operator: PostgresOperator, taskId: string, actor: string, yes: boolean, io: CommandIo): Promise<number> {
  const task = await operator.getTask(taskId);
  if (task === undefined) throw new CommandError(`no task ${JSON.stringify(taskId)} (it may have been swept after its TTL)`);
  const question = `Retry task ${task.taskId} (tool ${task.tool}, owner ${task.owner.subject}, ${task.status}) as a new task with the same arguments?`;
  if (!(await confirmed(io, printable(question), yes, false))) {
    io.out('Nothing retried.');
    return ExitCode.ok;
  }
  const outcome = await operator.retryTask(taskId, actor);
  if (!outcome.retried) throw new CommandError(printable(`task ${taskId} is not retried: ${outcome.reason}`));
  io.out(printable(`Operator retry: task ${taskId} runs again as task ${outcome.newTaskId} (tool ${task.tool}, owner ${task.owner.subject}), queued for a node that serves the tool.`));
  return ExitCode.ok;
}
