import type { JsonObject } from '@mcp-tasks/core';
import { UpstreamError, UpstreamRpcError } from './upstream-error.js';

/** What one `subscriptions/listen` stream of an upstream reports. */
export interface UpstreamListenEvents {
  /** The upstream agreed to follow these of the tasks asked for (`notifications/subscriptions/acknowledged`). */
  onAcknowledged(taskIds: readonly string[]): void;
  /** A task's current state (`notifications/tasks`: its DetailedTask), as the client parsed it. */
  onTask(task: JsonObject): void;
}

/** A stream that sends nothing (not even a keep-alive) for this long is dropped: a half-open connection is not followed forever. */
const IDLE_MS = 60_000;

/**
 * Reads a `subscriptions/listen` answer: an SSE stream of JSON-RPC messages, each frame bounded
 * by `maxFrameBytes`, until the listen's own result (or error) with `id`, the stream's end, or
 * `signal`. An answer that is not a stream is the upstream saying it does not offer one: its
 * JSON-RPC error is thrown as such, anything else as a non-retryable {@link UpstreamError}.
 */
export async function readListenStream(name: string, response: Response, id: number, maxFrameBytes: number, events: UpstreamListenEvents, abort: AbortController): Promise<void> {
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.includes('text/event-stream') || !response.body) {
    const text = await response.text().catch(() => '');
    const message = parseJson(text.length > maxFrameBytes ? '' : text);
    const error = message?.['error'];
    if (isObject(error) && typeof error['code'] === 'number' && typeof error['message'] === 'string') throw new UpstreamRpcError(name, error['code'], error['message'], error['data']);
    throw new UpstreamError(name, `subscriptions/listen answered HTTP ${response.status} without a stream`, { retryable: false });
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let idle: NodeJS.Timeout | undefined;
  let quiet = false;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      quiet = true;
      abort.abort();
    }, IDLE_MS);
    idle.unref();
  };
  arm();
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (quiet) throw new UpstreamError(name, `subscriptions/listen sent nothing for ${IDLE_MS} ms`);
        if (abort.signal.aborted) return;
        throw new UpstreamError(name, 'subscriptions/listen: the stream broke');
      }
      if (chunk.done) return;
      arm();
      buffer += decoder.decode(chunk.value, { stream: true });
      let end: number;
      while ((end = frameEnd(buffer)) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^(\r?\n){1,2}/, '');
        if (deliver(name, frame, id, events)) return;
      }
      if (buffer.length > maxFrameBytes) throw new UpstreamError(name, `subscriptions/listen sent a frame over ${maxFrameBytes} bytes`, { retryable: false });
    }
  } finally {
    clearTimeout(idle);
    await reader.cancel().catch(() => undefined);
  }
}

/** Where the first complete SSE event in `buffer` ends (before its blank line), or -1. */
function frameEnd(buffer: string): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (lf < 0) return crlf;
  if (crlf < 0) return lf;
  return Math.min(lf, crlf);
}

/** Hands one SSE event on; true when it was the listen's own end (its result). */
function deliver(name: string, frame: string, id: number, events: UpstreamListenEvents): boolean {
  const data = frame
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
  const message = parseJson(data);
  if (!message) return false;
  const params = message['params'];
  if (message['method'] === 'notifications/subscriptions/acknowledged') {
    const taskIds = isObject(params) && isObject(params['notifications']) ? params['notifications']['taskIds'] : undefined;
    events.onAcknowledged(Array.isArray(taskIds) ? taskIds.filter((taskId): taskId is string => typeof taskId === 'string') : []);
    return false;
  }
  if (message['method'] === 'notifications/tasks' && isObject(params)) {
    events.onTask(params);
    return false;
  }
  if (message['id'] !== id) return false;
  const error = message['error'];
  if (isObject(error) && typeof error['code'] === 'number' && typeof error['message'] === 'string') throw new UpstreamRpcError(name, error['code'], error['message'], error['data']);
  return 'result' in message;
}

function parseJson(text: string): JsonObject | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
