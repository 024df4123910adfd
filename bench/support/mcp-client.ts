// A raw JSON-RPC client for the demo's MCP endpoint (protocol 2026-07-28), over fetch (undici, keep-alive).
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

let nextId = 1;

export interface RpcReply {
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string };
}

/** One request, declaring the tasks extension; reads a JSON or an SSE reply. */
export async function rpc(url: string, method: string, params: Record<string, unknown>): Promise<RpcReply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call') headers['mcp-name'] = String(params['name']);
  if (method.startsWith('tasks/')) headers['mcp-name'] = String(params['taskId']);
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } });
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const message = JSON.parse(line.slice(6));
      if ('result' in message || 'error' in message) return message;
    }
    throw new Error(`no reply in the event stream of ${method}`);
  }
  return JSON.parse(text);
}
