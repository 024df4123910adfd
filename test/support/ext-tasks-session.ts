// The official v2 client (@modelcontextprotocol/client) with the tasks extension
// (@modelcontextprotocol/ext-tasks), whose requests go where `route` sends each one by its JSON-RPC
// method, so a test decides which node creates a task and which one follows, answers and cancels it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';

const REVISION = '2026-07-28';

/** Which URL serves a request of `method`. */
export type Route = (method: string) => string;

export interface ExtTasksSessionOptions {
  readonly route: Route;
  /** Answers the task's elicitations (default: decline). */
  readonly elicitation?: (params: { message: string }) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> }>;
  /** Where each request went: [method, url]. */
  readonly log?: Array<[string, string]>;
}

export interface ExtTasksSession {
  readonly session: TaskEnabledSession;
  close(): Promise<void>;
}

/** Connects a v2 client (form elicitation declared) and its task session; every request routed by method. */
export async function connectExtTasksSession(options: ExtTasksSessionOptions): Promise<ExtTasksSession> {
  const clientInfo = { name: 'ext-tasks-test', version: '1' };
  const capabilities = { elicitation: { form: {} } };
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: REVISION } }, capabilities } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(options.route('server/discover'))));
  let id = 1000;
  const rawDispatch = async (request: { method: string; params?: Record<string, any> }, dispatch?: { signal?: AbortSignal }) => {
    const params = request.params ?? {};
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': request.method,
    };
    if (request.method === 'tools/call') headers['mcp-name'] = params['name'];
    if (request.method.startsWith('tasks/')) headers['mcp-name'] = params['taskId'];
    const url = options.route(request.method);
    options.log?.push([request.method, url]);
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: id++, ...request }), signal: dispatch?.signal ?? AbortSignal.timeout(30_000) });
    let text = await response.text();
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const messages = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
      text = JSON.stringify(messages.find((message) => 'result' in message || 'error' in message));
    }
    const message = JSON.parse(text) as { result?: unknown; error?: unknown };
    return message.error ? { kind: 'error' as const, error: message.error } : { kind: 'result' as const, result: message.result };
  };
  const session = createTaskSessionFromClient(client as never, {
    endpointId: 'gateway-test',
    rawDispatch,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo, clientCapabilities: capabilities },
    onInputRequest: createApplicationInputHandler({
      elicitation: async (request: any) => (options.elicitation ? options.elicitation(request.params) : { action: 'decline' }),
      sampling: async () => {
        throw new Error('no sampling here');
      },
      roots: async () => ({ roots: [] }),
    }),
  } as never) as TaskEnabledSession;
  return {
    session,
    async close() {
      await session.close().catch(() => undefined);
      await client.close();
    },
  };
}
