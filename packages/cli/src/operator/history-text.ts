import type { InputQuestion, TaskEvent, TaskHistory } from '@mcp-tasks/postgres';

/** The lines `tasks show` prints of a task's history, oldest first: time, what, node and attempt. */
export function historyLines(history: TaskHistory | undefined, questionText: (question: InputQuestion) => string): string[] {
  if (history === undefined || history.events.length === 0) return ['  history        none recorded'];
  const lines = ['  history'];
  const keptInputs = new Set(history.events.filter((event) => event.key !== undefined).map((event) => event.key)).size;
  if (history.inputsAsked > keptInputs && keptInputs > 0) lines.push(`    (the input events of the first ${history.inputsAsked - keptInputs} of ${history.inputsAsked} keys were coalesced away)`);
  for (const event of history.events) {
    lines.push(`    ${event.at.toISOString()}  ${eventText(event, questionText)}  [node ${event.nodeId ?? '-'}, attempt ${event.attempt}]`);
  }
  return lines;
}

/** One event in words. */
export function eventText(event: TaskEvent, questionText: (question: InputQuestion) => string): string {
  switch (event.kind) {
    case 'created':
      return event.nodeId === null ? 'created, queued for a node' : 'created';
    case 'claimed':
      return `claimed by ${event.nodeId ?? '-'} (attempt ${event.attempt})`;
    case 'released':
      return `released by ${event.from ?? '-'}${event.message ? `: ${event.message}` : ''}`;
    case 'input_requested':
      return `asked ${event.key}: ${event.question ? questionText(event.question) : '(the question is gone)'}`;
    case 'input_answered':
      return `answered ${event.key}`;
    case 'failed':
      return `failed${event.error ? `: code ${event.error.code}: ${event.error.message}` : ''}`;
    case 'completed':
      return event.toolError ? 'completed with a tool error (isError)' : 'completed';
    case 'cancelled':
      return `cancelled${event.message ? ` (${event.message})` : ''}`;
    case 'operator':
      if (event.action === 'retry') return `operator ${event.actor}: retried as ${event.relatedTaskId}`;
      if (event.action === 'retry_of') return `operator ${event.actor}: a retry of ${event.relatedTaskId}`;
      return `operator ${event.actor}: cancel${event.filter ? ` (bulk, ${event.filter})` : ''}`;
    case 'upstream_cancel':
      return `cancel owed upstream ${event.upstream?.name}: ${event.upstream?.state}, ${event.upstream?.attempts} tries${event.upstream?.lastError ? `, last error: ${event.upstream.lastError}` : ''}`;
    default:
      return event.status;
  }
}
