// Requests with bearer tokens, for the auth tests; replies keep the HTTP status and the
// WWW-Authenticate header, which the auth answers are about.
import { post, requestBody, requestHeaders, type RpcReply } from './server-raw-client.js';

export { post as postWith, type RpcReply as AuthReply };

/** Sends one request with `Authorization: Bearer <token>` (no header when token is undefined), or the raw `authorization` given. */
export async function authRpc(url: string, token: string | undefined, method: string, params: Record<string, unknown>, authorization?: string): Promise<RpcReply> {
  const headers = requestHeaders(method, params);
  if (authorization !== undefined) headers['authorization'] = authorization;
  else if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  return post(url, requestBody(method, params, true), headers);
}
