import type { ServerResponse } from 'node:http';
import type { DirectResponse } from '../exchange/direct-exchange.js';
import { jsonRpcErrorBody } from '../errors/json-rpc-error-body.js';

/** A whole answer of the fast lane, in one write with its length. */
export function writeDirect(res: ServerResponse, response: DirectResponse): void {
  res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) }).end(response.body);
}

/** A WHATWG `Response` (the SDK lane's) written to `res`: JSON in one write, an event stream as it comes, with backpressure. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') headers[name] = response.headers.getSetCookie();
    else headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    // A whole JSON answer goes out in one write with a length: no chunked framing, one syscall.
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, 'content-length': String(body.length) }).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  // What the stream has ready in this turn of the event loop (a listen's acknowledgement and, when
  // it follows nothing, its close) goes out with the headers in one write, not one write each: a
  // flood of short listens is mostly those writes. The headers still leave in this turn.
  res.cork();
  res.flushHeaders();
  process.nextTick(() => res.uncork());
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } finally {
    res.end();
  }
}

/** A JSON-RPC error without an id (the request was never read as one). */
export function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(jsonRpcErrorBody(null, { code, message })));
}
