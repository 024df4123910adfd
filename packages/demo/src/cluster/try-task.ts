// `npm run try -- [URL]`: the smallest client of a running cluster, which shows the cluster at
// work (for a client for people, see `mcp-tasks call`). It starts an `export` task through URL (default http://127.0.0.1:3000/mcp), follows it
// with tasks/get until it ends, and prints which node answered each step.
const url = process.argv[2] ?? 'http://127.0.0.1:3000/mcp';
const TIMEOUT_MS = 60_000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
let nextId = 1;

interface Reply {
  readonly node: string;
  readonly message: { result?: Record<string, any>; error?: { code: number; message: string } };
}

async function call(method: string, params: Record<string, unknown>): Promise<Reply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  const name = params['name'] ?? params['taskId'];
  if (typeof name === 'string') headers['mcp-name'] = name;
  if (process.env['MCP_TASKS_TOKEN']) headers['authorization'] = `Bearer ${process.env['MCP_TASKS_TOKEN']}`;
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-try', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta } }), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)))
    : [JSON.parse(text)];
  const message = messages.find((m) => 'result' in m || 'error' in m);
  if (!message) throw new Error(`${method}: no reply (HTTP ${res.status})`);
  if (message.error) throw new Error(`${method}: ${message.error.message} (${message.error.code})`);
  return { node: res.headers.get('x-mcp-tasks-node') ?? 'the server', message };
}

async function main(): Promise<void> {
  const created = await call('tools/call', { name: 'export', arguments: { project: 'try-it', files: 5, delayMs: 200 } });
  const taskId = created.message.result?.['taskId'];
  if (typeof taskId !== 'string') throw new Error(`tools/call export did not create a task: ${JSON.stringify(created.message.result)}`);
  console.log(`task ${taskId} created by ${created.node}`);
  const deadline = Date.now() + TIMEOUT_MS;
  let last = '';
  for (;;) {
    const got = await call('tasks/get', { taskId });
    const task = got.message.result!;
    const progress = task['statusMessage'] ?? '';
    const line = `${task['status']}${progress ? ` (${progress})` : ''}`;
    if (line !== last) console.log(`  ${line}, answered by ${got.node}`);
    last = line;
    if (TERMINAL.has(String(task['status']))) {
      const text = JSON.stringify(task).match(/Exported \d+ of \d+ files\./)?.[0];
      if (text) console.log(text);
      process.exitCode = task['status'] === 'completed' ? 0 : 1;
      return;
    }
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not end within ${TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

main().catch((error: unknown) => {
  console.error(`mcp-tasks try: ${error instanceof Error ? error.message : String(error)} (is the cluster running at ${url}?)`);
  process.exitCode = 1;
});
