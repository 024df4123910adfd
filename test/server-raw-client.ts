// A raw 2026-07-28 HTTP client for the server tests: every request is built by hand, so tests
// control the envelope, the headers and the body exactly.
export const TASKS = 'io.modelcontextprotocol/tasks';

export interface RpcReply {
  readonly status: number;
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string; data?: any };
}

let nextId = 1;

export function envelope(declareTasks: boolean): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test-client', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': declareTasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

/** Sends one request; `tasks` (default true) declares the extension in the request's envelope. */
export async function rpc(url: string, method: string, params: Record<string, unknown>, options: { tasks?: boolean } = {}): Promise<RpcReply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope(options.tasks ?? true) } };
  return post(url, JSON.stringify(body), headers);
}

/** Posts a raw body and reads the JSON-RPC reply (JSON or SSE). */
export async function post(url: string, body: string, headers: Record<string, string>): Promise<RpcReply> {
  const res = await fetch(url, { method: 'POST', headers, body });
  let text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
  }
  const message = JSON.parse(text);
  return { status: res.status, result: message.result, error: message.error };
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
