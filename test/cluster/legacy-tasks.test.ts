// 2025-11-25 clients on a cluster: the real 1.x SDK client against three demo node processes on
// one database, behind the round-robin front, with each request routed explicitly where a test
// needs it (the run on one node, tasks/result on a second, the answer POSTed to a third).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startRoundRobinFront, type RoundRobinFront } from '../../packages/demo/src/cluster/round-robin-front.js';
import { connectLegacyClient, legacyRpc, postAnswer, type LegacyClient } from '../support/legacy-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const TOKENS = {
  alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  bob: { sub: 'bob', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  'alice-noscope': { sub: 'alice', clientId: 'app-a', scopes: [], resource: RESOURCE },
};
const BOUND_MS = 30_000;

describe('2025-11-25 tasks across three node processes', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  let front: RoundRobinFront;
  const clients: LegacyClient[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-legacy-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    // A slow backstop poll: what arrives before it came through LISTEN/NOTIFY.
    const env = { DATABASE_URL: database.url, MCP_TASKS_TOKENS: tokens, MCP_TASKS_POLL_INTERVAL_MS: '5000', MCP_TASKS_LEASE_MS: '3000' };
    nodes.push(await spawnDemoNode('node-1', env));
    nodes.push(...(await Promise.all(['node-2', 'node-3'].map((name) => spawnDemoNode(name, env)))));
    front = await startRoundRobinFront({
      port: 0,
      host: '127.0.0.1',
      targets: nodes.map((node) => {
        const url = new URL(node.url);
        return { name: node.name, host: url.hostname, port: Number(url.port), available: () => node.child.exitCode === null };
      }),
    });
  });

  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await front?.close();
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin?.end();
    await database?.drop();
  });

  const frontUrl = () => front.url;
  const node = (i: 1 | 2 | 3) => nodes[i - 1]!.url;

  /** A 1.x client of alice: `routes` pins methods to nodes, everything else goes through the front. */
  async function client(routes: Record<string, string>, log?: Array<[string, string]>, token = 'alice'): Promise<LegacyClient> {
    const connected = await connectLegacyClient({ route: (method) => routes[method] ?? frontUrl(), token, ...(log ? { log } : {}) });
    clients.push(connected);
    return connected;
  }

  const ranOn = async (taskId: string): Promise<string | null> =>
    (await admin.query<{ node_id: string | null }>('SELECT node_id FROM mcp_tasks.tasks WHERE id = $1', [taskId])).rows[0]?.node_id ?? null;

  it('initialize advertises 2025-11-25 tasks with tasks/list (the requests are authorized), and tools/list shows taskSupport', async () => {
    const c = await client({});
    assert.deepEqual(c.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await c.listTools()).tools;
    assert.equal(tools.find((tool) => tool.name === 'export')?.execution?.taskSupport, 'optional');
    assert.equal(tools.find((tool) => tool.name === 'test_tool_with_task')?.execution?.taskSupport, 'required');
  });

  it('a task call with params.task is polled to its result, and tasks/list shows the caller\'s tasks newest first', async () => {
    const c = await client({});
    const seen: string[] = [];
    let taskId = '';
    for await (const message of c.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 0.3 } }, CallToolResultSchema, { task: { ttl: 120_000 } })) {
      seen.push(message.type);
      if (message.type === 'taskCreated') {
        taskId = message.task.taskId;
        assert.equal(message.task.status, 'working');
        assert.equal(message.task.ttl, 120_000);
      }
      if (message.type === 'result') assert.match(JSON.stringify(message.result.content), /Computed result after 0\.3s/);
      if (message.type === 'error') assert.fail(message.error.message);
    }
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('taskStatus'));
    assert.equal(seen.at(-1), 'result');
    const later = (await legacyRpc(node(2), 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 }, task: {} }, 'alice')).result?.['task'] as { taskId: string };
    const list = await c.experimental.tasks.listTasks();
    const ids = list.tasks.map((task) => task.taskId);
    assert.ok(ids.indexOf(later.taskId) >= 0 && ids.indexOf(later.taskId) < ids.indexOf(taskId), JSON.stringify(ids));
    assert.equal((await legacyRpc(node(1), 'tasks/list', { cursor: 'not-a-cursor' }, 'alice')).error?.code, -32602);
    const bobs = await legacyRpc(node(3), 'tasks/list', {}, 'bob');
    assert.ok(!JSON.stringify(bobs.result).includes(taskId), 'bob does not see alice\'s tasks');
    assert.equal((await c.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).content[0]?.type, 'text');
  });

  it('a cancel sent to node 3 stops the export running on node 1', async () => {
    const c = await client({ 'tools/call': node(1), 'tasks/cancel': node(3), 'tasks/get': node(2) });
    const stream = c.experimental.tasks.callToolStream({ name: 'export', arguments: { project: 'p', files: 1_000, delayMs: 50 } }, CallToolResultSchema, { task: {} });
    const first = await within(stream.next(), BOUND_MS, 'the task is created');
    assert.equal(first.value?.type, 'taskCreated');
    const taskId = (first.value as { task: { taskId: string } }).task.taskId;
    await stream.return(undefined);
    assert.equal(nodeName(await ranOn(taskId)), 'node-1');
    await eventually(async () => typeof (await c.experimental.tasks.getTask(taskId)).statusMessage === 'string', BOUND_MS, 'the export reports progress');
    assert.equal(await metric(nodes[0]!.base, 'mcp_tasks_running'), 1);
    // The same owner without the task's scope is challenged, as on 2026-07-28.
    assert.equal((await legacyRpc(node(3), 'tasks/cancel', { taskId }, 'alice-noscope')).status, 403);
    const cancelled = await c.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, 'cancelled');
    await eventually(async () => (await metric(nodes[0]!.base, 'mcp_tasks_running')) === 0, BOUND_MS, 'node 1 stops the run');
    const again = await legacyRpc(node(2), 'tasks/cancel', { taskId }, 'alice');
    assert.deepEqual(again.error, { code: -32602, message: "Cannot cancel task: already in terminal status 'cancelled'" });
  });

  for (const scenario of [
    { tool: 'confirm_delete', args: { filename: 'a.txt' }, answer: { action: 'accept', content: { confirm: true } }, expect: /Deleted a\.txt\./ },
    { tool: 'test_tool_with_task', args: {}, answer: { action: 'accept', content: { name: 'Ada' } }, expect: /Hello, Ada!/ },
  ] as const) {
    it(`${scenario.tool}: the run on node 1, tasks/result on node 2, the client's own answer POSTed to node 3`, async () => {
      const log: Array<[string, string]> = [];
      const c = await client({ 'tools/call': node(1), 'tasks/result': node(2), response: node(3) }, log);
      const asked: unknown[] = [];
      c.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return scenario.answer as unknown as ElicitResult;
      });
      let taskId = '';
      let result: string | undefined;
      const run = async () => {
        for await (const message of c.experimental.tasks.callToolStream({ name: scenario.tool, arguments: scenario.args }, CallToolResultSchema, { task: {} })) {
          if (message.type === 'taskCreated') taskId = message.task.taskId;
          if (message.type === 'result') result = JSON.stringify(message.result);
          if (message.type === 'error') assert.fail(message.error.message);
        }
      };
      await within(run(), BOUND_MS, `${scenario.tool} ends`);
      assert.match(result ?? '', scenario.expect);
      assert.match(result ?? '', new RegExp(`"io.modelcontextprotocol/related-task":\\{"taskId":"${taskId}"\\}`));
      assert.equal(asked.length, 1);
      assert.deepEqual((asked[0] as { _meta?: unknown })._meta, { 'io.modelcontextprotocol/related-task': { taskId } });
      assert.equal(nodeName(await ranOn(taskId)), 'node-1');
      assert.deepEqual(
        log.filter(([method]) => method === 'tools/call' || method === 'tasks/result' || method === 'response'),
        [
          ['tools/call', node(1)],
          ['tasks/result', node(2)],
          ['response', node(3)],
        ],
      );
    });
  }

  it("another owner's answer to a task's input request records nothing", async () => {
    const created = await legacyRpc(node(1), 'tools/call', { name: 'confirm_delete', arguments: { filename: 'b.txt' }, task: {} }, 'alice');
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await eventually(async () => (await legacyRpc(node(2), 'tasks/get', { taskId }, 'alice')).result?.['status'] === 'input_required', BOUND_MS, 'input_required');
    const id = `mcp-tasks.input.${taskId}.${Buffer.from('confirm').toString('base64url')}`;
    assert.equal(await postAnswer(node(3), { id, result: { action: 'accept', content: { confirm: true } } }, 'bob'), 202);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await legacyRpc(node(2), 'tasks/get', { taskId }, 'alice')).result?.['status'], 'input_required');
    assert.deepEqual((await legacyRpc(node(2), 'tasks/get', { taskId }, 'bob')).error, { code: -32602, message: 'Failed to retrieve task: Task not found' });
    // The owner's own answer, to any node, is recorded and wakes the run.
    assert.equal(await postAnswer(node(3), { id, result: { action: 'accept', content: { confirm: true } } }, 'alice'), 202);
    await eventually(async () => (await legacyRpc(node(2), 'tasks/get', { taskId }, 'alice')).result?.['status'] === 'completed', BOUND_MS, 'completed');
    const final = await legacyRpc(node(1), 'tasks/result', { taskId }, 'alice');
    assert.match(JSON.stringify(final.result), /Deleted b\.txt\./);
  });
});
