// The least-privilege roles docs/security.md gives work as written: a migrator that owns the
// schema applies the migrations; a node role with DML on the tables and EXECUTE on the functions
// runs the whole cluster path (create with the quota, answer, finish, lease, reaper, sweeper,
// LISTEN/NOTIFY) and can neither change the schema nor rewrite the migration history.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TaskRuntime, type TaskContext } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';
import { nodeName } from '../support/node-name.js';
import { testClient } from '../support/pg-clients.js';

const quiet = { warn: () => {}, error: () => {} };
const suffix = randomBytes(4).toString('hex');
const MIGRATOR = `mcp_tasks_migrator_${suffix}`;
const NODE = `mcp_tasks_node_${suffix}`;
// A server that asks for passwords (the embedded one uses scram-sha-256) gets one; a trusting one ignores it.
const PASSWORD = randomBytes(12).toString('hex');

/** The grants of docs/security.md, for a database and the two roles. */
function grants(database: string): string[] {
  return [
    `CREATE ROLE ${MIGRATOR} LOGIN PASSWORD '${PASSWORD}'`,
    `CREATE ROLE ${NODE} LOGIN PASSWORD '${PASSWORD}'`,
    `GRANT CONNECT, CREATE ON DATABASE ${database} TO ${MIGRATOR}`,
    `GRANT CONNECT ON DATABASE ${database} TO ${NODE}`,
  ];
}

/** What the migrator grants the node once the schema exists (and for what later migrations create). */
const NODE_GRANTS = [
  `GRANT USAGE ON SCHEMA mcp_tasks TO ${NODE}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA mcp_tasks TO ${NODE}`,
  `REVOKE INSERT, UPDATE, DELETE ON mcp_tasks.schema_migrations FROM ${NODE}`,
  `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA mcp_tasks TO ${NODE}`,
  `ALTER DEFAULT PRIVILEGES IN SCHEMA mcp_tasks GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${NODE}`,
  `ALTER DEFAULT PRIVILEGES IN SCHEMA mcp_tasks GRANT EXECUTE ON FUNCTIONS TO ${NODE}`,
];

function as(url: string, role: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = PASSWORD;
  return u.toString();
}

describe('least-privilege roles', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let admin: pg.Client;
  let supported = true;

  before(async () => {
    database = await createTestDatabase();
    // Roles are the server's, not the database's: made and dropped from the server's own database,
    // which outlives the test database's drop.
    admin = testClient({ connectionString: process.env['DATABASE_URL'] });
    await admin.connect();
    const name = new URL(database.url).pathname.slice(1);
    try {
      for (const statement of grants(admin.escapeIdentifier(name))) await admin.query(statement);
    } catch {
      // A server where this login may not create roles: nothing here to prove.
      supported = false;
    }
  });

  after(async () => {
    await database?.drop();
    for (const role of [NODE, MIGRATOR]) await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    await admin?.end();
  });

  it('a migrator that owns the schema migrates; a node with DML and EXECUTE runs a task through the cluster path and cannot change the schema', async (t) => {
    if (!supported) return t.skip('this login may not create roles');
    const migrator = await PostgresTaskStore.connect({ connectionString: as(database.url, MIGRATOR), migrate: true, logger: quiet });
    const grantor = testClient({ connectionString: as(database.url, MIGRATOR) });
    await grantor.connect();
    try {
      for (const statement of NODE_GRANTS) await grantor.query(statement);
    } finally {
      await grantor.end();
      await migrator.close();
    }

    const store = await PostgresTaskStore.connect({ connectionString: as(database.url, NODE), migrate: false, logger: quiet });
    const node = await PostgresTaskNode.start(store, { nodeId: `least-${suffix}`, logger: quiet, sweeper: { intervalMs: 60_000 }, testSignals: true });
    const runtime = new TaskRuntime({ store, node, pollIntervalMs: 60_000, onError: () => {} });
    try {
      const owner = { subject: `user-${randomUUID()}`, server: 'least', clientId: 'c', resource: '' };
      const record = await runtime.start({
        owner,
        tool: 'ask',
        args: {},
        execute: async (_args: object, ctx: TaskContext) => {
          // A journaled step: its seq is drawn from migration 0035's sequence, with no grant of the docs' on it.
          assert.equal(await ctx.step('count', () => 1), 1);
          const answer = await ctx.elicit('ok', { message: 'OK?', requestedSchema: { type: 'object', properties: {} } });
          await ctx.progress(1, 1);
          return { content: [{ type: 'text', text: answer.action }] };
        },
      });
      const ref = { taskId: record.taskId, owner };
      const deadline = Date.now() + 10_000;
      while ((await store.get(ref))?.status !== 'input_required') {
        if (Date.now() > deadline) throw new Error('the task never asked');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await runtime.update(ref, { ok: { action: 'accept', content: {} } });
      while ((await store.get(ref))?.status !== 'completed') {
        if (Date.now() > deadline) throw new Error('the task never completed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual((await store.get(ref))?.result?.['content'], [{ type: 'text', text: 'accept' }]);
      assert.deepEqual(await store.steps(ref), [{ name: 'count', starts: 1, done: true }]);
      // The maintenance services run under the node role too.
      await within(node.lease!.renewOnce(), 5_000, 'a lease renewal');
      assert.equal((await within(node.reaper!.runOnce(), 5_000, 'a reaper round')).ran, true);
      assert.equal((await within(node.sweeper!.runOnce(), 5_000, 'a sweep')).ran, true);
      // The task table's hourly partitions are made and dropped as the node role (migration 0032's
      // SECURITY DEFINER functions): an ended hour's, made as it would have been then, goes.
      assert.equal((await within(node.partitioner!.runOnce(), 5_000, 'a partition round')).ran, true);
      const maker = testClient({ connectionString: as(database.url, NODE) });
      await maker.connect();
      try {
        const { rows } = await maker.query<{ made: boolean }>(`SELECT mcp_tasks.make_task_partition(now() - interval '3 hours') AS made`);
        assert.equal(rows[0]?.made, true);
      } finally {
        await maker.end();
      }
      node.sweeper!.testSignals.partitionDropped.clear();
      assert.equal((await within(node.sweeper!.runOnce(), 5_000, 'a sweep')).ran, true);
      assert.match((await node.sweeper!.testSignals.partitionDropped.waitOnce(1_000)).name, /^tasks_p\d{10}$/);
      // The node's first round of cluster counts wrote the cluster_stats row as the node role.
      assert.equal(nodeName((await within(node.stats!.runOnce(), 5_000, 'a cluster stats round')).stats?.computedBy), `least-${suffix}`);
    } finally {
      await runtime.close();
      await node.stop();
      await store.close();
    }

    const asNode = testClient({ connectionString: as(database.url, NODE) });
    await asNode.connect();
    try {
      await assert.rejects(asNode.query('ALTER TABLE mcp_tasks.tasks ADD COLUMN evil int'), /must be owner|permission denied/);
      await assert.rejects(asNode.query('DROP TABLE mcp_tasks.nodes'), /must be owner|permission denied/);
      await assert.rejects(asNode.query(`DELETE FROM mcp_tasks.schema_migrations`), /permission denied/);
      await assert.rejects(asNode.query('CREATE TABLE mcp_tasks.evil (id int)'), /permission denied/);
    } finally {
      await asNode.end();
    }
  });
});
