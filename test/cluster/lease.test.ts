import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, TaskRuntime, type NewTask, type TaskContext, type TaskOwner } from '@mcp-tasks/core';
import {
  instanceApplicationName,
  LEASE_APPLICATION_NAME,
  leaseErrorText,
  LISTENER_APPLICATION_NAME,
  PostgresTaskNode,
  PostgresTaskStore,
  type PostgresTaskNodeOptions,
} from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool, testClient } from '../support/pg-clients.js';

const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'lease', clientId: 'client', resource: '' });

let database: TestDatabase;
let admin: pg.Pool;
let survivor: PostgresTaskStore;
let survivorNode: PostgresTaskNode;

interface OpenNode {
  readonly store: PostgresTaskStore;
  readonly node: PostgresTaskNode;
  close(): Promise<void>;
}

/**
 * A store and a cluster node beside it, as a demo node opens them. Its reaper runs only when a
 * test asks (intervalMs large), so rounds are deterministic.
 */
async function openNode(nodeId: string, options: PostgresTaskNodeOptions = {}): Promise<OpenNode> {
  const store = await PostgresTaskStore.connect({ connectionString: database.url, migrate: false, logger: quiet });
  const node = await PostgresTaskNode.start(store, {
    nodeId,
    logger: quiet,
    testSignals: true,
    sweeper: false,
    reaper: { intervalMs: 3_600_000, batchSize: 10, batchPauseMs: 1 },
    ...options,
  });
  return {
    store,
    node,
    close: async () => {
      await node.stop();
      await store.close();
    },
  };
}

before(async () => {
  database = await createTestDatabase();
  admin = testPool({ connectionString: database.url, max: 2 });
  await (await PostgresTaskStore.connect({ connectionString: database.url })).close();
  ({ store: survivor, node: survivorNode } = await openNode('survivor', { lease: { leaseMs: 60_000 } }));
});

after(async () => {
  await survivorNode.stop();
  await survivor.close();
  await admin.end();
  await database.drop();
});

/** Makes a node's lease run out now (what a crash looks like once leaseMs passed). */
async function expireLease(nodeId: string): Promise<void> {
  await admin.query(`UPDATE mcp_tasks.nodes SET lease_expires_at = now() - interval '1 second' WHERE node_id = $1`, [nodeId]);
}

test('the runtime records its node\'s id, the name and an instance id of this process, and refuses another one', async () => {
  const { store, node, close } = await openNode('n-ids', { reaper: false });
  try {
    const runtime = new TaskRuntime({ store, node });
    assert.match(runtime.nodeId, /^n-ids\/[0-9a-f]{16}$/);
    assert.equal(runtime.nodeId, node.nodeId);
    assert.throws(() => new TaskRuntime({ store, node, nodeId: 'other' }), /differs from the node's id/);
    const { rows } = await admin.query(`SELECT lease_ms::int AS lease_ms, name, instance_id FROM mcp_tasks.nodes WHERE node_id = $1`, [node.nodeId]);
    assert.deepEqual(rows[0], { lease_ms: 30_000, name: 'n-ids', instance_id: node.identity.instanceId });
  } finally {
    await close();
  }
});

test('a node renews its lease every third of it, and releases it on close', async () => {
  const { node, close } = await openNode('n-renew', { lease: { leaseMs: 300 }, reaper: false });
  const first = await node.lease!.testSignals.renewed.waitOnce(2_000);
  const second = await node.lease!.testSignals.renewed.waitOnce(2_000);
  assert.ok(second > first);
  await close();
  const { rows } = await admin.query(`SELECT lease_expires_at <= now() AS expired FROM mcp_tasks.nodes WHERE node_id = $1`, [node.nodeId]);
  assert.equal(rows[0].expired, true);
});

test('tasks of a node whose lease expired fail with the lease error; a completed task stays completed', async () => {
  const { store, node, close } = await openNode('n-dead', { lease: { leaseMs: 60_000 }, reaper: false });
  const runtime = new TaskRuntime({ store, node, pollIntervalMs: 60_000, onError: () => {} });
  try {
    const o = owner();
    const done = await runtime.start({ owner: o, tool: 'quick', args: {}, execute: () => ({ content: [] }) });
    let aborted!: Promise<void>;
    const started = new Promise<void>((resolve) => {
      void runtime.start({
        owner: o,
        tool: 'wait',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          aborted = new Promise((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }));
          resolve();
          await aborted;
          return { content: [] };
        },
      }).then((record) => (waiting = record));
    });
    let waiting!: Awaited<ReturnType<typeof runtime.start>>;
    await started;
    await waitUntil(async () => waiting !== undefined && (await store.get(done))?.status === 'completed');
    await waitUntil(async () => node.listener!.state === 'listening');

    await expireLease(node.nodeId);
    const result = await survivorNode.reaper!.runOnce();
    assert.equal(result.ran, true);
    assert.equal(result.failed, 1);
    const failed = await survivor.get(waiting);
    assert.equal(failed?.status, 'failed');
    assert.deepEqual(failed?.error, { code: -32603, message: leaseErrorText(node.nodeId, 'lease expired') });
    assert.equal(failed?.error?.message, `The server running this task stopped (node ${node.nodeId} lease expired)`);
    assert.equal((await survivor.get(done))?.status, 'completed');
    // The node is alive (a long pause, not a crash): the reaper's cancel aborts its run, and the
    // run's own outcome loses its compare-and-set.
    await aborted;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await survivor.get(waiting))?.status, 'failed');

    // Its next renewal finds the lease lost and starts a new one.
    await node.lease!.renewOnce();
    assert.equal(await node.lease!.testSignals.lost.waitOnce(1_000), 0);
    const { rows } = await admin.query(`SELECT lease_expires_at > now() AS held FROM mcp_tasks.nodes WHERE node_id = $1`, [node.nodeId]);
    assert.equal(rows[0].held, true);
  } finally {
    await runtime.close();
    await close();
  }
});

