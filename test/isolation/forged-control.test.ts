import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TaskRuntime, type TaskContext, type TaskOwner, type TaskRef, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskNode } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { listeningNode } from '../support/listening-node.js';
import { testClient } from '../support/pg-clients.js';

// Slow on purpose: whatever happens within a test happened through the notifications.
const POLL_INTERVAL_MS = 60_000;
const FLOOD = 200;
const quiet = { warn: () => {}, error: () => {} };
const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'forged', clientId: 'client', resource: '' });

let database: TestDatabase;
let store: PostgresTaskStore;
let node: PostgresTaskNode;
let runtime: TaskRuntime;
let attacker: pg.Client;
let controlReads = 0;

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url, logger: quiet });
  node = await listeningNode(store, { nodeId: 'victim', logger: quiet });
  // The store as the runtime sees it, counting the control reads that confirm hints.
  const counted = new Proxy(store, {
    get(target, property) {
      if (property === 'controlStates') {
        return (...args: Parameters<TaskStore['controlStates']>) => {
          controlReads += 1;
          return target.controlStates(...args);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  runtime = new TaskRuntime({ store: counted, node, pollIntervalMs: POLL_INTERVAL_MS, onError: () => {} });
  // Any connection to the database may NOTIFY on any channel: PostgreSQL has no channel privileges.
  attacker = testClient({ connectionString: database.url });
  await attacker.connect();
});

after(async () => {
  await runtime.close();
  await node.stop();
  await store.close();
  await attacker.end();
  await database.drop();
});

/** Sends `count` forged control messages for the task in one transaction (distinct, so none is folded). */
async function forge(op: 'cancel' | 'input', taskId: string, count: number): Promise<void> {
  const received = Array.from({ length: count }, () => node.listener!.testSignals.message.waitOnce(5_000));
  await attacker.query(
    `SELECT pg_notify('mcp_tasks_control', json_build_object('op', $1::text, 'taskId', $2::text, 'n', n)::text) FROM generate_series(1, $3::int) AS n`,
    [op, taskId, count],
  );
  await Promise.all(received);
}

async function startTask(execute: (ctx: TaskContext) => Promise<string>): Promise<{ ref: TaskRef; result: Promise<string> }> {
  let resolveResult!: (text: string) => void;
  const result = new Promise<string>((resolve) => (resolveResult = resolve));
  const record = await runtime.start({
    owner: owner(),
    tool: 'victim',
    args: {},
    execute: async (_args: object, ctx: TaskContext) => {
      const text = await execute(ctx);
      resolveResult(text);
      return { content: [{ type: 'text', text }] };
    },
  });
  const deadline = Date.now() + 5_000;
  while (node.listener!.state !== 'listening') {
    if (Date.now() > deadline) throw new Error('the listener did not start');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { ref: { taskId: record.taskId, owner: record.owner }, result };
}

test('a forged cancel notification does not abort a running task, and a flood of them costs a bounded number of reads', { timeout: 30_000 }, async () => {
  let signal!: AbortSignal;
  const { ref, result } = await startTask(async (ctx) => {
    signal = ctx.signal;
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    return 'aborted';
  });
  controlReads = 0;
  await forge('cancel', ref.taskId, FLOOD);
  // The confirming reads settle quickly; give them time to finish before judging.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(signal.aborted, false, 'a notification the row does not back aborted the run');
  assert.equal((await store.get(ref))?.status, 'working');
  assert.ok(controlReads >= 1 && controlReads <= 5, `${FLOOD} hints cost ${controlReads} reads`);
  // A real cancel still stops it.
  await runtime.cancel(ref);
  assert.equal(await Promise.race([result, new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000))]), 'aborted');
});

test('forged cancel and answer notifications on a pending confirmation change nothing: the elicit stays pending', { timeout: 30_000 }, async () => {
  const { ref, result } = await startTask(async (ctx) => {
    const answer = await ctx.elicit('confirm_delete', { mode: 'form', message: 'Delete everything?', requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } } });
    return answer.action === 'accept' && answer.content?.['confirm'] === true ? 'Deleted.' : 'Kept.';
  });
  const deadline = Date.now() + 5_000;
  while ((await store.get(ref))?.status !== 'input_required') {
    if (Date.now() > deadline) throw new Error('the task never asked');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await forge('cancel', ref.taskId, 10);
  await forge('input', ref.taskId, 10);
  const outcome = await Promise.race([result, new Promise((resolve) => setTimeout(() => resolve('pending'), 500))]);
  assert.equal(outcome, 'pending');
  const task = await store.get(ref);
  assert.equal(task?.status, 'input_required');
  assert.equal(task?.result, null);
  // The real answer still completes it.
  await runtime.update(ref, { confirm_delete: { action: 'accept', content: { confirm: false } } });
  assert.equal(await Promise.race([result, new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000))]), 'Kept.');
});
