// The official MCP client (@modelcontextprotocol/client) with the official tasks extension client
// (@modelcontextprotocol/ext-tasks): calls a task tool, answers the elicitation the task asks,
// and prints the task's result.
//
//   npm start -- http://127.0.0.1:3000/mcp publish '{"project":"site"}'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome, type JsonRpcResponse, type RawClientDispatch } from '@modelcontextprotocol/ext-tasks/client';

const PROTOCOL_VERSION = '2026-07-28';
const url = process.argv[2] ?? process.env['MCP_URL'] ?? 'http://127.0.0.1:3000/mcp';
const tool = process.argv[3] ?? 'publish';
const args = JSON.parse(process.argv[4] ?? '{"project":"site"}') as Record<string, string>;

const clientInfo = { name: 'mcp-tasks-example-client', version: '0.1.0' };
// What this client can answer: form elicitations. ext-tasks adds the tasks extension itself.
const clientCapabilities = { elicitation: { form: {} } };

/**
 * 1. The SDK client talks 2026-07-28 only when pinned to it (no `initialize`; each request
 *    carries its envelope in `_meta`).
 */
const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: PROTOCOL_VERSION } }, capabilities: clientCapabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

/**
 * 2. ext-tasks sends task traffic (a `tools/call` that may answer with a task, `tasks/get`,
 *    `tasks/update`, `tasks/cancel`) through this dispatch, because the SDK client's codecs refuse
 *    a CreateTaskResult. It is plain HTTP: the 2026-07-28 headers the server checks
 *    (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), and a JSON or SSE answer.
 */
let nextId = 1;
const rawDispatch: RawClientDispatch = async (request, options) => {
  const message = request as { method: string; params?: Record<string, unknown> };
  const params = message.params ?? {};
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': message.method,
  };
  if (message.method === 'tools/call' && typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  if (message.method.startsWith('tasks/') && typeof params['taskId'] === 'string') headers['mcp-name'] = params['taskId'];
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...message }),
    signal: options?.signal ?? null,
  });
  let text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    text = JSON.stringify(messages.find((m) => 'result' in m || 'error' in m));
  }
  const reply = JSON.parse(text) as { result?: Extract<JsonRpcResponse, { kind: 'result' }>['result']; error?: Extract<JsonRpcResponse, { kind: 'error' }>['error'] };
  return reply.error ? { kind: 'error', error: reply.error } : { kind: 'result', result: reply.result ?? null };
};

/**
 * 3. The session: `v2RequestFraming` is the envelope each request carries (the tasks extension is
 *    declared per request, not per session); `onInputRequest` answers what a task asks for.
 */
const session = createTaskSessionFromClient(client, {
  endpointId: url,
  rawDispatch,
  v2RequestFraming: { protocolVersion: PROTOCOL_VERSION, clientInfo, clientCapabilities },
  onInputRequest: createApplicationInputHandler({
    elicitation: async (request) => {
      console.error(`the server asks: ${String(request.params['message'])} (answering yes)`);
      return { action: 'accept', content: { publish: true } };
    },
    sampling: async () => {
      throw new Error('this client does not sample');
    },
    roots: async () => ({ roots: [] }),
  }),
});

try {
  // 4. Ask for a task; the session polls tasks/get and answers input through tasks/update.
  const execution = await session.callTool(tool, args, { task: { preference: 'prefer' } });
  console.error(execution.kind === 'task' ? `task ${execution.handle.taskId}` : 'answered inline');
  const { outcome } = await execution.settle();
  console.log(JSON.stringify(resultFromTaskOutcome(outcome)));
} finally {
  await session.close();
  await client.close();
}
