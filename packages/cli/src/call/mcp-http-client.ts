import { cliVersion } from '../version.js';
import { RpcError, TransportError, type JsonObject, type RpcClient } from './json-rpc-types.js';
import type { ConnectionRetry } from './connection-retry.js';
import { sseMessages } from './sse-messages.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const PROTOCOL_VERSION = '2026-07-28';

export { RpcError, TransportError, sseMessages, type JsonObject, type RpcClient };

/**
 * A client of the protocol over Streamable HTTP at revision 2026-07-28: every request carries
 * the envelope that declares the tasks extension and form elicitation (there is no session to
 * declare them once), and the routing headers load balancers use.
 */
export class McpHttpClient implements RpcClient {
  #nextId = 1;
  /** Set once a task exists: its requests then outlast the server being out of reach for a while. */
  retry: ConnectionRetry | undefined;
  constructor(
    readonly url: string,
    private readonly token: string | undefined,
  ) {}

  request(method: string, params: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    return this.retry ? this.retry.run(method, signal, () => this.#request(method, params, signal)) : this.#request(method, params, signal);
  }

  async #request(method: string, params: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    const res = await this.#post(method, params, signal);
    let message: JsonObject;
    try {
      message = await readReply(res, method);
    } catch (error) {
      if (signal?.aborted || error instanceof TransportError || error instanceof RpcError) throw error;
      // The body broke off (the node went away mid-answer): as far as the caller knows, out of reach.
      throw new TransportError(`${method}: the connection to ${this.url} broke off (${(error as Error).message})`, 'lost');
    }
    if (message.error) throw new RpcError(method, Number(message.error.code), String(message.error.message ?? 'error'), message.error.data);
    if (typeof message.result !== 'object' || message.result === null) throw new TransportError(`${method}: the answer has no result`);
    return message.result as JsonObject;
  }

  /**
   * `subscriptions/listen` for `taskIds`: yields `{ kind: 'acknowledged' }` once the server
   * acknowledged the subscription, then the params of each `notifications/tasks`, until the
   * stream ends or `signal` aborts it.
   */
  async *listen(taskIds: readonly string[], signal: AbortSignal): AsyncGenerator<JsonObject> {
    const res = await this.#post('subscriptions/listen', { notifications: { taskIds } }, signal);
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const message = await readReply(res, 'subscriptions/listen');
      if (message.error) throw new RpcError('subscriptions/listen', Number(message.error.code), String(message.error.message), message.error.data);
      throw new TransportError('subscriptions/listen: the server answered without a stream');
    }
    for await (const message of sseMessages(res)) {
      if (message['error']) throw new RpcError('subscriptions/listen', Number(message['error'].code), String(message['error'].message), message['error'].data);
      if (message['method'] === 'notifications/subscriptions/acknowledged') yield { kind: 'acknowledged' };
      if (message['method'] === 'notifications/tasks' && typeof message['params'] === 'object') yield message['params'] as JsonObject;
    }
  }

  async #post(method: string, params: JsonObject, signal: AbortSignal | undefined): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': method,
    };
    // Mcp-Name lets a load balancer route a task's requests (the spec's routing headers).
    if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
    if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
    if (this.token !== undefined) headers['authorization'] = `Bearer ${this.token}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.#nextId++, method, params: { ...params, _meta: { ...params['_meta'], ...envelope() } } });
    try {
      return await fetch(this.url, { method: 'POST', headers, body, signal: signal ?? null });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new TransportError(`could not reach ${this.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, cause?.code === 'ECONNREFUSED' ? 'refused' : 'lost');
    }
  }
}

function envelope(): JsonObject {
  return {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-cli', version: cliVersion() },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
  };
}

/** The JSON-RPC answer of a POST, from a JSON body or the first answer on an SSE stream. */
export async function readReply(res: Response, method: string): Promise<JsonObject> {
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for await (const message of sseMessages(res)) if ('result' in message || 'error' in message) return message;
    throw new TransportError(`${method}: the stream ended without an answer (HTTP ${res.status})`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: reported below with the HTTP status.
  }
  if (isJsonRpcAnswer(body)) return body;
  if (res.status === 401 || res.status === 403) {
    // An OAuth error body (`error`, `error_description`), not JSON-RPC.
    const description = (body as JsonObject | undefined)?.['error_description'];
    throw new TransportError(`${method}: HTTP ${res.status}, the server refused the credentials${typeof description === 'string' ? ` (${description})` : ''}; pass --token or set MCP_TASKS_TOKEN`);
  }
  // A gateway's 502/503/504: the node behind it is restarting or draining; the task lives on.
  const reach = res.status === 502 || res.status === 503 || res.status === 504 ? 'lost' : undefined;
  throw new TransportError(`${method}: HTTP ${res.status}, not a JSON-RPC answer${text ? `: ${text.slice(0, 200)}` : ''}`, reach);
}

function isJsonRpcAnswer(body: unknown): body is JsonObject {
  if (typeof body !== 'object' || body === null) return false;
  const message = body as JsonObject;
  return 'result' in message || (typeof message['error'] === 'object' && message['error'] !== null && typeof message['error'].code === 'number');
}
