import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { DirectRequest, DirectResponse } from '../exchange/direct-exchange.js';
import { jsonTextTooDeep, TOO_DEEP } from '../exchange/json-depth.js';
import { validHost } from './host-header.js';
import { readBody } from './read-body.js';
import { headerOf, webRequestOf } from './web-request.js';
import { writeDirect, writeJsonRpcError, writeResponse } from './write-response.js';

/** A `node:http` request, with the verified token that auth middleware put on it (`req.auth`, as for the SDK's `toNodeHandler`). */
export type NodeRequest = IncomingMessage & { auth?: AuthInfo };

/** A `node:http` request listener; a third argument (Express's `next`) is ignored. */
export type NodeListener = (req: NodeRequest, res: ServerResponse, next?: unknown) => void;

/** What {@link nodeListener} hands the request to. */
export interface NodeListenerOptions {
  readonly maxBodyBytes: number;
  readonly onerror: (error: Error) => void;
  /** The checks before the body is read (Host and Origin, the token's subject): their answer, if they refuse. */
  refuse(host: string, origin: string | undefined, authInfo: AuthInfo | undefined): DirectResponse | Response | undefined;
  /** Serves the request, its POST body parsed (`undefined` for other methods). */
  serve(request: DirectRequest, body: unknown): Promise<DirectResponse | Response>;
}

/**
 * The `node:http` side of the pipeline: a malformed Host header is 400; then the refusals that
 * need no body; then the body is read once (bounded: 413 past it, the connection closed), refused
 * when nested too deep before it is parsed, parsed once (-32700 when it is not JSON), and served.
 * The fast lane's answer is written in one write; the SDK lane's `Request` is built only when that
 * lane (or an owner resolver) asks for it.
 */
export function nodeListener(options: NodeListenerOptions): NodeListener {
  const { maxBodyBytes } = options;
  return (req, res) => {
    serve(req, res).catch((error: unknown) => {
      options.onerror(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) writeJsonRpcError(res, 500, -32603, 'Internal error');
      else res.destroy();
    });
  };

  async function serve(req: NodeRequest, res: ServerResponse): Promise<void> {
    const host = req.headers.host === undefined ? 'localhost' : validHost(req.headers.host);
    if (host === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request: malformed Host header');
      return;
    }
    const authInfo = req.auth;
    const refused = options.refuse(host, headerOf(req, 'origin'), authInfo);
    if (refused) return write(res, refused);
    const url = new URL(req.url ?? '/', `http://${host}`);
    let text: string | undefined;
    let body: unknown;
    if (req.method === 'POST') {
      text = await readBody(req, maxBodyBytes);
      if (text === undefined) {
        // The rest of the body is never read: the connection closes after the answer.
        res.setHeader('connection', 'close');
        return writeJsonRpcError(res, 413, -32600, `Request body is larger than ${maxBodyBytes} bytes`);
      }
      // Refused before the parse: nothing past the bound is ever walked (it overflowed the stack).
      if (jsonTextTooDeep(text)) return writeJsonRpcError(res, 400, -32700, `Parse error: ${TOO_DEEP}`);
      try {
        body = JSON.parse(text);
      } catch (error) {
        return writeJsonRpcError(res, 400, -32700, `Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`);
      }
    }
    let request: Request | undefined;
    const bodyText = text;
    const direct: DirectRequest = {
      method: req.method ?? 'GET',
      header: (name) => headerOf(req, name),
      body,
      // Its length is read only when a limit refuses it (the refusal hold keeps small requests only): not measured per request.
      get bodyBytes() {
        return bodyText === undefined ? undefined : Buffer.byteLength(bodyText);
      },
      authInfo,
      toRequest: () => (request ??= webRequestOf(req, res, url, bodyText)),
    };
    return write(res, await options.serve(direct, body));
  }
}

function write(res: ServerResponse, answer: DirectResponse | Response): Promise<void> | void {
  return answer instanceof Response ? writeResponse(res, answer) : writeDirect(res, answer);
}
