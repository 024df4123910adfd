// A task another node claims runs as on the node that created it: a 2025-11-25 task whose tool
// has `prepare` runs it inside the task there (its input reaching the 1.x client), a 2026-07-28
// task gets the value `prepare` returned in the creating request, and no client can forge what
// the creating request stored for the run. Two real node processes: node 1 runs one task at a
// time and is kept busy, so what it is asked to start is queued and claimed by node 2.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectLegacyClient, type LegacyClient } from '../support/legacy-client.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

const BOUND_MS = 30_000;
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: '2000', MCP_TASKS_LEASE_MS: '3000', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' };

describe('a task claimed by another node process runs its prepare as the creating node would', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const clients: LegacyClient[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    nodes.push(await spawnDemoNode('prep-1', { ...ENV, DATABASE_URL: database.url, MCP_TASKS_MAX_RUNS: '1' }));
    nodes.push(await spawnDemoNode('prep-2', { ...ENV, DATABASE_URL: database.url }));
    // Node 1's only run slot, taken for the whole file.
    const busy = await rpc(nodes[0]!.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 600 } });
    assert.equal(busy.result?.['resultType'], 'task', JSON.stringify(busy));
    const busyId = busy.result!['taskId'] as string;
    await eventually(async () => (await ranOn(busyId)) === 'prep-1', BOUND_MS, 'node 1 runs the busy task');
  });

  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin?.end();
    await database?.drop();
  });

  const url = (i: 1 | 2) => nodes[i - 1]!.url;
  /** The configured name of the node whose run holds the task. */
  const ranOn = async (taskId: string): Promise<string | null> =>
    nodeName((await admin.query<{ node_id: string | null }>('SELECT node_id FROM mcp_tasks.tasks WHERE id = $1', [taskId])).rows[0]?.node_id) ?? null;
  const claimsOf = async (taskId: string): Promise<number> =>
    (await admin.query<{ attempt: number }>('SELECT attempt FROM mcp_tasks.tasks WHERE id = $1', [taskId])).rows[0]?.attempt ?? -1;

  it('a 2025-11-25 test_tool_with_task created on the busy node is claimed by the other, whose prepare asks the 1.x client for the name', async () => {
    const c = await connectLegacyClient({ route: (method) => (method === 'tools/call' ? url(1) : url(2)) });
    clients.push(c);
    const asked: Array<{ message?: unknown; _meta?: unknown }> = [];
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as never);
      return { action: 'accept', content: { name: 'Ada' } } as ElicitResult;
    });
    let taskId = '';
    let result = '';
    const run = async () => {
      for await (const message of c.experimental.tasks.callToolStream({ name: 'test_tool_with_task', arguments: {} }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'result') result = JSON.stringify(message.result);
        if (message.type === 'error') assert.fail(message.error.message);
      }
    };
    await within(run(), BOUND_MS, 'the claimed 2025-11-25 task ends');
    assert.match(result, /Hello, Ada!/);
    assert.equal(asked.length, 1, 'prepare asked once, inside the claimed task');
    assert.equal(asked[0]!.message, 'What is your name?');
    assert.deepEqual(asked[0]!._meta, { 'io.modelcontextprotocol/related-task': { taskId } });
    assert.equal(await ranOn(taskId), 'prep-2');
    assert.equal(await claimsOf(taskId), 1, 'queued on node 1 and claimed once, by node 2');
  });

  it("a 2026-07-28 test_tool_with_task created on the busy node gets, on the node that claims it, the name prepare returned in the request", async () => {
    const first = await rpc(url(1), 'tools/call', { name: 'test_tool_with_task', arguments: {} });
    assert.equal(first.result?.['resultType'], 'input_required', JSON.stringify(first));
    const created = await rpc(url(1), 'tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Grace' } } },
    });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    const taskId = created.result!['taskId'] as string;
    const done = await waitFor(url(2), taskId, (task) => task['status'] === 'completed' || task['status'] === 'failed', BOUND_MS);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(done['result']?.['content']?.[0]?.['text'], 'Hello, Grace!');
    assert.equal(await ranOn(taskId), 'prep-2');
  });

  it('a client that declares the stored-run member in its own capabilities cannot switch off their check on the node that claims its task', async () => {
    // No elicitation declared, and a forged "capabilities unknown" marker: the claimed run must
    // still refuse the elicitation against what the client really declared.
    const created = await rpc(url(1), 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } }, {
      capabilities: { 'io.github.mcp-tasks/carried': { carried: { prepare: 'in-task' }, declared: false } },
    });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    const taskId = created.result!['taskId'] as string;
    const done = await waitFor(url(2), taskId, (task) => task['status'] !== 'working', BOUND_MS);
    assert.equal(done['status'], 'failed', JSON.stringify(done));
    assert.equal(done['error']?.['code'], -32021);
    assert.equal(await ranOn(taskId), 'prep-2');
  });
});
