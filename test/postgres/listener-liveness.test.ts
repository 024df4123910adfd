// A LISTEN connection that goes silent without closing (a half-open socket, a frozen backend):
// nothing tells the client, so only the liveness check can notice. The test freezes the
// listener's backend process with SIGSTOP (this needs the PostgreSQL server on this machine and
// the right to signal its processes, as root has); the check times out, the listener reconnects on
// a fresh backend, and a cancel written through another node still reaches the run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskRuntime, type TaskContext } from '@mcp-tasks/core';
import { instanceApplicationName, LISTENER_APPLICATION_NAME, type PostgresTaskNode } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { startTwoNodes, type TwoNodes } from '../support/two-nodes.js';

const quiet = { warn: () => {}, error: () => {} };

describe('a listener whose backend freezes', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  let nodes: TwoNodes | undefined;
  let clusterA: PostgresTaskNode;
  let nodeA: TaskRuntime;
  let nodeB: TaskRuntime;
  let canSignal = false;
  const frozen: number[] = [];

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    const host = (await admin.query<{ addr: string | null }>('SELECT inet_server_addr()::text AS addr')).rows[0]?.addr;
    // Only a server on this machine has backends this process can signal.
    canSignal = host == null || /^(127\.|::1)/.test(host);
    const listener = { livenessIntervalMs: 200, livenessTimeoutMs: 300, reconnectBaseMs: 50, reconnectMaxMs: 200 };
    nodes = await startTwoNodes(database.url, { logger: quiet, a: { listener, logger: quiet }, b: { logger: quiet } });
    ({ a: { cluster: clusterA, runtime: nodeA }, b: { runtime: nodeB } } = nodes);
  });

  after(async () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
    await nodes?.close();
    await admin?.end();
    await database?.drop();
  });

  test('the liveness check times out, the listener reconnects, and a cancel still arrives', async (t) => {
    if (!canSignal) return t.skip('PostgreSQL is not on this machine');
    let aborted!: () => void;
    const abort = new Promise<void>((resolve) => (aborted = resolve));
    const record = await nodeA.start({
      owner: { subject: `user-${randomUUID()}`, server: 'liveness', clientId: '', resource: '' },
      tool: 'wait',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        aborted();
        return { content: [] };
      },
    });
    await clusterA.listener!.testSignals.listening.waitOnce(5_000);
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [instanceApplicationName(LISTENER_APPLICATION_NAME, clusterA.identity.instanceId)],
    );
    assert.equal(rows.length, 1, 'one LISTEN connection for the node');
    clusterA.listener!.testSignals.reconnected.clear();
    frozen.push(rows[0]!.pid);
    process.kill(rows[0]!.pid, 'SIGSTOP');

    await clusterA.listener!.testSignals.reconnected.waitOnce(5_000);
    const sent = performance.now();
    await nodeB.cancel({ taskId: record.taskId, owner: record.owner });
    await abort;
    assert.ok(performance.now() - sent < 2_000, 'delivered by the new LISTEN connection, not the 60 s poll');
  });
});
