// The soak's clients' wire: one raw request of either revision, recorded in the history as the
// client saw it (sent, answered or failed, with wall-clock times). Never throws.
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import type { History, Numbered, Revision, RpcEvent } from './history.js';

export interface Caller {
  readonly client: string;
  readonly owner: string;
  readonly token: string | undefined;
}

const TIMEOUT_MS = 20_000;

export async function call(history: History, caller: Caller, rev: Revision, node: { name: string; url: string }, method: string, params: Record<string, any>): Promise<Numbered<RpcEvent>> {
  const t0 = Date.now();
  const base = { kind: 'rpc' as const, t0, client: caller.client, owner: caller.owner, rev, node: node.name, method, params };
  try {
    const headers: Record<string, string> =
      rev === '2026'
        ? requestHeaders(method, params)
        : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    if (caller.token !== undefined) headers['authorization'] = `Bearer ${caller.token}`;
    const body = rev === '2026' ? requestBody(method, params, true) : JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    const response = await fetch(node.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const text = await response.text();
    const message = parseReply(text, response.headers.get('content-type') ?? '');
    return history.add({
      ...base,
      t1: Date.now(),
      status: response.status,
      ...(message?.result ? { result: message.result } : {}),
      ...(message?.error ? { error: message.error } : {}),
    });
  } catch (error) {
    return history.add({ ...base, t1: Date.now(), failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
}

function parseReply(text: string, contentType: string): { result?: any; error?: any } | undefined {
  try {
    if (contentType.includes('text/event-stream')) {
      const messages = text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
      return messages.filter((m) => 'id' in m && !('method' in m)).pop() as never;
    }
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The task id a tools/call created, if it created one. */
export function createdTaskId(event: RpcEvent): string | undefined {
  if (event.method !== 'tools/call' || !event.result) return undefined;
  if (event.rev === '2026') return event.result['resultType'] === 'task' && typeof event.result['taskId'] === 'string' ? event.result['taskId'] : undefined;
  const task = event.result['task'];
  return task && typeof task.taskId === 'string' ? task.taskId : undefined;
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * How the history names a 2025-11-25 answer: the 1.x client POSTs a bare JSON-RPC response to
 * the server-to-client request its `tasks/result` stream carried (recorded with the task and key
 * the request's id named, acknowledged by HTTP 202). The checker holds it to what it holds an
 * acknowledged `tasks/update` to.
 */
export const INPUT_RESPONSE = 'input/response';

/** The methods whose acknowledged requests carry answers (`params.inputResponses`). */
export const ANSWER_METHODS: ReadonlySet<string> = new Set(['tasks/update', INPUT_RESPONSE]);

const INPUT_ID = /^mcp-tasks\.input\.([^.]+)\.([A-Za-z0-9_-]+)$/;

/**
 * A 2025-11-25 `tasks/result` as the 1.x client reads it: an SSE stream that carries the task's
 * input requests, each answered (when `answer` gives one) by a POST to `answerNode()`, recorded as
 * {@link INPUT_RESPONSE}; the stream's final answer (or failure) is recorded as the `tasks/result`
 * call. Never throws.
 */
export async function resultStream(
  history: History,
  caller: Caller,
  node: { name: string; url: string },
  taskId: string,
  answer: (key: string, request: Record<string, any>) => Record<string, unknown> | undefined,
  answerNode: () => { name: string; url: string },
  timeoutMs = TIMEOUT_MS,
): Promise<Numbered<RpcEvent>> {
  const t0 = Date.now();
  const params = { taskId };
  const base = { kind: 'rpc' as const, t0, client: caller.client, owner: caller.owner, rev: '2025' as const, node: node.name, method: 'tasks/result', params };
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  if (caller.token !== undefined) headers['authorization'] = `Bearer ${caller.token}`;
  try {
    const response = await fetch(node.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/result', params }), signal: AbortSignal.timeout(timeoutMs) });
    let final: { result?: any; error?: any } | undefined;
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream') && response.body) {
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = frame.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
          if (data === '') continue;
          const message = JSON.parse(data) as Record<string, any>;
          if ('method' in message && 'id' in message) {
            const target = INPUT_ID.exec(String(message['id']));
            const key = target && target[1] === taskId ? Buffer.from(target[2]!, 'base64url').toString('utf8') : undefined;
            const result = key === undefined ? undefined : answer(key, message);
            if (key !== undefined && result !== undefined) await postInputResponse(history, caller, answerNode(), taskId, key, message['id'], result);
          } else if ('id' in message) {
            final = message;
          }
        }
      }
    } else {
      const text = await response.text();
      final = text === '' ? undefined : JSON.parse(text);
    }
    return history.add({ ...base, t1: Date.now(), status: response.status, ...(final?.result ? { result: final.result } : {}), ...(final?.error ? { error: final.error } : {}) });
  } catch (error) {
    return history.add({ ...base, t1: Date.now(), failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
}

async function postInputResponse(history: History, caller: Caller, node: { name: string; url: string }, taskId: string, key: string, id: unknown, result: Record<string, unknown>): Promise<void> {
  const t0 = Date.now();
  const base = { kind: 'rpc' as const, t0, client: caller.client, owner: caller.owner, rev: '2025' as const, node: node.name, method: INPUT_RESPONSE, params: { taskId, inputResponses: { [key]: result } } };
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  if (caller.token !== undefined) headers['authorization'] = `Bearer ${caller.token}`;
  try {
    const response = await fetch(node.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, result }), signal: AbortSignal.timeout(TIMEOUT_MS) });
    const text = await response.text();
    // 202 is the acknowledgement; anything else carries a JSON-RPC error (or is a failure).
    const error = response.status === 202 ? undefined : (parseReply(text, response.headers.get('content-type') ?? '')?.error ?? { code: -1, message: `HTTP ${response.status}` });
    history.add({ ...base, t1: Date.now(), status: response.status, ...(error ? { error } : { result: {} }) });
  } catch (error) {
    history.add({ ...base, t1: Date.now(), failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
}
