import { cliVersion } from '../version.js';
import { readReply, RpcError, sseMessages, TransportError, type JsonObject, type RpcClient } from './mcp-http-client.js';

export const LEGACY_PROTOCOL_VERSION = '2025-11-25';

/**
 * What the client answers a server-to-client request with (an elicitation on a `tasks/result`
 * stream): `{ result }`, `{ error }`, or `undefined` to send nothing (a request already answered).
 */
export type ServerRequestHandler = (request: { id: string | number; method: string; params: JsonObject }) => Promise<{ result: JsonObject } | { error: { code: number; message: string } } | undefined>;

/**
 * A client of the protocol over Streamable HTTP at revision 2025-11-25: `initialize` declares
 * form elicitation once (and keeps the session the server hands out, if any), later requests
 * carry the negotiated version, and a server-to-client request on a response stream is answered
 * by POSTing a bare JSON-RPC response, as that revision does.
 */
export class LegacyHttpClient implements RpcClient {
  #nextId = 1;
  #sessionId: string | undefined;
  onServerRequest: ServerRequestHandler = async ({ method }) => ({ error: { code: -32601, message: `Method not found: ${method}` } });

  constructor(
    readonly url: string,
    private readonly token: string | undefined,
  ) {}

  /** `initialize` and `notifications/initialized`; the server's InitializeResult. */
  async initialize(signal?: AbortSignal): Promise<JsonObject> {
    const params = { protocolVersion: LEGACY_PROTOCOL_VERSION, capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'mcp-tasks-cli', version: cliVersion() } };
    const res = await this.#post({ jsonrpc: '2.0', id: this.#nextId++, method: 'initialize', params }, signal, false);
    this.#sessionId = res.headers.get('mcp-session-id') ?? undefined;
    const result = await this.#answerOf(res, 'initialize', signal);
    const sent = await this.#post({ jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
    await sent.arrayBuffer();
    return result;
  }

  async request(method: string, params: JsonObject, signal?: AbortSignal): Promise<JsonObject> {
    const res = await this.#post({ jsonrpc: '2.0', id: this.#nextId++, method, params }, signal);
    return this.#answerOf(res, method, signal);
  }

  /** Ends the session the server handed out, if it did (best effort: the server may not allow it). */
  async close(): Promise<void> {
    if (this.#sessionId === undefined) return;
    const headers = this.#headers();
    await fetch(this.url, { method: 'DELETE', headers, signal: AbortSignal.timeout(2_000) })
      .then((res) => res.arrayBuffer())
      .catch(() => undefined);
  }

  /** The answer to `method`; server-to-client requests met on its stream on the way are answered. */
  async #answerOf(res: Response, method: string, signal: AbortSignal | undefined): Promise<JsonObject> {
    let message: JsonObject | undefined;
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      for await (const frame of sseMessages(res)) {
        if (typeof frame['method'] === 'string' && frame['id'] !== undefined) {
          await this.#answerServerRequest(frame, signal);
          continue;
        }
        if ('result' in frame || 'error' in frame) {
          message = frame;
          break;
        }
      }
      if (!message) throw new TransportError(`${method}: the stream ended without an answer (HTTP ${res.status})`);
    } else {
      message = await readReply(res, method);
    }
    if (message['error']) throw new RpcError(method, Number(message['error'].code), String(message['error'].message ?? 'error'), message['error'].data);
    if (typeof message['result'] !== 'object' || message['result'] === null) throw new TransportError(`${method}: the answer has no result`);
    return message['result'] as JsonObject;
  }

  async #answerServerRequest(frame: JsonObject, signal: AbortSignal | undefined): Promise<void> {
    const answer = await this.onServerRequest({ id: frame['id'], method: frame['method'], params: (frame['params'] ?? {}) as JsonObject });
    if (answer === undefined) return;
    const res = await this.#post({ jsonrpc: '2.0', id: frame['id'], ...answer }, signal);
    await res.arrayBuffer();
    if (res.status >= 400) throw new TransportError(`the server refused the answer to its ${String(frame['method'])} request (HTTP ${res.status})`);
  }

  #headers(withVersion = true): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (withVersion) headers['mcp-protocol-version'] = LEGACY_PROTOCOL_VERSION;
    if (this.#sessionId !== undefined) headers['mcp-session-id'] = this.#sessionId;
    if (this.token !== undefined) headers['authorization'] = `Bearer ${this.token}`;
    return headers;
  }

  async #post(message: JsonObject, signal: AbortSignal | undefined, withVersion = true): Promise<Response> {
    try {
      return await fetch(this.url, { method: 'POST', headers: this.#headers(withVersion), body: JSON.stringify(message), signal: signal ?? null });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new TransportError(`could not reach ${this.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
  }
}
