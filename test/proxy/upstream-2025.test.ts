// An upstream on the 1.x SDK speaking 2025-11-25 with its tasks (a separate process) is proxied
// the same way as a 2026-07-28 one: listed, inline when it answers at once, and a task of its own
// becomes a task of the gateway (a real PostgreSQL store) that completes or is cancelled upstream.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks, proxyUpstream, type TaskListenHandler } from '@mcp-tasks/server';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, ROOT, spawnDemoNode, waitForOutput, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';

/** Spawns the 1.x SDK upstream and resolves with its URL once it listens. */
async function spawnV1Upstream(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'test/fixtures/v1-tasks-upstream.fixture.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    return { child, url: await waitForOutput(() => output, /listening on (http:\/\/\S+\/mcp)/, exited, 30_000) };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

let db: TestDatabase;
let tasks: McpTasks;
let handler: TaskListenHandler;
let http: Server;
let url: string;
let upstream: ChildProcess;
let upstreamUrl: string;

async function upstreamRunning(): Promise<number> {
  return (await upstreamState()).running;
}

async function upstreamState(): Promise<{ running: number; refused: number }> {
  const reply = await fetch(upstreamUrl.replace(/\/mcp$/, '/running'));
  return (await reply.json()) as { running: number; refused: number };
}

async function upstreamBusy(on: boolean): Promise<void> {
  await (await fetch(upstreamUrl.replace(/\/mcp$/, '/busy'), { method: 'POST', body: on ? 'on' : 'off' })).body?.cancel();
}

before(async () => {
  ({ child: upstream, url: upstreamUrl } = await spawnV1Upstream());
  db = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: db.url });
  const node = await PostgresTaskNode.start(store, { nodeId: 'gateway-2025' });
  tasks = new McpTasks({ store, node, pollIntervalMs: 100 });
  handler = tasks.handler({ name: 'gateway', version: '1.0.0', upstreams: [proxyUpstream({ name: 'v1', url: upstreamUrl, revision: '2025-11-25', timeoutMs: 5_000 })] });
  ({ http, url } = await serveOnLoopback(handler));
});

after(async () => {
  await closeLoopback(http);
  await handler?.close();
  await tasks?.close();
  await db?.drop();
  upstream?.kill('SIGKILL');
});

