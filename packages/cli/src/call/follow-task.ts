import type { CallUi } from './call-ui.js';
import { answerInputRequests } from './input-requests.js';
import { TransportError, type JsonObject, type McpHttpClient } from './mcp-http-client.js';
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
      const requests = task['inputRequests'] as JsonObject;
      // While the user thinks, the task may end (an operator's cancel, its TTL) or its question
      // be answered elsewhere: the prompt is taken back at once instead of waiting for an answer.
      const watching = new AbortController();
      const moved = questionWithdrawn(client, taskId, task, Object.keys(requests), AbortSignal.any([signal, watching.signal]));
      moved.catch(() => undefined);
      const asked = answerInputRequests(requests, answered, ui.reader, ui.say).then((responses) => ({ responses }));
      const first = await Promise.race([asked, moved.then((changed) => ({ changed }))]);
      watching.abort();
      if ('changed' in first) {
        ui.reader.withdraw();
        await asked.catch(() => undefined);
        ui.reader.pause();
        ui.say(isTerminal(first.changed) ? `The task ended while its question was open: ${String(first.changed['status'])}.` : 'The question was answered elsewhere.');
        task = first.changed;
        continue;
      }
      ui.reader.pause();
      if (Object.keys(first.responses).length > 0) await client.request('tasks/update', { taskId, inputResponses: first.responses }, signal);
    }
    task = await next(task);
  }
}

/**
 * Resolves with the task once it no longer waits on any of `keys` (it ended, or they were
 * answered): tasks/get at its poll interval (at least every second) while a question is open.
 * A failed poll is tried again at the next interval; aborting `signal` stops it.
 */
async function questionWithdrawn(client: McpHttpClient, taskId: string, current: JsonObject, keys: readonly string[], signal: AbortSignal): Promise<JsonObject> {
  const interval = Math.min(DEFAULT_POLL_MS, typeof current['pollIntervalMs'] === 'number' && current['pollIntervalMs'] > 0 ? current['pollIntervalMs'] : DEFAULT_POLL_MS);
  for (;;) {
    await abortableSleep(interval, signal);
    let task: JsonObject;
    try {
      task = await client.request('tasks/get', { taskId }, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      continue;
    }
    const open = (task['inputRequests'] ?? {}) as JsonObject;
    if (isTerminal(task) || task['status'] !== 'input_required' || !keys.some((key) => key in open)) return task;
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
      try {
        const next = await stream.next();
        if (!next.done) return withoutMeta(next.value);
      } catch (error) {
        // The stream broke (its node went away): polling, which outlasts an outage, takes over.
        if (!(error instanceof TransportError) && !(error instanceof TypeError)) throw error;
      }
      ended = true;
    }
    return poll(current);
  };
}

function withoutMeta(params: JsonObject): JsonObject {
  const { _meta: _ignored, kind: _kind, ...task } = params;
  return task;
}
