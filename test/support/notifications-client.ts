// A raw subscriptions/listen client for the notifications tests: it opens the SSE stream by hand
// and keeps every frame (comments included), so tests see exactly what is on the wire.
import { envelope } from './server-raw-client.js';
import { frameViolation } from './ext-tasks-schema.js';
import { frameMessage } from './sse.js';

export interface ListenFrame {
  readonly raw: string;
  readonly comment: boolean;
  readonly message?: Record<string, any>;
}

export interface ListenStream {
  /** The listen request's JSON-RPC id (the subscription id). */
  readonly id: number | string;
  readonly status: number;
  readonly headers: Headers;
  /** Every frame so far. */
  readonly frames: ListenFrame[];
  /** The JSON-RPC messages so far. */
  messages(): Record<string, any>[];
  /** `params` of the `notifications/tasks` messages so far (without `_meta`). */
  tasks(): Record<string, any>[];
  /** Waits until `check(messages)` holds. */
  until(check: (messages: Record<string, any>[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  /** The body of a non-SSE answer (an error). */
  readonly json?: any;
  /** Drops the connection (client goes away). */
  abort(): void;
}

let nextId = 1000;

export interface ListenOptions {
  readonly tasks?: boolean;
  readonly token?: string;
  /** More members of params.notifications (e.g. toolsListChanged). */
  readonly filter?: Record<string, unknown>;
  readonly id?: number | string;
}

/** Sends `subscriptions/listen` with `notifications.taskIds = taskIds` and reads the stream as it comes. */
export async function listen(url: string, taskIds: readonly string[] | undefined, options: ListenOptions = {}): Promise<ListenStream> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'subscriptions/listen',
  };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  const notifications = { ...options.filter, ...(taskIds === undefined ? {} : { taskIds }) };
  const id = options.id ?? nextId++;
  const body = { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: envelope(options.tasks ?? true) } };
  const abort = new AbortController();
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: abort.signal });
  const frames: ListenFrame[] = [];
  // A frame that breaks the extension's official schema fails whatever reads the stream next.
  const violations: string[] = [];
  const messages = () => {
    if (violations.length > 0) throw new Error(`subscriptions/listen: ${violations.join('\n')}`);
    return frames.flatMap((f) => (f.message ? [f.message] : []));
  };
  const stream = {
    id,
    status: res.status,
    headers: res.headers,
    frames,
    messages,
    tasks: () =>
      messages()
        .filter((m) => m['method'] === 'notifications/tasks')
        .map((m) => {
          const { _meta, ...task } = m['params'];
          return task;
        }),
    async until(check: (m: Record<string, any>[]) => boolean, timeoutMs = 10_000, what = 'stream condition') {
      const start = Date.now();
      while (!check(messages())) {
        if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}; got ${JSON.stringify(messages())}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    abort: () => abort.abort(),
  };
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const json = (await res.json()) as Record<string, any>;
    const violation = frameViolation(json);
    if (violation !== undefined) throw new Error(`subscriptions/listen: ${violation}`);
    return { ...stream, json, ended: Promise.resolve() };
  }
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const raw = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message = frameMessage(raw);
          const violation = message && frameViolation(message);
          if (violation !== undefined) violations.push(violation);
          frames.push(message ? { raw, comment: false, message } : { raw, comment: raw.startsWith(':') });
        }
      }
    } catch {
      // aborted
    }
  })();
  return { ...stream, ended };
}
