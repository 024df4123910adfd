import type { PostgresOperator } from '@mcp-tasks/postgres';
import type { CommandIo } from '../command.js';
import { CommandError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { printable } from '../printable.js';
import { confirmed } from './confirm.js';

/**
 * `tasks cancel ID`: the same compare-and-set and NOTIFY as tasks/cancel, for any owner's task;
 * the task's status message then says an operator cancelled it, its history who did, and this
 * command says so too. On a terminal it asks first (`--yes` skips the question).
 */
export async function cancelTask(operator: PostgresOperator, taskId: string, actor: string, yes: boolean, io: CommandIo): Promise<number> {
  const before = await operator.getTask(taskId);
  if (before === undefined) throw new CommandError(`no task ${JSON.stringify(taskId)} (it may have been swept after its TTL)`);
  if (before.status === 'working' || before.status === 'input_required') {
    const question = `Cancel task ${before.taskId} (tool ${before.tool}, owner ${before.owner.subject}, ${before.status})?`;
    if (!(await confirmed(io, printable(question), yes, false))) {
      io.out('Nothing cancelled.');
      return ExitCode.ok;
    }
  }
  const outcome = await operator.cancelTask(taskId, actor);
  if (outcome === undefined) throw new CommandError(`no task ${JSON.stringify(taskId)} (it may have been swept after its TTL)`);
  const { task, cancelled } = outcome;
  if (!cancelled) {
    throw new CommandError(`task ${task.taskId} is ${task.status}${task.expired ? ' and expired' : ''} already: nothing to cancel`);
  }
  io.out(printable(`Operator cancel: task ${task.taskId} (tool ${task.tool}, owner ${task.owner.subject}, node ${task.nodeId ?? '-'}) is cancelled; its status message reads "${task.statusMessage}".`));
  return ExitCode.ok;
}
