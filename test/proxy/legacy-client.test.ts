// A 2025-11-25 client (the real 1.x SDK client) in front of a proxy cluster: two proxy node
// processes on PostgreSQL mount a real upstream (a demo node on the in-memory store, speaking
// 2026-07-28) and serve its tools as upstream_<name>; the client asks for tasks with params.task
// and reads them with that revision's tasks/get, tasks/result and tasks/cancel.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectLegacyClient, legacyRpc, type LegacyClient } from '../support/legacy-client.js';
import { rpc } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { testPool } from '../support/pg-clients.js';

const BOUND_MS = 30_000;
const PROXY_ENV = { MCP_TASKS_POLL_INTERVAL_MS: '2000', MCP_TASKS_LEASE_MS: '1500', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' };

describe('a 2025-11-25 client calling proxied tools on a two-node proxy cluster', { timeout: 180_000 }, () => {
  let upstream: DemoProcess;
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const clients: LegacyClient[] = [];
  let a: DemoProcess;
  let b: DemoProcess;
  const spawn = async (name: string): Promise<DemoProcess> => {
    const node = await spawnDemoNode(name, { ...PROXY_ENV, DATABASE_URL: database.url, MCP_TASKS_UPSTREAM_URL: upstream.url });
    nodes.push(node);
    return node;
  };

  before(async () => {
    upstream = await spawnDemoNode('legacy-upstream', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_POLL_INTERVAL_MS: '200' });
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    a = await spawn('legacy-proxy-a');
    b = await spawn('legacy-proxy-b');
  });

  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    for (const node of [...nodes, upstream]) node?.child.kill('SIGKILL');
    await Promise.all([...nodes, upstream].filter(Boolean).map((node) => node.exited));
    await admin?.end();
    await database?.drop();
  });

  /** A 1.x client whose requests go to `routes[method]`, else to proxy node a. */
  async function client(routes: Record<string, string> = {}): Promise<LegacyClient> {
    const connected = await within(connectLegacyClient({ route: (method) => routes[method] ?? a.url }), BOUND_MS, 'the 1.x client connects');
    clients.push(connected);
    return connected;
  }

  /** The upstream task journaled on the proxy's task `taskId`. */
  async function upstreamTaskOf(taskId: string): Promise<string> {
    const { rows } = await admin.query<{ upstream_task: string }>(
      `SELECT s.result->>'taskId' AS upstream_task FROM mcp_tasks.task_steps s WHERE s.task_id = $1 AND s.name = 'upstream-task'`,
      [taskId],
    );
    assert.equal(rows.length, 1, `the upstream task of ${taskId} is journaled`);
    return rows[0]!.upstream_task;
  }

  const upstreamIdle = () => eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 20_000, 'the upstream runs nothing');

  it('tools/call with params.task on a proxied tool answers the 2025-11-25 CreateTaskResult of the proxy task, and tasks/get and tasks/result on the other node give the upstream result verbatim', async () => {
    const created = await within(legacyRpc(a.url, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds: 0.5, label: 'old-client' }, task: { ttl: 120_000 } }), BOUND_MS, 'tools/call');
    const task = created.result?.['task'] as Record<string, unknown> | undefined;
    assert.ok(task, JSON.stringify(created));
    assert.equal(task['status'], 'working');
    assert.equal(task['ttl'], 120_000, 'params.task.ttl is honoured');
    assert.equal(created.result?.['resultType'], undefined, 'the 2025-11-25 shape, not the extension one');
    const taskId = task['taskId'] as string;
    const c = await client({ 'tasks/get': b.url, 'tasks/result': b.url });
    const result = await within(c.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), BOUND_MS, 'tasks/result');
    assert.deepEqual(result.content, [{ type: 'text', text: 'Computed old-client after 0.5s' }]);
    assert.deepEqual(result._meta?.['io.modelcontextprotocol/related-task'], { taskId });
    assert.equal((await c.experimental.tasks.getTask(taskId)).status, 'completed');
    const mirrored = (await rpc(upstream.url, 'tasks/get', { taskId: await upstreamTaskOf(taskId) })).result!;
    assert.deepEqual(result.content, mirrored['result']['content'], 'the result is the upstream result');
  });

  it("the 1.x client's callToolStream follows a proxied task to its result", async () => {
    const c = await client({ 'tasks/get': b.url });
    const seen: string[] = [];
    let text = '';
    const run = async () => {
      for await (const message of c.experimental.tasks.callToolStream({ name: 'upstream_slow_compute', arguments: { seconds: 0.3 } }, CallToolResultSchema, { task: {} })) {
        seen.push(message.type);
        if (message.type === 'result') text = JSON.stringify(message.result.content);
        if (message.type === 'error') assert.fail(message.error.message);
      }
    };
    await within(run(), BOUND_MS, 'callToolStream ends');
    assert.equal(seen[0], 'taskCreated');
    assert.equal(seen.at(-1), 'result');
    assert.match(text, /Computed result after 0\.3s/);
  });

  it('a plain call (no params.task) of an optional upstream tool runs inline; of a required one, it gets the -32601 that revision defines, and the upstream makes no task', async () => {
    const c = await client();
    const inline = await within(c.callTool({ name: 'upstream_slow_compute', arguments: { seconds: 0 } }), BOUND_MS, 'inline call');
    assert.deepEqual(inline.content, [{ type: 'text', text: 'Computed result after 0s' }]);
    const createdBefore = await metric(upstream.base, 'mcp_tasks_created_total');
    const refused = await legacyRpc(a.url, 'tools/call', { name: 'upstream_failing_job', arguments: {} });
    assert.equal(refused.error?.code, -32601, JSON.stringify(refused));
    assert.match(refused.error!.message, /upstream_failing_job requires task-augmented execution: call it with params\.task/);
    assert.equal(await metric(upstream.base, 'mcp_tasks_created_total'), createdBefore);
  });

  it("upstream_confirm_delete relayed to a 2025-11-25 client: its tasks/result stream (on the other node) carries the elicitation, and the client's answer (POSTed to a third place) reaches the upstream", async () => {
    const c = await client({ 'tools/call': a.url, 'tasks/result': b.url, response: a.url });
    const asked: Array<Record<string, any>> = [];
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, any>);
      return { action: 'accept', content: { confirm: true } } as ElicitResult;
    });
    let taskId = '';
    let result = '';
    const run = async () => {
      for await (const message of c.experimental.tasks.callToolStream({ name: 'upstream_confirm_delete', arguments: { filename: 'old.txt' } }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'result') result = JSON.stringify(message.result.content);
        if (message.type === 'error') assert.fail(message.error.message);
      }
    };
    await within(run(), BOUND_MS, 'upstream_confirm_delete ends');
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.equal(asked[0]!['message'], 'Delete old.txt?');
    assert.deepEqual(asked[0]!['_meta'], { 'io.modelcontextprotocol/related-task': { taskId } });
    assert.match(result, /Deleted old\.txt\./);
    const upstreamTask = (await rpc(upstream.url, 'tasks/get', { taskId: await upstreamTaskOf(taskId) })).result!;
    assert.equal(upstreamTask['status'], 'completed', 'the answer was forwarded upstream');
  });

  it('a 2025-11-25 tasks/cancel of a proxied task cancels the upstream task at once, from the node that receives it, even while the relaying node is stalled', async () => {
    await upstreamIdle();
    const stalled = await spawn('legacy-proxy-stalled');
    try {
      const created = await within(legacyRpc(stalled.url, 'tools/call', { name: 'upstream_export', arguments: { project: 'p', files: 300, delayMs: 100 }, task: {} }), BOUND_MS, 'tools/call');
      const taskId = (created.result?.['task'] as { taskId: string } | undefined)?.taskId;
      assert.ok(taskId, JSON.stringify(created));
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 1, 10_000, 'the export runs upstream');
      // The relay cannot notice the cancel: only the node that receives it can stop the upstream run.
      stalled.child.kill('SIGSTOP');
      const c = await client({ 'tasks/cancel': b.url, 'tasks/get': a.url });
      const cancelled = await within(c.experimental.tasks.cancelTask(taskId), BOUND_MS, 'tasks/cancel');
      assert.equal(cancelled.status, 'cancelled');
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 10_000, 'the upstream export stops while its relay is stalled');
      const upstreamTask = (await rpc(upstream.url, 'tasks/get', { taskId: await upstreamTaskOf(taskId) })).result!;
      assert.equal(upstreamTask['status'], 'cancelled');
      assert.equal((await c.experimental.tasks.getTask(taskId)).status, 'cancelled');
    } finally {
      stalled.child.kill('SIGKILL');
      await stalled.exited;
    }
  });
});
