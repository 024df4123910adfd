// A raw 2026-07-28 HTTP client with bearer tokens, for the auth tests: it keeps the HTTP status
// and the WWW-Authenticate header, which the auth answers are about.
import { envelope } from './server-raw-client.js';

export interface AuthReply {
  readonly status: number;
  readonly challenge: string | null;
  readonly result?: Record<string, any>;
  readonly error?: { code: number; message: string; data?: any };
  readonly body: any;
}

let nextId = 1;

/** Sends one request with `Authorization: Bearer <token>` (no header when token is undefined). */
export async function authRpc(url: string, token: string | undefined, method: string, params: Record<string, unknown>, authorization?: string): Promise<AuthReply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (authorization !== undefined) headers['authorization'] = authorization;
  else if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  if (method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope(true) } };
  return postWith(url, JSON.stringify(body), headers);
}

export async function postWith(url: string, body: string, headers: Record<string, string>): Promise<AuthReply> {
  const res = await fetch(url, { method: 'POST', headers, body });
  let text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
  }
  const message = text === '' ? {} : JSON.parse(text);
  return { status: res.status, challenge: res.headers.get('www-authenticate'), result: message.result, error: message.error, body: message };
}
