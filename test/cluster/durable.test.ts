// Durable work across real node processes: a resumable task survives the loss of its node (killed,
// drained, stopped past its lease), and run capacity spreads queued tasks over the nodes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

// A short lease, so a lost node is noticed within seconds; a slow backstop poll, so claims come by NOTIFY.
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: '2000', MCP_TASKS_LEASE_MS: '1500', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' };
const EXPORT = { project: 'p', files: 40, delayMs: 100 };

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

function resultText(task: Record<string, any>): string {
  return task['result']?.['content']?.[0]?.['text'] ?? JSON.stringify(task);
}

/** How many files the task reports done ("n/40"), 0 before any. */
function filesDone(task: Record<string, any>): number {
  const match = /^(\d+)\/\d+$/.exec(String(task['statusMessage'] ?? ''));
  return match ? Number(match[1]) : 0;
}

describe('durable work on three node processes', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const spawn = async (name: string, env: Record<string, string> = {}): Promise<DemoProcess> => {
    const node = await spawnDemoNode(name, { ...ENV, DATABASE_URL: database.url, ...env });
    nodes.push(node);
    return node;
  };
  const row = async (taskId: string) =>
    // The node's name: a task records the process (`<NODE_ID>/<instance id>`).
    (await admin.query(`SELECT split_part(node_id, '/', 1) AS node_id, attempt, handovers FROM mcp_tasks.tasks WHERE id = $1`, [taskId])).rows[0] as { node_id: string | null; attempt: number; handovers: number };

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    await spawn('node-b');
    await spawn('node-c');
  });

  after(async () => {
    for (const node of nodes) {
      node.child.kill('SIGCONT');
      node.child.kill('SIGKILL');
    }
    await Promise.all(nodes.map((node) => node.exited));
    await admin.end();
    await database.drop();
  });

  it('an export on a node that is SIGKILLed mid-way completes on another node, saying it resumed once ("1 time") and redid at most one file', async () => {
    const a = await spawn('node-kill');
    const survivor = nodes[0]!;
    const taskId = await startTask(a.url, 'export', EXPORT);
    await waitFor(survivor.url, taskId, (task) => filesDone(task) >= 5, 10_000);
    a.child.kill('SIGKILL');
    await a.exited;
    const done = await waitFor(survivor.url, taskId, (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(resultText(done), /^Exported 40 of 40 files\. \(resumed 1 time, [01] files redone\)$/, resultText(done));
    const settled = await row(taskId);
    assert.ok(settled.node_id === 'node-b' || settled.node_id === 'node-c', `finished on ${settled.node_id}`);
    assert.equal(settled.attempt, 2);
    // Each file's work started at most twice: only the file in flight at the kill was redone.
    const { rows } = await admin.query(`SELECT max(starts)::int AS most, count(*)::int AS steps FROM mcp_tasks.task_steps WHERE task_id = $1 AND name LIKE 'file-%'`, [taskId]);
    assert.deepEqual(rows[0], { most: rows[0].most <= 2 ? rows[0].most : -1, steps: 40 });
  });

  it('an export on a node that is SIGTERMed with a short drain deadline is handed over and completes on another node, the hand-over not counted as a lost attempt', async () => {
    const a = await spawn('node-drain', { MCP_TASKS_DRAIN_MS: '300' });
    const survivor = nodes[0]!;
    const taskId = await startTask(a.url, 'export', EXPORT);
    await waitFor(survivor.url, taskId, (task) => filesDone(task) >= 5, 10_000);
    a.child.kill('SIGTERM');
    assert.equal(await a.exited, 0);
    const done = await waitFor(survivor.url, taskId, (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(resultText(done), /^Exported 40 of 40 files\. \(resumed 1 time, [01] files redone\)$/, resultText(done));
    const settled = await row(taskId);
    assert.deepEqual([settled.attempt, settled.handovers], [2, 1]);
  });

  it('a node SIGSTOPped past its lease and then SIGCONTed cannot write: exactly one run finishes the task, on another node', async () => {
    const a = await spawn('node-stall');
    const survivor = nodes[0]!;
    const taskId = await startTask(a.url, 'export', EXPORT);
    await waitFor(survivor.url, taskId, (task) => filesDone(task) >= 5, 10_000);
    a.child.kill('SIGSTOP');
    // Another node takes the task over once the stalled node's lease ran out.
    await eventually(async () => {
      const current = await row(taskId);
      return current.node_id !== null && current.node_id !== 'node-stall';
    }, 10_000, 'another node claims the task').catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(nodes.map((node) => [node.name, node.output()]))}`);
    });
    a.child.kill('SIGCONT');
    const done = await waitFor(survivor.url, taskId, (task) => task['status'] !== 'working', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.match(resultText(done), /^Exported 40 of 40 files\. \(resumed 1 time, [01] files redone\)$/, JSON.stringify(done));
    const settled = await row(taskId);
    assert.notEqual(settled.node_id, 'node-stall');
    assert.equal(settled.attempt, 2);
    // The stalled run woke up fenced off: it stopped (its gauge drops) without touching the task.
    await eventually(async () => (await metric(a.base, 'mcp_tasks_running')) === 0, 5_000, 'the stale run on the stalled node stops');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = (await rpc(survivor.url, 'tasks/get', { taskId })).result!;
    assert.deepEqual([after['status'], resultText(after)], ['completed', resultText(done)]);
    a.child.kill('SIGKILL');
  });
});

describe('run capacity on three node processes (MCP_TASKS_MAX_RUNS=2)', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    const env = { ...ENV, DATABASE_URL: database.url, MCP_TASKS_MAX_RUNS: '2' };
    nodes.push(await spawnDemoNode('cap-1', env));
    nodes.push(...(await Promise.all(['cap-2', 'cap-3'].map((name) => spawnDemoNode(name, env)))));
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin.end();
    await database.drop();
  });

  it('12 tasks created through one node run at most 2 at a time on each node, every node runs some, and all complete', async () => {
    const [first] = nodes as [DemoProcess];
    const taskIds = await Promise.all(Array.from({ length: 12 }, (_, i) => startTask(first.url, 'export', { project: `p${i}`, files: 8, delayMs: 100 })));
    let most = 0;
    let mostHeld = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const running = await Promise.all(nodes.map((node) => metric(node.base, 'mcp_tasks_running')));
        most = Math.max(most, ...running);
        const { rows } = await admin.query(
          `SELECT coalesce(max(n), 0)::int AS most FROM (SELECT count(*) AS n FROM mcp_tasks.tasks WHERE node_id IS NOT NULL AND status IN ('working', 'input_required') GROUP BY node_id) AS held`,
        );
        mostHeld = Math.max(mostHeld, rows[0].most);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      for (const taskId of taskIds) {
        const done = await waitFor(first.url, taskId, (task) => task['status'] !== 'working', 30_000);
        assert.equal(done['status'], 'completed', JSON.stringify(done));
        assert.equal(resultText(done), 'Exported 8 of 8 files.');
      }
    } finally {
      sampling = false;
      await sampler;
    }
    assert.ok(most <= 2, `a node ran ${most} at once`);
    assert.ok(mostHeld <= 2, `a node held ${mostHeld} at once`);
    assert.equal(most, 2, 'the nodes ran at capacity');
    const { rows } = await admin.query(`SELECT split_part(node_id, '/', 1) AS node_id, count(*)::int AS n FROM mcp_tasks.tasks WHERE id = ANY($1) GROUP BY 1 ORDER BY 1`, [taskIds]);
    assert.deepEqual(rows.map((r) => r.node_id), ['cap-1', 'cap-2', 'cap-3'], JSON.stringify(rows));
  });
});

describe('waiting is not running on two node processes (MCP_TASKS_MAX_RUNS=1)', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  const nodes: DemoProcess[] = [];
  const row = async (taskId: string) =>
    (await admin.query(`SELECT status, node_id, attempt, handovers, status_message FROM mcp_tasks.tasks WHERE id = $1`, [taskId])).rows[0] as {
      status: string;
      node_id: string | null;
      attempt: number;
      handovers: number;
      status_message: string | null;
    };

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    const env = { ...ENV, DATABASE_URL: database.url, MCP_TASKS_MAX_RUNS: '1' };
    nodes.push(...(await Promise.all(['wait-1', 'wait-2'].map((name) => spawnDemoNode(name, env)))));
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin.end();
    await database.drop();
  });

  it('an export waiting for its confirmation gives its only run slot back, another task runs there meanwhile, and the answer resumes it on the node with room, which is no resumption in its result', async () => {
    const [one, two] = nodes as [DemoProcess, DemoProcess];
    const asking = await startTask(one.url, 'export', { project: 'p', files: 3, delayMs: 50, confirm: true });
    await eventually(async () => {
      const current = await row(asking);
      return current.status === 'input_required' && current.node_id === null;
    }, 10_000, 'the waiting export gives its task back');
    await eventually(async () => (await metric(one.base, 'mcp_tasks_running')) === 0, 10_000, 'the waiting export holds no run slot');
    // The node's one slot is free: a task started there runs at once instead of queueing.
    const busy = await startTask(one.url, 'export', { project: 'q', files: 40, delayMs: 100 });
    const running = await row(busy);
    assert.deepEqual([nodeName(running.node_id), running.attempt], ['wait-1', 1], JSON.stringify(running));
    // Answered through the other node while the first is full: the other node claims and finishes it.
    const answered = await rpc(two.url, 'tasks/update', { taskId: asking, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(answered.error, undefined, JSON.stringify(answered));
    const done = await waitFor(two.url, asking, (task) => task['status'] === 'completed' || task['status'] === 'failed' || task['status'] === 'cancelled', 20_000);
    // A park and a claim again for the answer is no resumption: nothing was lost.
    assert.equal(resultText(done), 'Exported 3 of 3 files.');
    const settled = await row(asking);
    // Parked once (a hand-over, no lost attempt), then claimed by the node that had room.
    assert.deepEqual([nodeName(settled.node_id), settled.attempt, settled.handovers], ['wait-2', 2, 1]);
    assert.equal(nodeName((await row(busy)).node_id), 'wait-1');
    const finished = await waitFor(one.url, busy, (task) => task['status'] !== 'working', 30_000);
    assert.equal(resultText(finished), 'Exported 40 of 40 files.');
  });

  it('a declined confirmation resumes the export only to export nothing', async () => {
    const [one, two] = nodes as [DemoProcess, DemoProcess];
    const asking = await startTask(two.url, 'export', { project: 'p', files: 3, delayMs: 50, confirm: true });
    await waitFor(one.url, asking, (task) => task['status'] === 'input_required', 10_000);
    const answered = await rpc(one.url, 'tasks/update', { taskId: asking, inputResponses: { confirm: { action: 'decline' } } });
    assert.equal(answered.error, undefined, JSON.stringify(answered));
    const done = await waitFor(one.url, asking, (task) => task['status'] !== 'working' && task['status'] !== 'input_required', 20_000);
    assert.equal(resultText(done), 'Exported 0 of 3 files.');
  });
});
