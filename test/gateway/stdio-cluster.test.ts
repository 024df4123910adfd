// The gateway of real node processes: two nodes on PostgreSQL with a configuration file of three
// upstreams — a 2026-07-28 demo node, a 2025-11-25 server on the 1.x SDK (HTTP), and a stdio server
// on the 1.x SDK whose tools are all plain — serve the plain stdio tools as tasks that any node
// answers, follows, cancels, and (retry: idempotent) runs again when their node dies. Each clause
// is shown with the official v2 client (ext-tasks) and with the 1.x client: the call goes to node a,
// every other request (polls, answers, results, cancels) to node b.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, ROOT, spawnDemoNode, waitForOutput, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type pg from 'pg';
import { connectExtTasksSession } from '../support/ext-tasks-session.js';
import { connectLegacyClient } from '../support/legacy-client.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

interface Proc {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

function start(args: readonly string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const GATEWAY = ['packages/gateway/dist/bin/main.js'];
const processes: Proc[] = [];
let directory: string;
let fixtureLog: string;
let database: TestDatabase;
let upstream2026: DemoProcess;
let upstream2025: Proc;
let upstream2025Url: string;
let config: string;
let admin: pg.Pool;
let a: GatewayProc;
let b: GatewayProc;
let restarts = 0;

interface GatewayProc {
  readonly name: string;
  readonly proc: Proc;
  readonly url: string;
}

/** Node a, started again (under a new name) when a test killed it. */
async function nodeA(): Promise<GatewayProc> {
  if (a.proc.child.exitCode !== null || a.proc.child.signalCode !== null) a = await gatewayNode(`gateway-a${++restarts}`, config);
  return a;
}

/** The node that ran (or runs) a task. */
async function ranOn(taskId: string): Promise<string | null> {
  return (await admin.query<{ node_id: string | null }>('SELECT node_id FROM mcp_tasks.tasks WHERE id = $1', [taskId])).rows[0]?.node_id ?? null;
}

function events(): Array<Record<string, unknown>> {
  if (!existsSync(fixtureLog)) return [];
  return readFileSync(fixtureLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function gatewayNode(name: string, config: string): Promise<GatewayProc> {
  const proc = start([...GATEWAY, '--config', config], { NODE_ID: name, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, MCP_TASKS_LEASE_MS: '1500', MCP_TASKS_POLL_INTERVAL_MS: '200', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_LOG_FORMAT: 'json' });
  processes.push(proc);
  const url = await waitForOutput(proc.output, /listening on (http:\/\/[^\s"]+)/, proc.exited, 45_000);
  return { name, proc, url };
}

before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-'));
  fixtureLog = path.join(directory, 'stdio.log');
  database = await createTestDatabase();
  admin = testPool({ connectionString: database.url, max: 1 });
  upstream2025 = start(['--import', 'tsx', 'test/fixtures/v1-tasks-upstream.fixture.ts'], {});
  processes.push(upstream2025);
  [upstream2026, upstream2025Url] = await Promise.all([
    spawnDemoNode('upstream-2026', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' }, { compiled: true, startTimeoutMs: 60_000 }),
    waitForOutput(upstream2025.output, /listening on (http:\/\/\S+)/, upstream2025.exited, 30_000),
  ]);
  config = path.join(directory, 'gateway.yaml');
  writeFileSync(
    config,
    [
      'name: gateway-test',
      'upstreams:',
      `  - name: demo`,
      `    url: ${upstream2026.url}`,
      `  - name: v1`,
      `    url: ${upstream2025Url}`,
      `    revision: 2025-11-25`,
      `  - name: local`,
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ["--import", "tsx", ${JSON.stringify(path.join(ROOT, 'test/fixtures/stdio-plain-upstream.fixture.ts'))}]`,
      `    cwd: ${JSON.stringify(ROOT)}`,
      `    env: { STDIO_FIXTURE_LOG: "\${FIXTURE_LOG}" }`,
      `    retry: { settle: idempotent }`,
      '',
    ].join('\n'),
  );
  process.env['FIXTURE_LOG'] = fixtureLog;
  [a, b] = await Promise.all([gatewayNode('gateway-a', config), gatewayNode('gateway-b', config)]);
});

after(async () => {
  for (const proc of [...processes, ...(upstream2026 ? [upstream2026] : [])]) proc.child.kill('SIGKILL');
  await Promise.all([...processes, ...(upstream2026 ? [upstream2026] : [])].map((proc) => proc.exited));
  await admin?.end();
  await database?.drop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('two gateway nodes in front of a 2026 node, a 2025-11-25 server and a stdio server', { timeout: 300_000 }, () => {
  it('the official v2 client and the 1.x client list the tools of all three upstreams', async () => {
    const v2 = new V2Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
    await within(v2.connect(new V2Transport(new URL(a.url))), 20_000, 'v2 connect');
    const v1 = new V1Client({ name: 'v1', version: '1.0.0' });
    await within(v1.connect(new V1Transport(new URL(b.url))), 20_000, 'v1 connect');
    try {
      for (const client of [v2, v1] as Array<{ listTools(): Promise<unknown> }>) {
        const listed = (await within(client.listTools() as Promise<{ tools: Array<{ name: string }> }>, 20_000, 'tools/list')).tools;
        const names = new Set(listed.map((tool) => tool.name));
        for (const name of ['demo_export', 'demo_slow_compute', 'v1_slow', 'local_count', 'local_ask', 'local_settle']) assert.ok(names.has(name), `${name} is listed: ${[...names].join(', ')}`);
      }
      // A plain stdio tool still answers inline for a client that asks for no task.
      const echoed = await within(v1.callTool({ name: 'local_echo', arguments: { text: 'hi' } }), 20_000, 'inline echo');
      assert.deepEqual(echoed.content, [{ type: 'text', text: 'hi' }]);
    } finally {
      await v2.close();
      await v1.close();
    }
  });

  for (const kind of ['v2', 'v1'] as const) {
    const label = kind === 'v2' ? 'the official v2 client' : 'the 1.x client';

    it(`${label}: a plain stdio tool runs as a task on one node, its progress and its question seen on the other, answered there`, async () => {
      const node = await nodeA();
      const log: Array<[string, string]> = [];
      const asked: string[] = [];
      const client = await connect(kind, node, log, async (message) => {
        asked.push(message);
        return { action: 'accept', content: { name: 'Ada' } };
      });
      try {
        const ask = await client.call('local_ask', { question: 'Who?' });
        assert.match(await within(ask.result(), 30_000, 'local_ask ends'), /Hello, Ada!/);
        assert.deepEqual(asked, ['Who?']);
        assert.equal(nodeName(await ranOn(ask.taskId)), node.name, 'the task ran on the node that received the call');

        const count = await client.call('local_count', { steps: 12, delayMs: 250 });
        await eventually(async () => /^step \d+ of 12$/.test((await client.statusOf(count.taskId)).statusMessage ?? ''), 20_000, 'the progress is visible on the other node');
        assert.match(await within(count.result(), 30_000, 'local_count ends'), /counted to 12/);
        assert.equal(nodeName(await ranOn(count.taskId)), node.name);
      } finally {
        await client.close();
      }
      assert.ok(log.some(([method]) => method === 'tools/call'));
      // Everything but the call went to the other node: the polls, the answer, the result.
      assert.deepEqual([...new Set(log.filter(([method]) => method !== 'tools/call').map(([, url]) => url))], [b.url], JSON.stringify(log));
      assert.ok(log.some(([method]) => method === (kind === 'v2' ? 'tasks/update' : 'response')), JSON.stringify(log));
    });

    it(`${label}: a cancel on the other node reaches the stdio server as notifications/cancelled`, async () => {
      const node = await nodeA();
      const cancels = () => events().filter((event) => event['event'] === 'cancelled' && event['tool'] === 'count').length;
      const before = cancels();
      const log: Array<[string, string]> = [];
      const client = await connect(kind, node, log);
      try {
        const count = await client.call('local_count', { steps: 1000, delayMs: 100 });
        await eventually(async () => ((await client.statusOf(count.taskId)).statusMessage ?? '').startsWith('step'), 20_000, 'the count reports progress');
        await within(client.cancel(count.taskId), 20_000, 'tasks/cancel');
        await eventually(async () => cancels() > before, 15_000, 'the stdio server saw the cancel');
        assert.equal((await client.statusOf(count.taskId)).status, 'cancelled');
        assert.equal(nodeName(await ranOn(count.taskId)), node.name);
      } finally {
        await client.close();
      }
      // A client may send its cancel more than once (the v2 client's settling side does too): every one to the other node.
      const cancelledAt = log.filter(([method]) => method === 'tasks/cancel').map(([, url]) => url);
      assert.ok(cancelledAt.length >= 1 && cancelledAt.every((url) => url === b.url), JSON.stringify(log));
    });

    it(`${label}: a retry: idempotent tool finishes on the other node after its node is SIGKILLed`, async () => {
      const node = await nodeA();
      const calls = () => events().filter((event) => event['event'] === 'call' && event['tool'] === 'settle').length;
      const before = calls();
      const client = await connect(kind, node);
      try {
        const settle = await client.call('local_settle', { ms: 3000 });
        await eventually(async () => calls() > before, 15_000, 'the first run started');
        node.proc.child.kill('SIGKILL');
        await node.proc.exited;
        assert.match(await within(settle.result(), 45_000, 'local_settle ends on the other node'), /settled after 3000 ms/);
        assert.ok(calls() >= before + 2, 'it ran again');
        assert.equal(nodeName(await ranOn(settle.taskId)), 'gateway-b');
      } finally {
        await client.close();
      }
    });
  }
});

/** A client of either kind whose tools/call goes to `node` and every other request to node b. */
interface TaskClient {
  call(tool: string, args: Record<string, unknown>): Promise<{ readonly taskId: string; result(): Promise<string> }>;
  statusOf(taskId: string): Promise<{ status: string; statusMessage?: string | undefined }>;
  cancel(taskId: string): Promise<void>;
  close(): Promise<void>;
}

type Answer = (message: string) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> }>;

async function connect(kind: 'v2' | 'v1', node: { url: string }, log?: Array<[string, string]>, answer?: Answer): Promise<TaskClient> {
  const route = (method: string) => (method === 'tools/call' ? node.url : b.url);
  if (kind === 'v2') {
    const { session, close } = await connectExtTasksSession({ route, ...(log ? { log } : {}), ...(answer ? { elicitation: (params) => answer(params.message) } : {}) });
    return {
      async call(tool, args) {
        const execution = await within(session.callTool(tool, args as never, { task: { preference: 'prefer' } }), 20_000, `tools/call ${tool}`);
        assert.equal(execution.kind, 'task', `${tool} made a task`);
        const taskId = execution.handle!.taskId;
        const settled = execution.settle();
        settled.catch(() => undefined);
        return { taskId, result: async () => JSON.stringify(resultFromTaskOutcome((await settled).outcome)) };
      },
      statusOf: async (taskId) => await session.task(taskId as never).snapshot(),
      cancel: (taskId) => session.task(taskId as never).cancel(),
      close,
    };
  }
  const client = await connectLegacyClient({ route, ...(log ? { log } : {}) });
  if (answer) client.setRequestHandler(ElicitRequestSchema, async (request) => (await answer(request.params.message)) as ElicitResult);
  return {
    async call(tool, args) {
      const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: args }, CallToolResultSchema, { task: {} });
      const first = await within(stream.next(), 20_000, `tools/call ${tool}`);
      assert.equal(first.value?.type, 'taskCreated', JSON.stringify(first.value));
      const taskId = (first.value as { task: { taskId: string } }).task.taskId;
      const ended = (async () => {
        for await (const message of stream) {
          if (message.type === 'result') return JSON.stringify(message.result);
          if (message.type === 'error') throw new Error(message.error.message);
        }
        throw new Error(`the stream of ${tool} ended without a result`);
      })();
      ended.catch(() => undefined);
      return { taskId, result: () => ended };
    },
    statusOf: async (taskId) => await client.experimental.tasks.getTask(taskId),
    cancel: async (taskId) => void (await client.experimental.tasks.cancelTask(taskId)),
    close: () => client.close(),
  };
}
