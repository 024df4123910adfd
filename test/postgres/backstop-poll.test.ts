// The runtime's backstop poll of its runs slows down while the node's LISTEN connection has
// proved it delivers, and returns to pollIntervalMs as soon as that connection is lost (until it
// proves itself again): real PostgreSQL, a real listener, a real waiting task.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MAX_BACKSTOP_STRETCH, TaskRuntime } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';
import { testClient } from '../support/pg-clients.js';

const POLL_MS = 40;
let database: TestDatabase;
let store: PostgresTaskStore;
let node: PostgresTaskNode;
let runtime: TaskRuntime;

before(async () => {
  database = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: database.url });
  // No liveness check during the test: after a reconnect the connection stays unproven.
  node = await PostgresTaskNode.start(store, { nodeId: 'backstop-node', listener: { livenessIntervalMs: 600_000 } });
  runtime = new TaskRuntime({ store, node, pollIntervalMs: POLL_MS });
});

after(async () => {
  await runtime?.close();
  await node?.stop();
  await store?.close();
  await database?.drop();
});

async function until(what: string, condition: () => boolean, ms = 20_000): Promise<void> {
  await within(
    (async () => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
    })(),
    ms,
    what,
  );
}

test('the backstop stretches its gap while the listener is proven, and polls every interval again once the listener is lost', async () => {
  const owner = { subject: 'alice', server: 'backstop', clientId: '', resource: '' };
  await runtime.start({
    owner,
    tool: 'wait',
    args: {},
    execute: async (_args, ctx) => {
      await ctx.elicit('go', { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } });
      return { content: [] };
    },
  });
  await until('the listener proves itself (its self-test)', () => node.signalsProven());
  await until('the gap reaches its longest', () => runtime.backstop.gapMs === POLL_MS * MAX_BACKSTOP_STRETCH);
  const before = runtime.backstop.polls;
  await new Promise((resolve) => setTimeout(resolve, POLL_MS * 20));
  // Twenty intervals at the longest gap (32 intervals): at most one poll, where the first interval polled every time.
  assert.ok(runtime.backstop.polls - before <= 1, `polled ${runtime.backstop.polls - before} times in 20 intervals`);

  // The listener's backend goes away: it reconnects, but is not proven until its next liveness check.
  const admin = testClient({ connectionString: database.url });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE '%LISTEN%'`);
  } finally {
    await admin.end();
  }
  await until('the listener is no longer proven', () => !node.signalsProven());
  await until('the gap is back to the poll interval', () => runtime.backstop.gapMs === POLL_MS);
  const unproven = runtime.backstop.polls;
  await new Promise((resolve) => setTimeout(resolve, POLL_MS * 20));
  assert.ok(runtime.backstop.polls - unproven >= 5, `polled ${runtime.backstop.polls - unproven} times in 20 intervals while unproven`);
});