test('the reaper pages through many tasks by id, and forgets the node once nothing of it is live', async () => {
  const o = owner();
  await admin.query(`INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms) VALUES ('ghost', now(), now(), now() - interval '1 second', 1000)`);
  const tasks: NewTask[] = Array.from({ length: 25 }, () => ({ taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'ghost' }));
  for (const task of tasks) await survivor.create(task, { maxLive: Infinity });
  await survivor.finish(tasks[0]!, { status: 'completed', result: { content: [] } });
  survivorNode.reaper!.testSignals.batchFailed.clear();
  const result = await survivorNode.reaper!.runOnce();
  assert.equal(result.failed, 24);
  assert.ok(result.nodesDeleted >= 1);
  assert.equal((await admin.query(`SELECT 1 FROM mcp_tasks.nodes WHERE node_id = 'ghost'`)).rowCount, 0);
  // Pages of 10 by id (the completed task takes a slot in one of them), then an empty page.
  const batches = await Promise.all(Array.from({ length: result.batches }, () => survivorNode.reaper!.testSignals.batchFailed.waitOnce()));
  assert.equal(result.batches, 4);
  assert.equal(batches.reduce((a, b) => a + b, 0), 24);
  assert.ok(batches.every((n) => n <= 10));
  assert.equal((await survivor.get(tasks[0]!))?.status, 'completed');
  for (const task of tasks.slice(1)) assert.equal((await survivor.get(task))?.status, 'failed');
  assert.equal((await survivorNode.reaper!.runOnce()).failed, 0);
});

test('tasks of a node without a lease row, or with a live lease, are left alone', async () => {
  const o = owner();
  const orphan: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'never-leased' };
  const mine: NewTask = { ...orphan, taskId: newTaskId(), nodeId: survivorNode.nodeId };
  await survivor.create(orphan, { maxLive: Infinity });
  await survivor.create(mine, { maxLive: Infinity });
  await survivorNode.reaper!.runOnce();
  assert.equal((await survivor.get(orphan))?.status, 'working');
  assert.equal((await survivor.get(mine))?.status, 'working');
});

/** A lease row of another process named `name`, as it registered: live for a minute. */
async function namesake(name: string): Promise<{ nodeId: string; instanceId: string }> {
  const instanceId = randomUUID().replaceAll('-', '').slice(0, 16);
  const nodeId = `${name}/${instanceId}`;
  await admin.query(
    `INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms, name, instance_id)
     VALUES ($1, now(), now(), now() + interval '1 minute', 60000, $2, $3)`,
    [nodeId, name, instanceId],
  );
  return { nodeId, instanceId };
}

