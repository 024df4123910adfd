// A 2025-11-25 client for the tests: the real 1.x SDK client (`@modelcontextprotocol/sdk`), whose
// HTTP requests go where `route` sends each one (by its JSON-RPC method, or `response` for an
// answer to a server-to-client request), so a test decides which node serves what.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bodyMessages } from './sse.js';

export { Client as LegacyClient };

/** Which URL serves a request of `method` (`response`: a POSTed answer; `other`: GET/DELETE). */
export type LegacyRoute = (method: string) => string;

export interface LegacyClientOptions {
  readonly route: LegacyRoute;
  readonly token?: string;
  /** The client capabilities declared in `initialize`. Default: form elicitation. */
  readonly capabilities?: Record<string, unknown>;
  /** Where each request went: [method, url]. */
  readonly log?: Array<[string, string]>;
}

/** Connects a 1.x client (initialize included) whose transport routes each request by `route`. */
export async function connectLegacyClient(options: LegacyClientOptions): Promise<Client> {
  const client = new Client({ name: 'legacy-test-client', version: '1.32.2' }, { capabilities: (options.capabilities ?? { elicitation: { form: {} } }) as never });
  const routed: typeof fetch = async (input, init) => {
    const method = methodOf(init);
    const url = options.route(method);
    options.log?.push([method, url]);
    const headers = new Headers(init?.headers);
    if (options.token !== undefined) headers.set('authorization', `Bearer ${options.token}`);
    return fetch(url, { ...init, headers });
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(options.route('initialize')), { fetch: routed }));
  return client;
}

function methodOf(init: RequestInit | undefined): string {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return 'other';
  try {
    const body = JSON.parse(init.body) as { method?: unknown };
    return typeof body.method === 'string' ? body.method : 'response';
  } catch {
    return 'other';
  }
}

/** What a 2025-11-25 client POSTs with, and its bearer token if any. */
function legacyHeaders(token: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
}

/** One raw 2025-11-25 request (no initialize: the serving is stateless), its JSON-RPC reply and HTTP status. */
export async function legacyRpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  token?: string,
): Promise<{ status: number; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: legacyHeaders(token),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  if (response.status !== 200) return { status: response.status };
  const data = response.headers.get('content-type')?.includes('text/event-stream') ? lastSseMessage(text) : JSON.parse(text);
  return { status: response.status, ...(data.result ? { result: data.result } : {}), ...(data.error ? { error: data.error } : {}) };
}

function lastSseMessage(text: string): Record<string, unknown> {
  return bodyMessages(text).filter((message) => 'id' in message && !('method' in message)).pop() ?? {};
}

/** POSTs a bare JSON-RPC response, as the 1.x client answers a server-to-client request. */
export async function postAnswer(url: string, message: Record<string, unknown>, token?: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: legacyHeaders(token),
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    signal: AbortSignal.timeout(20_000),
  });
  await response.arrayBuffer();
  return response.status;
}
