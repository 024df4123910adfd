import type { CallUi } from './call-ui.js';
import { answerInputRequests } from './input-requests.js';
import type { JsonObject, McpHttpClient } from './mcp-http-client.js';
import { abortableSleep } from './abortable-sleep.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const DEFAULT_POLL_MS = 1_000;

export function isTerminal(task: JsonObject): boolean {
  return TERMINAL.has(String(task['status']));
}

/**
 * Follows a task to its end: shows each state, asks each new input request once and answers
 * it with tasks/update, and resolves with the terminal task (result or error inlined).
 */
export async function followTask(client: McpHttpClient, created: JsonObject, listen: boolean, ui: CallUi, signal: AbortSignal): Promise<JsonObject> {
  const taskId = String(created['taskId']);
  const next = listen ? await listenedStates(client, taskId, signal) : polledStates(client, taskId, signal);
  const answered = new Set<string>();
  let task = created;
  for (;;) {
    ui.display.update(task);
    if (isTerminal(task)) return task;
    if (task['status'] === 'input_required' && typeof task['inputRequests'] === 'object' && task['inputRequests'] !== null) {
      ui.display.clear();
      const responses = await answerInputRequests(task['inputRequests'] as JsonObject, answered, ui.reader, ui.say);
      ui.reader.pause();
      if (Object.keys(responses).length > 0) await client.request('tasks/update', { taskId, inputResponses: responses }, signal);
    }
    task = await next(task);
  }
}

type NextState = (current: JsonObject) => Promise<JsonObject>;

/** tasks/get after the task's own pollIntervalMs (which may change over its life). */
function polledStates(client: McpHttpClient, taskId: string, signal: AbortSignal): NextState {
  return async (current) => {
    const interval = typeof current['pollIntervalMs'] === 'number' && current['pollIntervalMs'] > 0 ? current['pollIntervalMs'] : DEFAULT_POLL_MS;
    await abortableSleep(interval, signal);
    return client.request('tasks/get', { taskId }, signal);
  };
}

/**
 * notifications/tasks from one subscriptions/listen stream. Once the server acknowledged the
 * subscription, one tasks/get catches up with what changed before it; should the stream end
 * before the task does, polling takes over.
 */
async function listenedStates(client: McpHttpClient, taskId: string, signal: AbortSignal): Promise<NextState> {
  const stream = client.listen([taskId], signal)[Symbol.asyncIterator]();
  const first = await stream.next();
  if (first.done) return polledStates(client, taskId, signal);
  let caughtUp = false;
  let ended = false;
  const poll = polledStates(client, taskId, signal);
  return async (current) => {
    if (!caughtUp) {
      caughtUp = true;
      if (first.value['kind'] !== 'acknowledged') return withoutMeta(first.value);
      return client.request('tasks/get', { taskId }, signal);
    }
    if (!ended) {
      const next = await stream.next();
      if (!next.done) return withoutMeta(next.value);
      ended = true;
    }
    return poll(current);
  };
}

function withoutMeta(params: JsonObject): JsonObject {
  const { _meta: _ignored, kind: _kind, ...task } = params;
  return task;
}
