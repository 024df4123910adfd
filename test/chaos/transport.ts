// The soak's clients' wire: one raw request of either revision, recorded in the history as the
// client saw it (sent, answered or failed, with wall-clock times). Never throws.
import { requestBody, requestHeaders } from '../server-raw-client.js';
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
