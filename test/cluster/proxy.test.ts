// A gateway of real node processes: two proxy nodes on PostgreSQL mount a real upstream (a demo
// node on the in-memory store) and serve its tools as upstream_<name>, owning the tasks the
// upstream makes of them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startDelayingHttpProxy, type DelayingHttpProxy } from '../support/delaying-http-proxy.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

const PROXY_ENV = { MCP_TASKS_POLL_INTERVAL_MS: '2000', MCP_TASKS_LEASE_MS: '1500' };

function text(result: Record<string, any> | undefined): string {
  return result?.['content']?.[0]?.['text'] ?? JSON.stringify(result);
}

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await within(rpc(url, 'tools/call', { name, arguments: args }), 30_000, `tools/call ${name}`);
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return created.result!['taskId'] as string;
}

let upstream: DemoProcess;
/** The proxies reach the upstream through this, which counts (and can slow down) what reaches it. */
let front: DelayingHttpProxy;

before(async () => {
  upstream = await spawnDemoNode('upstream', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_POLL_INTERVAL_MS: '200' });
  front = await startDelayingHttpProxy(upstream.url);
});

after(async () => {
  await front?.close();
  upstream?.child.kill('SIGKILL');
  await upstream?.exited;
});

/** The upstream's live runs, once every task it runs for the previous test has ended. */
async function upstreamIdle(): Promise<void> {
  await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 20_000, 'the upstream runs nothing');
}

