// A raw 2026-07-28 HTTP client for the server tests: every request is built by hand, so tests
// control the envelope, the headers and the body exactly.
import { assertReplyConforms } from './ext-tasks-schema.js';
import { bodyMessages } from './sse.js';

export const TASKS = 'io.modelcontextprotocol/tasks';

export interface RpcReply {
  readonly status: number;
  /** The `WWW-Authenticate` header, which the auth answers are about. */
  readonly challenge: string | null;
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string; data?: any };
  /** The whole JSON-RPC message (or `{}` for an empty body). */
  readonly body: any;
}

let nextId = 1;

/** What the raw client declares besides the extension: form elicitation, which the demo's tools ask for. */
export const DEFAULT_CAPABILITIES: Record<string, unknown> = { elicitation: { form: {} } };

/** The request envelope; `capabilities` (default {@link DEFAULT_CAPABILITIES}) are declared with the extension when `declareTasks`. */
export function envelope(declareTasks: boolean, capabilities: Record<string, unknown> = DEFAULT_CAPABILITIES): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test-client', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': declareTasks ? { ...capabilities, extensions: { [TASKS]: {} } } : capabilities,
  };
}

/** The standard 2026-07-28 headers of a request, `Mcp-Name` included. */
export function requestHeaders(method: string, params: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  return headers;
}

/** A JSON-RPC request body with the envelope in `_meta`. */
export function requestBody(method: string, params: Record<string, unknown>, declareTasks: boolean, capabilities?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope(declareTasks, capabilities) } });
}

/**
 * Sends one request; `tasks` (default true) declares the extension in the request's envelope,
 * `capabilities` replaces the other declared client capabilities.
 */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { tasks?: boolean; capabilities?: Record<string, unknown> } = {},
): Promise<RpcReply> {
  return post(url, requestBody(method, params, options.tasks ?? true, options.capabilities), requestHeaders(method, params));
}

/** Posts a raw body and reads the JSON-RPC reply (JSON or SSE). */
export async function post(url: string, body: string, headers: Record<string, string>): Promise<RpcReply> {
  const res = await fetch(url, { method: 'POST', headers, body });
  let text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = bodyMessages(text);
    text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
  }
  const message = text === '' ? {} : JSON.parse(text);
  // Every 2026-07-28 answer a test sees is checked against the extension's official schema.
  if (headers['mcp-protocol-version'] === '2026-07-28') assertReplyConforms(headers['mcp-method'] ?? '', message);
  return { status: res.status, challenge: res.headers.get('www-authenticate'), result: message.result, error: message.error, body: message };
}

/** Polls tasks/get until `done(task)` holds. */
export async function waitFor(url: string, taskId: string, done: (task: Record<string, any>) => boolean, timeoutMs = 10_000) {
  const start = Date.now();
  for (;;) {
    const reply = await rpc(url, 'tasks/get', { taskId });
    if (reply.result && done(reply.result)) return reply.result;
    if (Date.now() - start > timeoutMs) throw new Error(`task ${taskId} did not get there: ${JSON.stringify(reply)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