test('a node starting under a name fails at once what a namesake left live once none of its connections is open', async () => {
  const o = owner();
  const gone = await namesake('n-restart');
  const left: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: gone.nodeId };
  await survivor.create(left, { maxLive: Infinity });
  const { node, close } = await openNode('n-restart', { reaper: false });
  try {
    assert.equal(await node.lease!.testSignals.registered.waitOnce(5_000), 1);
    assert.notEqual(node.nodeId, gone.nodeId);
    const task = await survivor.get(left);
    assert.equal(task?.status, 'failed');
    assert.equal(task?.error?.message, `The server running this task stopped (node ${gone.nodeId} restarted)`);
    const { rows } = await admin.query(`SELECT lease_expires_at <= now() AS ended FROM mcp_tasks.nodes WHERE node_id = $1`, [gone.nodeId]);
    assert.equal(rows[0].ended, true, 'the gone namesake\'s lease is ended too');
  } finally {
    await close();
  }
});

test('a node starting under a name leaves a namesake that still has a connection open alone, and its lease too', async () => {
  const o = owner();
  for (const role of [LEASE_APPLICATION_NAME, LISTENER_APPLICATION_NAME]) {
    const alive = await namesake('n-overlap');
    const task: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: alive.nodeId };
    await survivor.create(task, { maxLive: Infinity });
    // What the namesake's process keeps open while it runs: one of its own connections.
    const connection = testClient({ connectionString: database.url, application_name: instanceApplicationName(role, alive.instanceId) });
    await connection.connect();
    try {
      const { node, close } = await openNode('n-overlap', { reaper: false });
      try {
        assert.equal(await node.lease!.testSignals.registered.waitOnce(5_000), 0, role);
        assert.equal((await survivor.get(task))?.status, 'working', role);
        const { rows } = await admin.query(`SELECT lease_expires_at > now() AS held FROM mcp_tasks.nodes WHERE node_id = $1`, [alive.nodeId]);
        assert.equal(rows[0].held, true, role);
      } finally {
        await close();
      }
    } finally {
      await connection.end();
    }
    await survivor.finish(task, { status: 'completed', result: { content: [] } });
  }
});

test('a namesake whose last connection closes after the node started is settled at a renewal', async () => {
  const o = owner();
  const late = await namesake('n-late');
  const task: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: late.nodeId };
  await survivor.create(task, { maxLive: Infinity });
  const connection = testClient({ connectionString: database.url, application_name: instanceApplicationName(LEASE_APPLICATION_NAME, late.instanceId) });
  await connection.connect();
  const { node, close } = await openNode('n-late', { reaper: false, lease: { leaseMs: 600 } });
  try {
    assert.equal(await node.lease!.testSignals.registered.waitOnce(5_000), 0);
    await node.lease!.testSignals.renewed.waitOnce(5_000);
    assert.equal((await survivor.get(task))?.status, 'working');
    // What a SIGKILL does a moment after the successor started: the socket closes.
    await connection.end();
    assert.equal(await node.lease!.testSignals.namesakesSettled.waitOnce(5_000), 1);
    const failed = await survivor.get(task);
    assert.equal(failed?.error?.message, `The server running this task stopped (node ${late.nodeId} restarted)`);
  } finally {
    await close();
  }
});

test('a node of an earlier release under the same name (a row without an instance id) is left to its lease', async () => {
  const o = owner();
  await admin.query(
    `INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms) VALUES ('n-upgrade', now(), now(), now() + interval '1 minute', 60000)`,
  );
  const task: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'n-upgrade' };
  await survivor.create(task, { maxLive: Infinity });
  const { node, close } = await openNode('n-upgrade', { reaper: false });
  try {
    assert.equal(await node.lease!.testSignals.registered.waitOnce(5_000), 0);
    assert.equal((await survivor.get(task))?.status, 'working');
  } finally {
    await close();
    await survivor.finish(task, { status: 'completed', result: { content: [] } });
  }
});

