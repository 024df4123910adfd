import type { CallUi } from './call-ui.js';
import { isTerminal } from './follow-task.js';
import { answerInputRequests, UnsupportedInputError } from './input-requests.js';
import type { LegacyHttpClient, ServerRequestHandler } from './legacy-http-client.js';
import { RpcError, TransportError, type JsonObject } from './mcp-http-client.js';
import { printable } from '../printable.js';
import { abortableSleep } from './abortable-sleep.js';

const DEFAULT_POLL_MS = 1_000;
/** `tasks/result` streams that may end early (a node draining) before the call gives up. */
const MAX_RESULT_CALLS = 8;

/**
 * Follows a 2025-11-25 task to its end and resolves with it as the extension's `tasks/get`
 * would show it (`result` or `error` inlined), so it is reported as any task is. `tasks/result`
 * is held open from the start: the server asks the task's input on it (each elicitation asked in
 * the terminal, answered with a POSTed response) and answers it once the task ends; meanwhile
 * `tasks/get` every `pollInterval` feeds the progress display.
 */
export async function followLegacyTask(client: LegacyHttpClient, created: JsonObject, ui: CallUi, signal: AbortSignal): Promise<JsonObject> {
  const taskId = String(created['taskId']);
  let asking = 0;
  client.onServerRequest = answerTaskInput(ui, new Set(), (open) => (asking += open ? 1 : -1));
  let task = created;
  ui.display.update(task);
  let ended = false;
  const outcome = resultOf(client, taskId, signal).finally(() => (ended = true));
  outcome.catch(() => undefined);
  while (!ended) {
    const interval = typeof task['pollInterval'] === 'number' && task['pollInterval'] > 0 ? task['pollInterval'] : DEFAULT_POLL_MS;
    await Promise.race([abortableSleep(interval, signal), outcome.catch(() => undefined)]);
    if (ended) break;
    task = await client.request('tasks/get', { taskId }, signal);
    // An open question owns the terminal; the next state redraws the line once it is answered.
    if (asking === 0) ui.display.update(task);
  }
  const end = await outcome;
  const final = { ...(await client.request('tasks/get', { taskId }, signal)), ...end };
  ui.display.update(final);
  return final;
}

/** The task's end from `tasks/result`: `{ status: 'completed', result }` or `{ status: 'failed', error }`. */
async function resultOf(client: LegacyHttpClient, taskId: string, signal: AbortSignal): Promise<JsonObject> {
  for (let call = 1; ; call += 1) {
    try {
      const result = await client.request('tasks/result', { taskId }, signal);
      return { status: 'completed', result };
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof RpcError) {
        const task = await client.request('tasks/get', { taskId }, signal);
        if (task['status'] === 'failed') return { status: 'failed', error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
        if (task['status'] === 'cancelled') return { status: 'cancelled' };
        // A server that ended the stream with an error while the task lives (it is shutting down): ask again.
        if (isTerminal(task) || call >= MAX_RESULT_CALLS) throw error;
      } else if (!(error instanceof TransportError) || call >= MAX_RESULT_CALLS) {
        throw error;
      }
      await abortableSleep(250 * call, signal);
    }
  }
}

/**
 * Answers the input a task asks for on its `tasks/result` stream (or an inline call on its
 * own): an elicitation is asked in the
 * terminal (once per request id: the id names the task's input key, and a stream opened again
 * asks again only what is unanswered); what this client does not offer is answered -32601, as
 * the 1.x SDK's client answers a request it has no handler for.
 */
export function answerTaskInput(ui: CallUi, answered: Set<string>, asking: (open: boolean) => void = () => {}): ServerRequestHandler {
  return async ({ id, method, params }) => {
    const key = String(id);
    asking(true);
    ui.display.clear();
    try {
      const responses = await answerInputRequests({ [key]: { method, params } }, answered, ui.reader, ui.say);
      ui.reader.pause();
      return key in responses ? { result: responses[key] as JsonObject } : undefined;
    } catch (error) {
      if (!(error instanceof UnsupportedInputError)) throw error;
      ui.say(`mcp-tasks: ${printable(error.message)}`);
      answered.add(key);
      return { error: { code: -32601, message: `Method not found: ${method}` } };
    } finally {
      asking(false);
    }
  };
}
