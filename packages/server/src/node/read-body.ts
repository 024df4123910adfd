import type { IncomingMessage } from 'node:http';

/**
 * The request body as text, or `undefined` when it is longer than `maxBytes` (the rest is then
 * left unread: the caller answers 413 and closes the connection). Listeners rather than the
 * stream's async iterator: this runs once per request, and the iterator's promises and
 * end-of-stream bookkeeping cost more than the read itself.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      resolve(undefined);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(new Error('the request closed before its body was read'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
