// `mcp-tasks call` not on a terminal, against real demo node processes: what lands on stdout,
// stderr and in the exit code.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { spawnDemoNode, type DemoProcess } from '../../../test/support/demo-process.js';
import { rpc } from '../../../test/support/server-raw-client.js';
import { mcpTasks } from './support/run-mcp-tasks.js';

describe('mcp-tasks call, not on a terminal', { timeout: 120_000 }, () => {
  let demo: DemoProcess;
  // Polls every 5 s: only a client that listens sees this node's tasks end quickly.
  let slowPolls: DemoProcess;
  before(async () => {
    [demo, slowPolls] = await Promise.all([
      // In-memory nodes: no DATABASE_URL (the test runner's would be shared by every file).
      spawnDemoNode('call-test', { DATABASE_URL: '', MCP_TASKS_POLL_INTERVAL_MS: '100' }),
      spawnDemoNode('call-test-slow-polls', { DATABASE_URL: '', MCP_TASKS_POLL_INTERVAL_MS: '5000' }),
    ]);
  });
  after(() => {
    demo?.child.kill('SIGKILL');
    slowPolls?.child.kill('SIGKILL');
  });

  it('prints an ordinary tool\'s text result on stdout and exits 0', async () => {
    const run = await mcpTasks(['call', demo.url, 'greet', '--arg', 'name=Ann']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Hello, Ann!\n');
  });

  it('follows a task to its end and prints its result on stdout, with one line per state on stderr', async () => {
    const run = await mcpTasks(['call', demo.url, 'slow_compute', '--args', '{"seconds": 0.3}']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Computed result after 0.3s\n');
    assert.match(run.stderr, /^Task (\S+) created\.\ntask \1: working\n(task \1: working.*\n)*task \1: completed\n$/);
  });

  it('shows each progress step of a task (n/total) on its own line', async () => {
    const run = await mcpTasks(['call', demo.url, 'export', '--arg', 'project=demo', '--arg', 'files=3', '--arg', 'delayMs=300']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Exported 3 of 3 files.\n');
    for (const step of ['1/3', '2/3']) assert.match(run.stderr, new RegExp(`working \\(${step}\\)`));
  });

  it('--json prints the whole result as JSON', async () => {
    const run = await mcpTasks(['call', demo.url, 'slow_compute', '--arg', 'seconds=0', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Computed result after 0s' }]);
  });

  it('a task that failed with a JSON-RPC error prints the error on stderr and exits 1', async () => {
    const run = await mcpTasks(['call', demo.url, 'protocol_error_job']);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /mcp-tasks: task \S+ failed: The job hit an internal protocol error \(JSON-RPC error -32603\)/);
  });

  it('a tool that reports an error (isError) prints it on stderr and exits 5', async () => {
    const run = await mcpTasks(['call', demo.url, 'failing_job']);
    assert.equal(run.code, 5);
    assert.match(run.stderr, /the tool reported an error: The job failed/);
  });

  it('a JSON-RPC error answering the call itself is printed with its code, exit 1', async () => {
    // Past what the CLI checks (the top level's types), the server's validator refuses it.
    const run = await mcpTasks(['call', demo.url, 'slow_compute', '--arg', 'seconds=99999']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /mcp-tasks: tools\/call: .*seconds.*\(JSON-RPC error -32602\)/);
  });

  it('types --arg values by the tool\'s input schema: numbers where it says number, strings where it says string', async () => {
    const greet = await mcpTasks(['call', demo.url, 'greet', '--arg', 'name=007']);
    assert.equal(greet.stdout, 'Hello, 007!\n', greet.stderr);
    const exported = await mcpTasks(['call', demo.url, 'export', '--arg', 'project=42', '--arg', 'files=2', '--arg', 'delayMs=0']);
    assert.equal(exported.stdout, 'Exported 2 of 2 files.\n', exported.stderr);
    const wrong = await mcpTasks(['call', demo.url, 'export', '--arg', 'project=p', '--arg', 'files=many']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--arg files must be a number \(got "many"\)/);
  });

  it('answers a task\'s elicitation from the lines on stdin, through tasks/update', async () => {
    const accepted = await mcpTasks(['call', demo.url, 'confirm_delete', '--arg', 'filename=r.pdf'], {}, { input: 'a\ny\n' });
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal(accepted.stdout, 'Deleted r.pdf.\n');
    assert.match(accepted.stderr, /The server asks: Delete r\.pdf\?/);
    const declined = await mcpTasks(['call', demo.url, 'confirm_delete', '--arg', 'filename=r.pdf'], {}, { input: 'd\n' });
    assert.equal(declined.stdout, 'Kept r.pdf.\n', declined.stderr);
  });

  it('answers input the tool asks for before a task exists (on the request itself) and sends the request again', async () => {
    const run = await mcpTasks(['call', demo.url, 'test_tool_with_task'], {}, { input: 'a\nAnn\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /What is your name\?/);
    assert.match(run.stdout, /Ann/);
  });

  it('--follow follows the task with subscriptions/listen, not at the server\'s poll interval', async () => {
    const run = await mcpTasks(['call', slowPolls.url, 'export', '--arg', 'project=p', '--arg', 'files=3', '--arg', 'delayMs=100', '--follow']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Exported 3 of 3 files.\n');
    // Polling would wait 5 s before its first tasks/get.
    assert.ok(run.ms < 4_000, `took ${Math.round(run.ms)} ms`);
    assert.match(run.stderr, /working \(1\/3\)/);
  });

  it('a tool name the server does not list is refused with the names it lists, before any call', async () => {
    const run = await mcpTasks(['call', demo.url, 'exprot', '--arg', 'project=demo']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`no tool "exprot" at ${demo.url.replace(/[./]/g, '\\$&')}; its tools are (?=[^\\n]*\\bexport\\b)(?=[^\\n]*\\bgreet\\b)`));
    assert.match(run.stderr, /mcp-tasks tools \S+ describes them/);
  });

  it('names a missing or mistyped argument and the type it takes, instead of the validator\'s words', async () => {
    const missing = await mcpTasks(['call', demo.url, 'export']);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /export needs the argument project \(a string[^)]*\): pass --arg project=…/);
    assert.doesNotMatch(missing.stderr, /Invalid input|received undefined/);
    const mistyped = await mcpTasks(['call', demo.url, 'export', '--args', '{"project": "p", "files": "many"}']);
    assert.equal(mistyped.code, 2, mistyped.stderr);
    assert.match(mistyped.stderr, /the argument files of export must be an integer[^(]*\(got "many"\)/);
  });

  it('--task ID follows a task created earlier to its result', async () => {
    const created = await rpc(demo.url, 'tools/call', { name: 'export', arguments: { project: 'again', files: 20, delayMs: 150 } });
    const taskId = created.result!['taskId'] as string;
    const run = await mcpTasks(['call', '--task', taskId, demo.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Exported 20 of 20 files.\n');
    assert.match(run.stderr, new RegExp(`^Following task ${taskId} \\((working|completed)\\)\\.`));
    const unknown = await mcpTasks(['call', '--task', 'no-such-task', demo.url]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /tasks\/get: .*\(JSON-RPC error -32602\)/);
    const both = await mcpTasks(['call', '--task', taskId, demo.url, 'export']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /follows a task and calls no tool/);
  });

  it('retries a task\'s polls with backoff while the server is out of reach, and follows it to its end', async () => {
    const front = await startSwitchableFront(Number(new URL(demo.url).port));
    try {
      const url = `http://127.0.0.1:${front.port}/mcp`;
      const running = mcpTasks(['call', url, 'export', '--arg', 'project=outage', '--arg', 'files=12', '--arg', 'delayMs=250'], {}, { timeoutMs: 40_000 });
      // Down for two seconds once the task runs: every poll meanwhile is refused.
      await eventuallyTrue(() => front.chunks > 8, 15_000, 'the call polls through the front');
      await front.down();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await front.up();
      const run = await running;
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'Exported 12 of 12 files.\n');
      assert.match(run.stderr, /(could not reach \S+|the connection to \S+ broke off)[^\n]*; retrying tasks\/get in 0\.25 s \(the task lives on in the server's database\)/);
      assert.match(run.stderr, /Reached the server again; following the task\./);
      // --retry-for 0: the first failure ends the call, saying how to follow the task again.
      const created = mcpTasks(['call', url, 'export', '--arg', 'project=outage', '--arg', 'files=40', '--arg', 'delayMs=250', '--retry-for', '0'], {}, { timeoutMs: 40_000 });
      const before = front.chunks;
      await eventuallyTrue(() => front.chunks > before + 8, 15_000, 'the second call polls');
      await front.down();
      const given = await created;
      await front.up();
      assert.equal(given.code, 1, given.stderr);
      assert.match(given.stderr, /(could not reach|broke off)[\s\S]*lives on in the server's database; mcp-tasks call --task \S+ \S+ follows it again/);
    } finally {
      await front.close();
    }
  });

  it('mcp-tasks tools URL lists each tool with its description, task support and arguments (--json: as listed)', async () => {
    const run = await mcpTasks(['tools', demo.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^export {2}\(task: optional\)\n {2}Exports a project file by file[^\n]*\n {2}--arg project=… {2}a string[^\n]*\(required\)\n {2}--arg files=… {2}an integer[^\n]*/m);
    assert.match(run.stdout, /^failing_job {2}\(task: required\)$/m);
    assert.match(run.stdout, /^greet {2}\(task: forbidden\)\n {2}Says hello/m);
    const json = JSON.parse((await mcpTasks(['tools', demo.url, '--json'])).stdout) as { name: string; inputSchema: unknown }[];
    assert.ok(json.some((tool) => tool.name === 'export' && typeof tool.inputSchema === 'object'));
    const unreachable = await mcpTasks(['tools', `http://127.0.0.1:${await closedPort()}/mcp`]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /could not reach .*ECONNREFUSED/);
  });

  it('a server out of reach or a URL that is not http is a clear error', async () => {
    const port = await closedPort();
    const unreachable = await mcpTasks(['call', `http://127.0.0.1:${port}/mcp`, 'greet']);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, new RegExp(`could not reach http://127\\.0\\.0\\.1:${port}/mcp: ECONNREFUSED`));
    const notHttp = await mcpTasks(['call', 'ftp://example.com/mcp', 'greet']);
    assert.equal(notHttp.code, 2);
    assert.match(notHttp.stderr, /must start with http:\/\/ or https:\/\//);
    const missing = await mcpTasks(['call', demo.url]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs a URL and a TOOL/);
  });
});

/** A TCP front to `targetPort` on a port of its own that can stop listening and start again. */
async function startSwitchableFront(targetPort: number): Promise<{ port: number; chunks: number; down(): Promise<void>; up(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { connections: 0, chunks: 0 };
  const server = createServer((client) => {
    state.connections += 1;
    client.on('data', () => (state.chunks += 1));
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const down = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    port,
    /** What clients sent so far, in chunks (about one a request). */
    get chunks() {
      return state.chunks;
    },
    down,
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => (server.listening ? down() : Promise.resolve()),
  };
}

async function eventuallyTrue(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A port nothing listens on (one that was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
