// A raw JSON-RPC client for the demo's MCP endpoint (protocol 2026-07-28), over node:http with keep-alive.
import http from 'node:http';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

let nextId = 1;

// node:http with a keep-alive agent rather than fetch: the load generator shares the machine's two
// cores with the nodes and PostgreSQL, and fetch (undici's WHATWG layer) costs the client several
// times what the request costs the server.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface RpcReply {
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string };
}

/** One request, declaring the tasks extension (with `token` as its bearer token, if given); reads a JSON or an SSE reply. */
export async function rpc(url: string, method: string, params: Record<string, unknown>, token?: string): Promise<RpcReply> {
  const headers: Record<string, string> = {
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (method === 'tools/call') headers['mcp-name'] = String(params['name']);
  if (method.startsWith('tasks/')) headers['mcp-name'] = String(params['taskId']);
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } });
  const { contentType, text } = await post(url, headers, body);
  if (contentType.includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const message = JSON.parse(line.slice(6));
      if ('result' in message || 'error' in message) return message;
    }
    throw new Error(`no reply in the event stream of ${method}`);
  }
  return JSON.parse(text);
}

function post(url: string, headers: Record<string, string>, body: string, retried = false): Promise<{ contentType: string; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        // The retry takes a socket of its own: the pool may hold more sockets the server closed meanwhile.
        agent: retried ? false : agent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ contentType: String(response.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    // A kept-alive socket the server closed while it was idle (its keepAliveTimeout, between two
    // phases of a scenario) fails the next request on it at once: sent again on a new connection.
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (!retried && request.reusedSocket && error.code === 'ECONNRESET') post(url, headers, body, true).then(resolve, reject);
      else reject(error);
    });
    request.end(body);
  });
}
