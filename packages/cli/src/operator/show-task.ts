import { inputQuestionOf, operatorErrorOf, withoutStack, type InputQuestion, type OperatorTaskDetail, type OperatorTaskSteps, type PostgresOperator, type TaskHistory } from '@mcp-tasks/postgres';
import type { CommandIo } from '../command.js';
import { CommandError } from '../command-errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatAge } from './duration.js';
import { printable } from '../printable.js';
import { describeValue, redactedValue } from './redacted-value.js';
import { historyLines } from './history-text.js';

/** `tasks show ID`: the task's row; what its owner gave and got only as keys and sizes unless `reveal`. */
export async function showTask(operator: PostgresOperator, taskId: string, reveal: boolean, json: boolean, io: CommandIo): Promise<number> {
  const task = await operator.getTask(taskId);
  if (task === undefined) throw new CommandError(`no task ${JSON.stringify(taskId)} (it may have been swept after its TTL)`);
  const [journal, history] = await Promise.all([operator.getTaskSteps(taskId, STEPS_SHOWN), operator.getTaskHistory(taskId)]);
  if (json) {
    io.out(JSON.stringify({ ...(taskJson(task, reveal) as object), steps: journal, history: history === undefined ? null : historyJson(history, reveal) }, null, 2));
    return ExitCode.ok;
  }
  const now = Date.now();
  const when = (date: Date | null) => (date === null ? 'never' : `${date.toISOString()} (${formatAge(Math.abs(now - date.getTime()))} ${date.getTime() > now ? 'from now' : 'ago'})`);
  const lines = [
    `Task ${task.taskId}`,
    `  status         ${task.status}${task.expired ? ' (expired: its owner no longer sees it)' : ''}`,
    `  message        ${task.statusMessage === null ? '-' : reveal ? task.statusMessage : withoutStack(task.statusMessage)}`,
    `  tool           ${task.tool}`,
    `  owner          ${task.owner.subject} (client ${task.owner.clientId || '-'}, server ${task.owner.server || '-'}, resource ${task.owner.resource || '-'})`,
    `  node           ${task.nodeId ?? '-'}`,
    `  created        ${when(task.createdAt)}`,
    `  last updated   ${when(task.lastUpdatedAt)}`,
    `  expires        ${when(task.expiresAt)}`,
    `  poll interval  ${task.pollIntervalMs} ms`,
    `  attempt        ${task.attempt}${task.resumable ? ` of at most ${task.maxAttempts} (resumable)` : ''}${task.handovers > 0 ? `, ${task.handovers} hand-over(s)` : ''}`,
    `  arguments      ${describeValue(task.args, reveal)}`,
  ];
  const inputs = Object.entries(task.inputs);
  lines.push(`  input requests ${inputs.length === 0 ? 'none' : ''}`.trimEnd());
  for (const [key, input] of inputs) {
    const answer = input.response === undefined ? 'not answered' : `answered: ${describeValue(input.response, reveal)}`;
    lines.push(`    ${key}  ${reveal ? `request ${describeValue(input.request, true)}` : questionText(inputQuestionOf(input.request))}; ${answer}`);
  }
  lines.push(...stepLines(journal));
  const toolError = task.status === 'completed' && (task.result as { isError?: unknown } | null)?.isError === true;
  lines.push(`  result         ${toolError ? 'a tool error (isError): ' : ''}${describeValue(task.result, reveal)}`);
  lines.push(`  error          ${errorText(task, reveal)}`);
  lines.push(...historyLines(history, questionText));
  // Each line may carry what a tool or a client wrote: nothing in it may drive the terminal.
  io.out(lines.map((line) => printable(line)).join('\n'));
  return ExitCode.ok;
}

/** A failure by the console's rule: code and message; the data as keys and size unless `reveal`. */
function errorText(task: OperatorTaskDetail, reveal: boolean): string {
  if (task.error === null) return 'none';
  if (reveal) return `code ${task.error.code}: ${JSON.stringify(task.error)}`;
  const view = operatorErrorOf(task.error);
  return `code ${view.code}: ${view.message}${view.data === undefined ? '' : `; data ${describeValue(task.error.data, false)}`}`;
}

/** The question an input request asks, as its form: the method, the message, each field and its type. */
function questionText(question: InputQuestion): string {
  const parts = [question.method];
  if (question.message !== undefined) parts.push(JSON.stringify(question.message));
  if (question.fields !== undefined) parts.push(question.fields.length === 0 ? 'no fields' : `fields ${question.fields.map((field) => `${field.name}: ${field.type}${field.required ? ' (required)' : ''}${field.choices ? ` [${field.choices.join(' | ')}]` : ''}`).join(', ')}`);
  return parts.join(', ');
}

/** The last steps `show` prints of a task's journal: where a long task is now. */
const STEPS_SHOWN = 20;

function stepLines(journal: OperatorTaskSteps): string[] {
  if (journal.total === 0) return ['  steps          none'];
  const shown = journal.total > journal.steps.length ? ` (the last ${journal.steps.length})` : '';
  return [
    `  steps          ${journal.total}${shown}`,
    ...journal.steps.map((step) => `    ${step.name}  ${step.done ? 'done' : 'not done'}${step.starts > 1 ? `, started ${step.starts} times` : ''}`),
  ];
}

/** The history as JSON: the questions, like the input requests beside them, only with `reveal`. */
function historyJson(history: TaskHistory, reveal: boolean): TaskHistory {
  return reveal ? history : { ...history, events: history.events.map(({ question: _question, ...event }) => event) };
}

function taskJson(task: OperatorTaskDetail, reveal: boolean): unknown {
  return {
    ...task,
    args: redactedValue(task.args, reveal),
    inputs: Object.fromEntries(Object.entries(task.inputs).map(([key, input]) => [key, { request: redactedValue(input.request, reveal), response: redactedValue(input.response, reveal) }])),
    result: redactedValue(task.result, reveal),
    error: task.error === null ? null : reveal ? task.error : { code: task.error.code, ...(redactedValue(task.error, false) as object) },
  };
}