test('only one node reaps at a time', async () => {
  const other = await openNode('n-peer');
  try {
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => (i % 2 ? other.node : survivorNode).reaper!.runOnce()));
    // runOnce on one store never overlaps itself; across stores the advisory lock lets one through at a time.
    assert.ok(results.some((r) => r.ran));
  } finally {
    await other.close();
  }
});

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a reaper leader whose round hangs on a lock loses the role within its batch timeout, and another node leads', { timeout: 30_000 }, async () => {
  const o = owner();
  await admin.query(`INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms) VALUES ('ghost-stall', now(), now(), now() - interval '1 second', 1000)`);
  const task: NewTask = { taskId: newTaskId(), owner: o, tool: 'export', scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'ghost-stall' };
  await survivor.create(task, { maxLive: Infinity });
  const reaper = { intervalMs: 3_600_000, batchSize: 10, batchPauseMs: 1, batchTimeoutMs: 500 };
  const leader = await openNode('n-stalling', { reaper });
  const peer = await openNode('n-standby', { reaper });
  const blocker = await admin.connect();
  try {
    await blocker.query('BEGIN');
    // What a migration or an operator's stray transaction can do: every reaper statement waits.
    await blocker.query('LOCK TABLE mcp_tasks.nodes IN ACCESS EXCLUSIVE MODE');
    try {
      // The leader takes the role and its batch waits on the table lock.
      const stalled = leader.node.reaper!.runOnce().then(
        () => 'finished',
        (error: Error) => error.message,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const deadline = performance.now() + 2_000;
      let led = false;
      while (!led && performance.now() < deadline) {
        // Led: its round ran, or its own batch reached the same table lock and timed out.
        led = await peer.node.reaper!.runOnce().then(
          (result) => result.ran,
          (error: Error) => /due to (lock|statement) timeout/.test(error.message),
        );
        if (!led) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(led, 'another node led while the stalled leader held the role');
      assert.match(await stalled, /due to (lock|statement) timeout/);
    } finally {
      await blocker.query('ROLLBACK');
    }
    const result = await peer.node.reaper!.runOnce();
    assert.equal(result.ran, true);
    assert.equal(result.failed, 1);
    assert.equal((await survivor.get(task))?.status, 'failed');
  } finally {
    blocker.release();
    await leader.close();
    await peer.close();
  }
});

test('the reaper releases a resumable task of an expired node for any node to claim, and fails it once it has lost maxAttempts runs, saying so', async () => {
  const o = owner();
  const expiredNode = (ghost: string) =>
    admin.query(`INSERT INTO mcp_tasks.nodes (node_id, started_at, renewed_at, lease_expires_at, lease_ms) VALUES ($1, now(), now(), now() - interval '1 second', 1000)`, [ghost]);
  await expiredNode('ghost-r1');
  const task: NewTask = { taskId: newTaskId(), owner: o, tool: `resumable-${randomUUID()}`, scopes: [], ttlMs: null, pollIntervalMs: 1_000, nodeId: 'ghost-r1', resumable: true, maxAttempts: 2 };
  const plain: NewTask = { ...task, taskId: newTaskId(), resumable: false };
  await survivor.create(task, { maxLive: Infinity });
  await survivor.create(plain, { maxLive: Infinity });
  await survivorNode.reaper!.runOnce();
  const released = await survivor.get(task);
  assert.deepEqual([released?.status, released?.nodeId, released?.error], ['working', null, null]);
  assert.equal(released?.statusMessage, `Resuming: ${leaseErrorText('ghost-r1', 'lease expired')}`);
  assert.equal((await survivor.get(plain))?.status, 'failed', 'a task that is not resumable fails with its node');
  // The second run is lost too: that is maxAttempts lost runs.
  await expiredNode('ghost-r2');
  const claimed = await survivor.claim('ghost-r2', [task.tool]);
  assert.equal(claimed?.attempt, 2);
  await survivorNode.reaper!.runOnce();
  const failed = await survivor.get(task);
  assert.equal(failed?.status, 'failed');
  const message = `The task failed after 2 attempts; each run was lost. Last: ${leaseErrorText('ghost-r2', 'lease expired')}`;
  assert.deepEqual(failed?.error, { code: -32603, message });
});
