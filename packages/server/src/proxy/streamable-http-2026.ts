import { ErrorCode, type JsonObject } from '@mcp-tasks/core';
import { TASKS_EXTENSION } from '../capability/tasks-extension.js';
import type { UpstreamCallOptions, UpstreamCallOutcome, UpstreamClient, UpstreamTask, UpstreamTaskListener, UpstreamTool } from './upstream-client.js';
import { retryAfterMs } from './retry-after.js';
import { readListenStream } from './upstream-listen-stream.js';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';

const REVISION = '2026-07-28';
/** Largest upstream answer read by default, so a misbehaving upstream cannot cost the proxy unbounded memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const TASK_STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

/** Options of {@link StreamableHttp2026Client}. */
export interface StreamableHttp2026Options {
  /** The mounted upstream's name: what errors say instead of its URL. */
  readonly name: string;
  readonly url: string;
  /** The bearer token the proxy presents upstream (its own credential, never the caller's). */
  readonly token?: string;
  /** How long one upstream request may take. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** What the proxy calls itself upstream. */
  readonly clientInfo?: { name: string; version: string };
  /** Largest answer read (bytes, counted while it streams in). Default 8 MiB. */
  readonly maxResponseBytes?: number;
  /** Most tools a `tools/list` (all pages) may list. Default {@link DEFAULT_MAX_TOOLS}. */
  readonly maxTools?: number;
}

/** Most tools one upstream may list by default: a longer list is refused, not served to every caller. */
export const DEFAULT_MAX_TOOLS = 1_000;

/**
 * An upstream speaking 2026-07-28 over Streamable HTTP: stateless requests, each with its
 * `_meta` envelope and routing headers, answered as JSON or as an SSE stream.
 */
export class StreamableHttp2026Client implements UpstreamClient {
  readonly revision = REVISION;
  readonly #options: StreamableHttp2026Options;
  #nextId = 1;

  constructor(options: StreamableHttp2026Options) {
    this.#options = options;
  }

