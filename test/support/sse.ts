// The one SSE reader of the tests: a whole body's messages, or a streaming body frame by frame
// (bounded: a stream that stops sending is cancelled at `timeoutMs`, never awaited forever).

/** One SSE frame: its text, and the JSON of its `data:` lines (none for a comment or an empty event). */
export interface SseFrame {
  readonly raw: string;
  readonly message?: Record<string, any>;
}

/** The JSON of a frame's `data:` lines, joined as the SSE format joins them; undefined when it has none. */
export function frameMessage(raw: string): Record<string, any> | undefined {
  const data = raw
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  return data.length === 0 ? undefined : (JSON.parse(data.join('\n')) as Record<string, any>);
}

/** The messages of a whole body: a JSON body's one message, or an SSE body's, in order. */
export function bodyMessages(text: string): any[] {
  if (text.trimStart().startsWith('{')) return [JSON.parse(text) as Record<string, any>];
  return text.split('\n\n').flatMap((raw) => frameMessage(raw) ?? []);
}

/** The JSON-RPC answer in a whole body (JSON or SSE): the last message with a result or an error. */
export function answerOf(text: string): Record<string, any> {
  const answer = bodyMessages(text).filter((message) => 'result' in message || 'error' in message).at(-1);
  if (!answer) throw new Error(`no JSON-RPC answer in: ${text.slice(0, 500)}`);
  return answer;
}

export interface ReadFramesOptions {
  /** Stops reading once this holds of the frames read so far (else at the end of the stream). */
  readonly until?: (frames: readonly SseFrame[]) => boolean;
  /** The stream is cancelled after this long, and what was read is returned. Default 5 000. */
  readonly timeoutMs?: number;
  /** Leaves the stream open (the lock released) instead of cancelling it when done. */
  readonly keepOpen?: boolean;
}

/** Reads the frames of a streaming SSE response, comments included. */
export async function readFrames(response: Response, options: ReadFramesOptions = {}): Promise<SseFrame[]> {
  const { until = () => false, timeoutMs = 5_000, keepOpen = false } = options;
  const frames: SseFrame[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), timeoutMs);
  let buffer = '';
  try {
    while (!until(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message = frameMessage(raw);
        frames.push(message ? { raw, message } : { raw });
        if (until(frames)) break;
      }
    }
  } finally {
    clearTimeout(timer);
    if (keepOpen) reader.releaseLock();
    else await reader.cancel().catch(() => {});
  }
  return frames;
}

/** The first `count` messages of a streaming SSE response (fewer when it ends or times out first). */
export async function readMessages(response: Response, count: number, options: Omit<ReadFramesOptions, 'until'> = {}): Promise<any[]> {
  const messagesOf = (frames: readonly SseFrame[]) => frames.flatMap((frame) => frame.message ?? []);
  return messagesOf(await readFrames(response, { ...options, until: (frames) => messagesOf(frames).length >= count })).slice(0, count);
}
