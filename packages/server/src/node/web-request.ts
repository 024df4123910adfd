import type { IncomingMessage, ServerResponse } from 'node:http';

/** The request as a WHATWG `Request` for the SDK lane, aborted only by a client that left before its answer. */
export function webRequestOf(req: IncomingMessage, res: ServerResponse, url: URL, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const abort = new AbortController();
  // Aborting after every answer would build an AbortError (and the SDK's teardown errors) for each request served.
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return new Request(url, { method: req.method ?? 'GET', headers, body, signal: abort.signal });
}

/** A header as `Headers.get` reads it: repeated values joined by ", ". */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