describe('a proxy cluster of two nodes on PostgreSQL in front of one upstream', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  let a: DemoProcess;
  let b: DemoProcess;
  const spawn = async (name: string): Promise<DemoProcess> => {
    const node = await spawnDemoNode(name, { ...PROXY_ENV, DATABASE_URL: database.url, MCP_TASKS_UPSTREAM_URL: front.url, MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' });
    nodes.push(node);
    return node;
  };

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    a = await spawn('proxy-a');
    b = await spawn('proxy-b');
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin?.end();
    await database?.drop();
  });

  it('tools/list shows every upstream tool as upstream_<name> with the upstream schema, beside the node own tools', async () => {
    const own = (await rpc(upstream.url, 'tools/list', {})).result!['tools'] as Array<Record<string, any>>;
    const listed = (await rpc(a.url, 'tools/list', {})).result!['tools'] as Array<Record<string, any>>;
    const byName = new Map(listed.map((tool) => [tool['name'], tool]));
    for (const tool of own) {
      const proxied = byName.get(`upstream_${tool['name']}`);
      assert.ok(proxied, `upstream_${tool['name']} is listed`);
      assert.deepEqual(proxied['inputSchema'], tool['inputSchema']);
      assert.equal(proxied['description'], tool['description']);
    }
    assert.ok(byName.has('slow_compute'), 'the node own tools are still listed');
  });

  it('arguments that break the upstream schema are refused with -32602 and nothing is sent upstream', async () => {
    const calls = front.count('tools/call');
    const reply = await rpc(a.url, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds: 'soon' } });
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply.body));
    assert.match(reply.error!.message, /Invalid arguments for tool upstream_slow_compute/);
    assert.equal(front.count('tools/call'), calls);
  });

  it('an upstream tool that answers at once is relayed inline', async () => {
    const reply = await rpc(a.url, 'tools/call', { name: 'upstream_greet', arguments: { name: 'Ada' } });
    assert.equal(text(reply.result), 'Hello, Ada!', JSON.stringify(reply.body));
  });

  it('upstream_slow_compute becomes a proxy task, recorded with its upstream task, that completes with the upstream result, read through the other node', async () => {
    const taskId = await startTask(a.url, 'upstream_slow_compute', { seconds: 1, label: 'proxied' });
    const done = await waitFor(b.url, taskId, (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(text(done['result']), 'Computed proxied after 1s');
    const { rows } = await admin.query(
      `SELECT t.tool, t.args->>'upstream' AS upstream, s.result->>'taskId' AS upstream_task FROM mcp_tasks.tasks t JOIN mcp_tasks.task_steps s ON s.task_id = t.id WHERE t.id = $1 AND s.name = 'upstream-task'`,
      [taskId],
    );
    assert.equal(rows.length, 1, 'the upstream task is journaled on the proxy task');
    assert.deepEqual([rows[0].tool, rows[0].upstream], ['upstream_slow_compute', 'upstream']);
    assert.notEqual(rows[0].upstream_task, taskId, 'the proxy task has its own id');
    const mirrored = (await rpc(front.url, 'tasks/get', { taskId: rows[0].upstream_task })).result!;
    assert.deepEqual(mirrored['result'], done['result'], 'the result is the upstream result, verbatim');
  });

  it('upstream_confirm_delete relays input_required, and the answer given through the other node reaches the upstream', async () => {
    const taskId = await startTask(a.url, 'upstream_confirm_delete', { filename: 'notes.txt' });
    const asking = await waitFor(b.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.equal(asking['inputRequests']?.['confirm']?.['method'], 'elicitation/create', JSON.stringify(asking));
    assert.equal(asking['inputRequests']['confirm']['params']['message'], 'Delete notes.txt?');
    const updated = await rpc(b.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.ok(updated.result, JSON.stringify(updated.body));
    const done = await waitFor(a.url, taskId, (task) => task['status'] === 'completed' || task['status'] === 'failed', 20_000);
    assert.equal(text(done['result']), 'Deleted notes.txt.', JSON.stringify(done));
  });

  it('an upstream that asks for input on the request is relayed as input_required, and the retry through the other node is forwarded upstream', async () => {
    const first = await rpc(a.url, 'tools/call', { name: 'upstream_test_tool_with_task', arguments: {} });
    assert.equal(first.result?.['resultType'], 'input_required', JSON.stringify(first.body));
    const [key] = Object.keys(first.result!['inputRequests']);
    const retry = await rpc(b.url, 'tools/call', {
      name: 'upstream_test_tool_with_task',
      arguments: {},
      inputResponses: { [key!]: { action: 'accept', content: { name: 'Grace' } } },
      requestState: first.result!['requestState'],
    });
    assert.equal(retry.result?.['resultType'], 'task', JSON.stringify(retry.body));
    const done = await waitFor(a.url, retry.result!['taskId'], (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(text(done['result']), /Grace/);
  });

  it('a cancel of upstream_export on the proxy stops the run on the upstream (its running gauge drops) and the proxy task is cancelled', async () => {
    await upstreamIdle();
    const taskId = await startTask(a.url, 'upstream_export', { project: 'p', files: 300, delayMs: 100 });
    await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 1, 10_000, 'the export runs upstream');
    const cancelled = await rpc(b.url, 'tasks/cancel', { taskId });
    assert.ok(cancelled.result, JSON.stringify(cancelled.body));
    await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 10_000, 'the upstream export stops');
    const mine = (await rpc(a.url, 'tasks/get', { taskId })).result!;
    assert.equal(mine['status'], 'cancelled');
  });

  it('a cancel while the relaying node is stalled still stops the run on the upstream: the node that receives it cancels upstream from the journal', async () => {
    await upstreamIdle();
    const stalled = await spawn('proxy-stalled');
    try {
      const taskId = await startTask(stalled.url, 'upstream_export', { project: 'p', files: 300, delayMs: 100 });
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 1, 10_000, 'the export runs upstream');
      stalled.child.kill('SIGSTOP');
      const cancelled = await rpc(b.url, 'tasks/cancel', { taskId });
      assert.ok(cancelled.result, JSON.stringify(cancelled.body));
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 10_000, 'the upstream export stops while its relay is stalled');
      assert.equal((await rpc(a.url, 'tasks/get', { taskId })).result!['status'], 'cancelled');
    } finally {
      stalled.child.kill('SIGKILL');
      await stalled.exited;
    }
  });

  it('killing the proxy node that relays leaves the task finishing through the other node, without calling the upstream again', async () => {
    await upstreamIdle();
    const doomed = await spawn('proxy-doomed');
    const calls = front.count('tools/call');
    const taskId = await startTask(doomed.url, 'upstream_export', { project: 'p', files: 40, delayMs: 100 });
    await waitFor(a.url, taskId, (task) => /^\d+\/40$/.test(String(task['statusMessage'] ?? '')) && Number(String(task['statusMessage']).split('/')[0]) >= 3, 15_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const done = await waitFor(b.url, taskId, (task) => task['status'] !== 'working', 40_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(text(done['result']), 'Exported 40 of 40 files.');
    assert.equal(front.count('tools/call'), calls + 1, 'the upstream was called once');
    const { rows } = await admin.query(`SELECT node_id, attempt FROM mcp_tasks.tasks WHERE id = $1`, [taskId]);
    assert.ok(['proxy-a', 'proxy-b'].includes(nodeName(rows[0].node_id) ?? ''), `finished on ${rows[0].node_id}`);
    assert.equal(rows[0].attempt, 2);
  });
});

describe('a proxy node at its owner quota (MCP_TASKS_MAX_PER_PRINCIPAL=1)', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let proxy: DemoProcess;

  before(async () => {
    database = await createTestDatabase();
    proxy = await spawnDemoNode('proxy-quota', { ...PROXY_ENV, DATABASE_URL: database.url, MCP_TASKS_UPSTREAM_URL: front.url, MCP_TASKS_MAX_PER_PRINCIPAL: '1' });
  });

  after(async () => {
    front.delay('tools/call', 0);
    proxy?.child.kill('SIGKILL');
    await proxy?.exited;
    await database?.drop();
  });

  it('over quota, a required upstream tool is refused with -32600 and the upstream has no live task left; an optional one runs inline', async () => {
    await upstreamIdle();
    const filler = await startTask(proxy.url, 'slow_compute', { seconds: 60 });
    try {
      const created = await metric(upstream.base, 'mcp_tasks_created_total');
      const refused = await rpc(proxy.url, 'tools/call', { name: 'upstream_failing_job', arguments: {} });
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused.body));
      assert.match(refused.error!.message, /maxPerPrincipal/);
      assert.equal(await metric(upstream.base, 'mcp_tasks_created_total'), created, 'the upstream made no task');
      assert.equal(await metric(upstream.base, 'mcp_tasks_running'), 0);
      const inline = await rpc(proxy.url, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds: 0 } });
      assert.equal(text(inline.result), 'Computed result after 0s', JSON.stringify(inline.body));
    } finally {
      await rpc(proxy.url, 'tasks/cancel', { taskId: filler });
    }
  });

  it('two creators for the last slot while the upstream is slow: one gets a task, the other is refused with -32600, and the upstream made one task', async () => {
    await upstreamIdle();
    front.delay('tools/call', 1_500);
    const created = await metric(upstream.base, 'mcp_tasks_created_total');
    const replies = await within(
      Promise.all([0, 1].map(() => rpc(proxy.url, 'tools/call', { name: 'upstream_failing_job', arguments: {} }))),
      30_000,
      'both calls answer',
    );
    front.delay('tools/call', 0);
    const tasks = replies.filter((reply) => reply.result?.['resultType'] === 'task');
    const refusals = replies.filter((reply) => reply.error?.code === -32600);
    assert.deepEqual([tasks.length, refusals.length], [1, 1], JSON.stringify(replies.map((reply) => reply.body)));
    assert.equal(await metric(upstream.base, 'mcp_tasks_created_total'), created + 1, 'no upstream task beyond the one kept');
    const done = await waitFor(proxy.url, tasks[0]!.result!['taskId'], (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
  });

  it('an upstream task the proxy cannot keep (its reserved task ended while the upstream was slow) is cancelled upstream and the call is refused with -32600', async () => {
    await upstreamIdle();
    front.delay('tools/call', 2_000);
    const admin = testPool({ connectionString: database.url, max: 1 });
    try {
      const call = rpc(proxy.url, 'tools/call', { name: 'upstream_export', arguments: { project: 'p', files: 300, delayMs: 100 } });
      // The upstream has made its task (it runs) while its answer is held back: end the proxy's reservation now.
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 1, 10_000, 'the export runs upstream');
      const { rowCount } = await admin.query(`UPDATE mcp_tasks.tasks SET status = 'cancelled' WHERE tool = 'upstream_export' AND status = 'working'`);
      assert.equal(rowCount, 1);
      const reply = await within(call, 30_000, 'the call answers');
      assert.equal(reply.error?.code, -32600, JSON.stringify(reply.body));
      assert.match(reply.error!.message, /Upstream upstream made a task of upstream_export that this server could not keep; it was cancelled upstream/);
      assert.doesNotMatch(reply.error!.message, /127\.0\.0\.1|http:/, 'the upstream is named, never its URL');
      await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 10_000, 'the upstream task was cancelled');
    } finally {
      front.delay('tools/call', 0);
      await admin.end();
    }
  });
});
