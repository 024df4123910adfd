import { TransportError, type JsonObject } from './json-rpc-types.js';

/**
 * The longest event this client reads (its `data:` lines together). A server's result may be
 * large, but not unbounded: past this the stream is dropped with a clear error instead of growing
 * the process until it dies.
 */
export const MAX_SSE_EVENT_CHARS = 32 * 1024 * 1024;

/**
 * The JSON-RPC messages of an SSE response body, as they arrive. Read line by line: each chunk is
 * scanned once (linear in the body, however it is framed), only the current line and the current
 * event's data are kept, and an event longer than `maxEventChars` ends the stream with an error.
 */
export async function* sseMessages(res: Response, maxEventChars = MAX_SSE_EVENT_CHARS): AsyncGenerator<JsonObject> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  // The line being read (its parts; joined once it ends) and the current event's data lines.
  let line: string[] = [];
  let data: string[] = [];
  let size = 0;
  const grow = (by: number) => {
    size += by;
    if (size > maxEventChars) throw new TransportError(`the server sent an event longer than ${maxEventChars} characters; the stream was dropped`);
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      grow(end - start);
      line.push(text.slice(start, end));
      start = end + 1;
      const whole = line.join('').replace(/\r$/, '');
      line = [];
      if (whole === '') {
        if (data.length > 0) yield parse(data.join('\n'));
        data = [];
        size = 0;
      } else if (whole.startsWith('data:')) data.push(whole.slice(whole.startsWith('data: ') ? 6 : 5));
      else size -= whole.length; // a comment, an id or an event name: not kept
    }
    grow(text.length - start);
    if (start < text.length) line.push(text.slice(start));
  }
}

function parse(text: string): JsonObject {
  try {
    return JSON.parse(text) as JsonObject;
  } catch {
    throw new TransportError('the server sent an event that is not JSON');
  }
}
