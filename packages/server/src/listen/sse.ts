import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, type Implementation, type RequestId } from '@modelcontextprotocol/server';

/**
 * The SSE framing of the SDK's own `subscriptions/listen` streams (its listenRouter), so a client
 * cannot tell a task listen served here from one the SDK serves: one `event: message` frame per
 * JSON-RPC message, `: keepalive` comments, the same response headers.
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** The SDK's default keepalive interval on listen streams. */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;

export const KEEPALIVE_FRAME = ': keepalive\n\n';

/** One JSON-RPC message as an SSE frame. */
export function messageFrame(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** A notification of the listen stream, its `_meta` stamped with the subscription id (the listen request's id). */
export function notificationFrame(method: string, params: Record<string, unknown>, subscriptionId: RequestId): string {
  const meta = (params['_meta'] as Record<string, unknown> | undefined) ?? {};
  return messageFrame({ jsonrpc: '2.0', method, params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_META_KEY]: subscriptionId } } });
}

/** The graceful close: the listen request's (empty) result. */
export function closeFrame(subscriptionId: RequestId, serverInfo: Implementation | undefined): string {
  return messageFrame({
    jsonrpc: '2.0',
    id: subscriptionId,
    result: {
      resultType: 'complete',
      _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId, ...(serverInfo ? { [SERVER_INFO_META_KEY]: serverInfo } : {}) },
    },
  });
}

/** A frame read back from an SSE stream: its raw text and, unless it is a comment, its JSON message. */
export interface SseFrame {
  readonly raw: string;
  readonly message?: Record<string, unknown>;
}

/** Reads the frames of an SSE body (the SDK's listen stream) one by one. */
export class SseFrameReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** The next frame, or undefined at the end of the stream. */
  async next(): Promise<SseFrame | undefined> {
    for (;;) {
      const end = this.#buffer.search(/\r?\n\r?\n/);
      if (end >= 0) {
        const raw = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        if (raw.trim() === '') continue;
        return parseFrame(raw);
      }
      const { value, done } = await this.#reader.read();
      if (done) {
        const rest = this.#buffer.trim();
        this.#buffer = '';
        return rest === '' ? undefined : parseFrame(rest);
      }
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

function parseFrame(raw: string): SseFrame {
  const data = raw
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''));
  if (data.length === 0) return { raw };
  try {
    const message = JSON.parse(data.join('\n')) as unknown;
    return typeof message === 'object' && message !== null ? { raw, message: message as Record<string, unknown> } : { raw };
  } catch {
    return { raw };
  }
}