  async listTools(): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    // Bounded: a cursor loop that never ends is an upstream fault, not a reason to hang.
    for (let page = 0; page < 50; page += 1) {
      const result = await this.#request('tools/list', cursor === undefined ? {} : { cursor }, { tasks: false });
      const listed = result['tools'];
      if (!Array.isArray(listed)) throw this.#garbage('tools/list has no tools array');
      const maxTools = this.#options.maxTools ?? DEFAULT_MAX_TOOLS;
      if (tools.length + listed.length > maxTools) throw this.#garbage(`tools/list lists more than ${maxTools} tools`);
      for (const tool of listed) {
        if (!isObject(tool) || typeof tool['name'] !== 'string' || !isObject(tool['inputSchema'])) throw this.#garbage('a listed tool has no name or inputSchema');
        tools.push({
          name: tool['name'],
          inputSchema: tool['inputSchema'],
          ...(typeof tool['title'] === 'string' ? { title: tool['title'] } : {}),
          ...(typeof tool['description'] === 'string' ? { description: tool['description'] } : {}),
          ...(isObject(tool['outputSchema']) ? { outputSchema: tool['outputSchema'] } : {}),
          ...(isObject(tool['annotations']) ? { annotations: tool['annotations'] } : {}),
          ...(isObject(tool['execution']) && tool['execution']['taskSupport'] === 'required' ? { taskRequired: true } : {}),
        });
      }
      cursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
      if (cursor === undefined) return tools;
    }
    throw this.#garbage('tools/list did not end after 50 pages');
  }

  async callTool(name: string, args: JsonObject, options: UpstreamCallOptions): Promise<UpstreamCallOutcome> {
    const params: JsonObject = {
      name,
      arguments: args,
      ...(options.inputResponses === undefined ? {} : { inputResponses: options.inputResponses }),
      ...(options.requestState === undefined ? {} : { requestState: options.requestState }),
    };
    const result = await this.#request('tools/call', params, options);
    const type = result['resultType'];
    if (type === 'task') return { kind: 'task', task: this.#task(result) };
    if (type === 'input_required') {
      if (!isObject(result['inputRequests'])) throw this.#garbage('an input_required result has no inputRequests');
      return {
        kind: 'input_required',
        inputRequests: result['inputRequests'] as Record<string, JsonObject>,
        ...(typeof result['requestState'] === 'string' ? { requestState: result['requestState'] } : {}),
      };
    }
    if (!Array.isArray(result['content'])) throw this.#garbage('a tools/call result has no content');
    return { kind: 'result', result };
  }

  async getTask(taskId: string): Promise<UpstreamTask | undefined> {
    try {
      return this.#task(await this.#request('tasks/get', { taskId }, { tasks: true }));
    } catch (error) {
      // The extension answers an unknown (or expired) task with -32602.
      if (error instanceof UpstreamRpcError && error.code === ErrorCode.InvalidParams) return undefined;
      throw error;
    }
  }

  async updateTask(taskId: string, inputResponses: JsonObject): Promise<void> {
    await this.#request('tasks/update', { taskId, inputResponses }, { tasks: true });
  }

  async cancelTask(taskId: string): Promise<void> {
    await this.#request('tasks/cancel', { taskId }, { tasks: true });
  }

  /**
   * Follows many tasks on one `subscriptions/listen` stream (the extension's `notifications/tasks`):
   * resolves when the stream ends or `signal` aborts. Only the connection has the request's
   * deadline; the stream lives until either side ends it (or it goes quiet for a minute).
   */
  async listenTasks(taskIds: readonly string[], events: UpstreamTaskListener, signal: AbortSignal): Promise<void> {
    const { name, url, timeoutMs = 30_000 } = this.#options;
    const { id, body, headers } = this.#prepare('subscriptions/listen', { notifications: { taskIds: [...taskIds] } }, { tasks: true });
    const abort = new AbortController();
    const stop = () => abort.abort();
    signal.addEventListener('abort', stop, { once: true });
    const connecting = setTimeout(stop, timeoutMs);
    try {
      let response: Response;
      try {
        response = await fetch(url, { method: 'POST', headers, body, signal: abort.signal });
      } catch {
        if (signal.aborted) return;
        throw new UpstreamError(name, abort.signal.aborted ? `subscriptions/listen did not answer within ${timeoutMs} ms` : 'subscriptions/listen could not reach the upstream');
      } finally {
        clearTimeout(connecting);
      }
      if (response.status === 429 || response.status === 503) {
        await response.body?.cancel().catch(() => undefined);
        const waitMs = retryAfterMs(response.headers.get('retry-after'));
        throw new UpstreamError(name, `subscriptions/listen was refused for the upstream's capacity (HTTP ${response.status}); it asks to wait ${waitMs} ms`, { retryAfterMs: waitMs });
      }
      const maxBytes = this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      await readListenStream(name, response, id, maxBytes, {
        onAcknowledged: (agreed) => events.onAcknowledged(agreed),
        onTask: (raw) => {
          let task: UpstreamTask;
          try {
            task = this.#task(raw);
          } catch {
            return; // A frame that is not a task is skipped; the task's next poll reads it.
          }
          events.onTask(task);
        },
      }, abort);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  #task(result: JsonObject): UpstreamTask {
    const { taskId, status } = result;
    if (typeof taskId !== 'string' || typeof status !== 'string' || !TASK_STATUSES.has(status)) throw this.#garbage('a task has no taskId or a status it does not define');
    return {
      taskId,
      status: status as UpstreamTask['status'],
      ...(typeof result['statusMessage'] === 'string' ? { statusMessage: result['statusMessage'] } : {}),
      ...(typeof result['pollIntervalMs'] === 'number' ? { pollIntervalMs: result['pollIntervalMs'] } : {}),
      ...(isObject(result['inputRequests']) ? { inputRequests: result['inputRequests'] as Record<string, JsonObject> } : {}),
      ...(isObject(result['result']) ? { result: result['result'] } : {}),
      ...(isObject(result['error']) && typeof result['error']['code'] === 'number' && typeof result['error']['message'] === 'string'
        ? { error: result['error'] as JsonObject & { code: number; message: string } }
        : {}),
    };
  }

  async #request(method: string, params: JsonObject, options: Pick<UpstreamCallOptions, 'tasks' | 'clientCapabilities' | 'traceContext' | 'signal'>): Promise<JsonObject> {
    const { name, url, timeoutMs = 30_000 } = this.#options;
    const { id, body, headers } = this.#prepare(method, params, options);
    let text: string;
    let contentType: string;
    let status: number;
    try {
      // The deadline covers the whole exchange, body included: past it the connection is dropped,
      // which ends the request upstream as well.
      const deadline = AbortSignal.timeout(timeoutMs);
      const response = await fetch(url, { method: 'POST', headers, body, signal: options.signal ? AbortSignal.any([deadline, options.signal]) : deadline });
      status = response.status;
      if (status === 429 || status === 503) {
        await response.body?.cancel().catch(() => undefined);
        const waitMs = retryAfterMs(response.headers.get('retry-after'));
        throw new UpstreamError(name, `${method} was refused for the upstream's capacity (HTTP ${status}); it asks to wait ${waitMs} ms`, { retryAfterMs: waitMs });
      }
      contentType = response.headers.get('content-type') ?? '';
      const maxBytes = this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      text = await readBounded(response, maxBytes, () => new UpstreamError(name, `${method} answered more than ${maxBytes} bytes; the answer was cut off`, { retryable: false }));
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      if (options.signal?.aborted) throw new UpstreamError(name, `${method} was ended by its caller`, { retryable: false });
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new UpstreamError(name, timedOut ? `${method} did not answer within ${timeoutMs} ms` : `${method} could not reach the upstream`);
    }
    if (status === 401 || status === 403) throw new UpstreamError(name, `${method} was refused (HTTP ${status}): the proxy's credentials for this upstream are not accepted`);
    const message = parseMessage(text, contentType, id);
    if (message === undefined) throw new UpstreamError(name, `${method} answered HTTP ${status} without a JSON-RPC response`);
    if (isObject(message['error'])) {
      const error = message['error'];
      if (typeof error['code'] !== 'number' || typeof error['message'] !== 'string') throw this.#garbage(`${method} answered a malformed error`);
      throw new UpstreamRpcError(name, error['code'], error['message'], error['data']);
    }
    if (!isObject(message['result'])) throw this.#garbage(`${method} answered no result`);
    return message['result'];
  }

  /** A request's id, body and headers: the `_meta` envelope, the routing headers, the gateway's credential. */
  #prepare(method: string, params: JsonObject, options: Pick<UpstreamCallOptions, 'tasks' | 'clientCapabilities' | 'traceContext'>): { id: number; body: string; headers: Record<string, string> } {
    const { token, clientInfo = { name: 'mcp-tasks-proxy', version: '0.1.0' } } = this.#options;
    const capabilities: JsonObject = { ...(options.clientCapabilities ?? {}) };
    delete capabilities['extensions'];
    if (options.tasks) capabilities['extensions'] = { [TASKS_EXTENSION]: {} };
    const id = this.#nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          ...(options.traceContext ?? {}),
          'io.modelcontextprotocol/protocolVersion': REVISION,
          'io.modelcontextprotocol/clientInfo': clientInfo,
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': method,
    };
    const routed = method === 'tools/call' ? params['name'] : method.startsWith('tasks/') ? params['taskId'] : undefined;
    if (typeof routed === 'string') headers['mcp-name'] = routed;
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    return { id, body, headers };
  }

  #garbage(what: string): UpstreamError {
    return new UpstreamError(this.#options.name, `answered something that is not MCP (${what})`);
  }
}

/**
 * The body as text, read chunk by chunk and cut off (the connection dropped) at `maxBytes`: a
 * hostile upstream's 400 MB answer costs the proxy at most the limit, not the answer.
 */
async function readBounded(response: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  const length = Number(response.headers.get('content-length') ?? '0');
  if (length > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** The JSON-RPC response with `id` in a JSON body or an SSE stream; `undefined` when there is none. */
function parseMessage(text: string, contentType: string, id: number): JsonObject | undefined {
  const candidates: string[] = contentType.includes('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim())
    : [text];
  for (const candidate of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    if (isObject(parsed) && parsed['id'] === id && ('result' in parsed || 'error' in parsed)) return parsed;
  }
  return undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
