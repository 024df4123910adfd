import type { AuthInfo } from '@modelcontextprotocol/server';
import { contentLengthOf } from './content-length.js';

/**
 * One HTTP request as a host that already holds it parsed hands it to
 * {@link McpTasksHandler.serveDirect}: no WHATWG `Request` has to be built for the requests the
 * direct path serves, and the host writes the {@link DirectResponse} straight to its socket.
 */
export interface DirectRequest {
  /** The HTTP method. */
  readonly method: string;
  /** A header's value by lower-case name, as `Headers.get` gives it (`undefined` when absent). */
  header(name: string): string | undefined;
  /** The parsed JSON body of a POST. */
  readonly body: unknown;
  /** The body's length in bytes, when the host knows it; else its `Content-Length` is taken (a refusal is held only for a small request). */
  readonly bodyBytes?: number | undefined;
  /** The validated token, when the endpoint has authorization. */
  readonly authInfo?: AuthInfo | undefined;
  /**
   * The request as a WHATWG `Request`, built only if something asks for it (an owner resolver
   * that reads the request, say): the direct path itself never does.
   */
  toRequest(): Request;
}

/** A whole answer: status, headers and the body text. */
export interface DirectResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** `response` as a WHATWG `Response`, for fetch hosts. */
export function toWebResponse(response: DirectResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}

/** A {@link DirectRequest} over a WHATWG `Request` whose body is already parsed. */
export function directRequestOf(request: Request, body: unknown, authInfo: AuthInfo | undefined): DirectRequest {
  return {
    method: request.method,
    header: (name) => request.headers.get(name) ?? undefined,
    body,
    authInfo,
    toRequest: () => request,
  };
}

/** The body length of `request`: what its host says, else its `Content-Length`; `undefined` when neither is known. */
export function bodyBytesOf(request: DirectRequest): number | undefined {
  return request.bodyBytes ?? contentLengthOf(request.header('content-length'));
}

/** A WHATWG `Response` as a {@link DirectResponse} (its body read whole). */
export async function fromWebResponse(response: Response): Promise<DirectResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}
