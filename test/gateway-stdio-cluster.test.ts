// The gateway of real node processes: two nodes on PostgreSQL with a configuration file of three
// upstreams — a 2026-07-28 demo node, a 2025-11-25 server on the 1.x SDK (HTTP), and a stdio server
// on the 1.x SDK whose tools are all plain — serve the plain stdio tools as tasks that any node
// answers, follows, cancels, and (retry: idempotent) runs again when their node dies.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { eventually, ROOT, spawnDemoNode, waitForOutput, type DemoProcess } from './support/demo-process.js';
import { within } from './support/within.js';
import { rpc, waitFor } from './server-raw-client.js';

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
let a: { proc: Proc; url: string };
let b: { proc: Proc; url: string };

function events(): Array<Record<string, unknown>> {
  if (!existsSync(fixtureLog)) return [];
  return readFileSync(fixtureLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function gatewayNode(name: string, config: string): Promise<{ proc: Proc; url: string }> {
  const proc = start([...GATEWAY, '--config', config], { NODE_ID: name, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, MCP_TASKS_LEASE_MS: '1500', MCP_TASKS_POLL_INTERVAL_MS: '200', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_LOG_FORMAT: 'json' });
  processes.push(proc);
  const url = await waitForOutput(proc.output, /listening on (http:\/\/[^\s"]+)/, proc.exited, 45_000);
  return { proc, url };
}

before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-'));
  fixtureLog = path.join(directory, 'stdio.log');
  database = await createTestDatabase();
  upstream2025 = start(['--import', 'tsx', 'test/fixtures/v1-tasks-upstream.fixture.ts'], {});
  processes.push(upstream2025);
  [upstream2026, upstream2025Url] = await Promise.all([
    spawnDemoNode('upstream-2026', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' }),
    waitForOutput(upstream2025.output, /listening on (http:\/\/\S+)/, upstream2025.exited, 30_000),
  ]);
  const config = path.join(directory, 'gateway.yaml');
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
  await database?.drop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('two gateway nodes in front of a 2026 node, a 2025-11-25 server and a stdio server', { timeout: 120_000 }, () => {
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

  it('a plain stdio tool runs as a task on one node, its progress and its question seen on the other, answered there', async () => {
    const created = await within(rpc(a.url, 'tools/call', { name: 'local_ask', arguments: { question: 'Who?' } }), 20_000, 'tools/call local_ask');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const taskId = created.result!['taskId'] as string;
    const asking = await waitFor(b.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.equal(asking['inputRequests']?.['elicit-1']?.['params']?.['message'] ?? asking['inputRequests']?.['elicit-1']?.['message'], 'Who?', JSON.stringify(asking));
    const answered = await rpc(b.url, 'tasks/update', { taskId, inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'Ada' } } } });
    assert.equal(answered.error, undefined, JSON.stringify(answered.body));
    const done = await waitFor(b.url, taskId, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /Hello, Ada!/);

    const counting = await rpc(a.url, 'tools/call', { name: 'local_count', arguments: { steps: 12, delayMs: 150 } });
    const countId = counting.result!['taskId'] as string;
    await waitFor(b.url, countId, (task) => /^step \d+ of 12$/.test(String(task['statusMessage'] ?? '')), 20_000);
    const counted = await waitFor(b.url, countId, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(counted), /counted to 12/);
  });

  it('a cancel on the other node reaches the stdio server as notifications/cancelled', async () => {
    const created = await rpc(a.url, 'tools/call', { name: 'local_count', arguments: { steps: 1000, delayMs: 100 } });
    const taskId = created.result!['taskId'] as string;
    await waitFor(b.url, taskId, (task) => String(task['statusMessage'] ?? '').startsWith('step'), 20_000);
    const cancelled = await rpc(b.url, 'tasks/cancel', { taskId });
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled.body));
    await eventually(async () => events().some((event) => event['event'] === 'cancelled' && event['tool'] === 'count'), 15_000, 'the stdio server saw the cancel');
    assert.equal((await rpc(a.url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
  });

  it('a retry: idempotent tool finishes on the other node after its node is SIGKILLed', async () => {
    const created = await rpc(a.url, 'tools/call', { name: 'local_settle', arguments: { ms: 3000 } });
    const taskId = created.result!['taskId'] as string;
    await eventually(async () => events().filter((event) => event['event'] === 'call' && event['tool'] === 'settle').length >= 1, 15_000, 'the first run started');
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const done = await waitFor(b.url, taskId, (task) => task['status'] === 'completed', 40_000);
    assert.match(JSON.stringify(done), /settled after 3000 ms/);
    assert.ok(events().filter((event) => event['event'] === 'call' && event['tool'] === 'settle').length >= 2, 'it ran again');
  });
});