describe('a 2025-11-25 upstream on the 1.x SDK', { timeout: 60_000 }, () => {
  it('its tools are listed with their schemas', async () => {
    const listed = await within(rpc(url, 'tools/list', {}), 10_000, 'tools/list');
    const slow = (listed.result?.['tools'] as Record<string, any>[]).find((tool) => tool['name'] === 'v1_slow');
    assert.deepEqual(slow?.['inputSchema'], { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] }, JSON.stringify(listed.body));
  });

  it('a call without the extension runs inline upstream', async () => {
    const reply = await within(rpc(url, 'tools/call', { name: 'v1_slow', arguments: { ms: 0 } }, { tasks: false }), 10_000, 'inline call');
    assert.equal(reply.result?.['content']?.[0]?.['text'], 'slept 0 ms inline', JSON.stringify(reply.body));
  });

  it('a task the upstream makes becomes a gateway task that completes with the upstream result', async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'v1_slow', arguments: { ms: 300 } }), 10_000, 'task call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'], (task) => task['status'] !== 'working', 15_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(done['result']['content'][0]['text'], 'slept 300 ms as a task');
  });

  it('a cancel of the gateway task cancels the upstream one (its run stops)', async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'v1_forever', arguments: {} }), 10_000, 'task call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    await eventually(async () => (await upstreamRunning()) === 1, 10_000, 'the upstream runs it');
    const cancelled = await rpc(url, 'tasks/cancel', { taskId: created.result!['taskId'] });
    assert.ok(cancelled.result, JSON.stringify(cancelled.body));
    await eventually(async () => (await upstreamRunning()) === 0, 10_000, 'the upstream run stops');
  });

  it('a task that goes input_required upstream without asking anything yet keeps the gateway task live, and its cancel stops the upstream run', async () => {
    const created = await within(rpc(url, 'tools/call', { name: 'v1_asks', arguments: {} }), 10_000, 'task call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const taskId = created.result!['taskId'] as string;
    await eventually(async () => (await upstreamRunning()) === 1, 10_000, 'the upstream runs it');
    // Several polls of the relay (every 100 ms here): the task is still waiting, not failed.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal((await rpc(url, 'tasks/get', { taskId })).result?.['status'], 'working');
    assert.ok((await rpc(url, 'tasks/cancel', { taskId })).result);
    await eventually(async () => (await upstreamRunning()) === 0, 10_000, 'the upstream run stops');
  });

  it('a demo node on PostgreSQL with MCP_TASKS_UPSTREAM_REVISION=2025-11-25 serves its tools as upstream_<name>, tasks included', async () => {
    const demo = await spawnDemoNode('proxy-2025', { DATABASE_URL: db.url, MCP_TASKS_UPSTREAM_URL: upstreamUrl, MCP_TASKS_UPSTREAM_REVISION: '2025-11-25' });
    try {
      const created = await within(rpc(demo.url, 'tools/call', { name: 'upstream_slow', arguments: { ms: 200 } }), 10_000, 'task call');
      assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
      const done = await waitFor(demo.url, created.result!['taskId'], (task) => task['status'] !== 'working', 15_000);
      assert.equal(done['result']?.['content']?.[0]?.['text'], 'slept 200 ms as a task', JSON.stringify(done));
    } finally {
      demo.child.kill('SIGKILL');
      await demo.exited;
    }
  });

  it("an upstream answering 429 with Retry-After is left alone as long as it asks: the relay keeps following, and the cancel lands once it takes requests again", async (t) => {
    const created = await within(rpc(url, 'tools/call', { name: 'v1_forever', arguments: {} }), 10_000, 'task call');
    const taskId = created.result!['taskId'] as string;
    await eventually(async () => (await upstreamRunning()) === 1, 10_000, 'the upstream runs it');
    const from = (await upstreamState()).refused;
    await upstreamBusy(true);
    try {
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const refused = (await upstreamState()).refused - from;
      t.diagnostic(`the gateway sent ${refused} requests in 3 s to an upstream asking to wait 2 s`);
      // Unhonoured, the relay polls every 100 ms, is refused about 30 times and gives up (the task fails).
      assert.ok(refused <= 6, `the gateway sent ${refused} requests in 3 s`);
      assert.equal((await rpc(url, 'tasks/get', { taskId })).result?.['status'], 'working');
      assert.ok((await rpc(url, 'tasks/cancel', { taskId })).result);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(await upstreamRunning(), 1, 'the cancel has not landed while the upstream refuses');
    } finally {
      await upstreamBusy(false);
    }
    await eventually(async () => (await upstreamRunning()) === 0, 10_000, 'the owed cancel lands');
  });

  it('a required upstream tool called without the extension is refused with -32021, as a local one is', async () => {
    const reply = await within(rpc(url, 'tools/call', { name: 'v1_forever', arguments: {} }, { tasks: false }), 10_000, 'inline call');
    assert.equal(reply.error?.code, -32021, JSON.stringify(reply.body));
  });
});

describe('a stateful 2025-11-25 upstream behind two demo nodes on PostgreSQL', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let stateful: { child: ChildProcess; url: string };
  const nodes: DemoProcess[] = [];

  before(async () => {
    stateful = await spawnV1Upstream({ V1_STATEFUL: '1' });
    database = await createTestDatabase();
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    stateful?.child.kill('SIGKILL');
    await database?.drop();
  });

  it('killing the relaying node leaves the task finishing through the other node, which reaches the upstream task through the session it was made in', async () => {
    const env = { DATABASE_URL: database.url, MCP_TASKS_UPSTREAM_URL: stateful.url, MCP_TASKS_UPSTREAM_REVISION: '2025-11-25', MCP_TASKS_LEASE_MS: '1500', MCP_TASKS_POLL_INTERVAL_MS: '2000' };
    const [doomed, survivor] = await Promise.all([spawnDemoNode('v1-doomed', env), spawnDemoNode('v1-survivor', env)]);
    nodes.push(doomed, survivor);
    const created = await within(rpc(doomed.url, 'tools/call', { name: 'upstream_slow', arguments: { ms: 6_000 } }), 10_000, 'task call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const taskId = created.result!['taskId'] as string;
    await waitFor(survivor.url, taskId, (task) => task['statusMessage'] === 'sleeping', 10_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const done = await waitFor(survivor.url, taskId, (task) => task['status'] !== 'working', 40_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(done['result']?.['content']?.[0]?.['text'], 'slept 6000 ms as a task');
  });
});
