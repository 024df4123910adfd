// The cluster-wide gauges on each demo node's /metrics: two node processes on one PostgreSQL
// export the same cluster counts (with scope="cluster"), equal to what the database holds, so
// `max by (status)` over nodes is the cluster's count (and a sum would double it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { authRpc } from '../support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { nodeName } from '../support/node-name.js';
import { testPool } from '../support/pg-clients.js';

const TOKENS = { alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'] }, bob: { sub: 'bob', clientId: 'app-b', scopes: ['export'] } };

/** Every sample of `name` on a node's /metrics, by its labels (without the OpenTelemetry scope label). */
async function samples(base: string, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (match) found.set(match[1]!.replace(/,?otel_scope_name="[^"]*"/, ''), Number(match[2]));
  }
  return found;
}

describe('the cluster-wide gauges', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let nodes: DemoProcess[];
  let admin: pg.Pool;
  let dir: string;

  before(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'cluster-gauges-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    const env = { DATABASE_URL: database.url, MCP_TASKS_TOKENS: tokens, MCP_TASKS_CLUSTER_STATS_MS: '300', MCP_TASKS_CLUSTER_FINISHED_STATS_MS: '1000', MCP_TASKS_POLL_INTERVAL_MS: '50' };
    nodes = await Promise.all([spawnDemoNode('gauge-a', env), spawnDemoNode('gauge-b', env)]);
    admin = testPool({ connectionString: database.url, max: 2 });
  });
  after(async () => {
    for (const node of nodes ?? []) node.child.kill('SIGKILL');
    await Promise.all((nodes ?? []).map((node) => node.exited));
    await admin?.end();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exports the same cluster counts and oldest live age on every node, as the database has them', async () => {
    const [a, b] = nodes as [DemoProcess, DemoProcess];
    const call = async (node: DemoProcess, owner: string, name: string, args: Record<string, unknown>) => {
      const reply = await authRpc(node.url, owner, 'tools/call', { name, arguments: args });
      assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
      return reply.result!['taskId'] as string;
    };
    await call(a, 'alice', 'export', { project: 'p', files: 10_000, delayMs: 200 });
    await call(b, 'bob', 'export', { project: 'q', files: 10_000, delayMs: 200 });
    const quick = await call(b, 'bob', 'slow_compute', { seconds: 0 });
    await eventually(async () => (await authRpc(b.url, 'bob', 'tasks/get', { taskId: quick })).result?.['status'] === 'completed', 10_000, 'slow_compute completes');

    const expected = new Map([
      ['scope="cluster",status="working"', 2],
      ['scope="cluster",status="input_required"', 0],
      ['scope="cluster",status="completed"', 1],
      ['scope="cluster",status="failed"', 0],
      ['scope="cluster",status="cancelled"', 0],
    ]);
    for (const node of [a, b]) {
      await eventually(async () => {
        const seen = await samples(node.base, 'mcp_tasks_cluster_tasks');
        return [...expected].every(([labels, value]) => seen.get(labels) === value) && seen.size === expected.size;
      }, 15_000, `${node.name} exports the cluster's counts`);
    }
    const { rows } = await admin.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM mcp_tasks.tasks GROUP BY status');
    assert.deepEqual(Object.fromEntries(rows.map((row) => [row.status, row.n])), { working: 2, completed: 1 }, 'the database agrees');
    const { rows: stats } = await admin.query<{ computed_by: string }>('SELECT computed_by FROM mcp_tasks.cluster_stats');
    assert.ok(['gauge-a', 'gauge-b'].includes(nodeName(stats[0]!.computed_by) ?? ''), stats[0]!.computed_by);

    for (const node of [a, b]) {
      const age = (await samples(node.base, 'mcp_tasks_cluster_oldest_live_task_age_seconds')).get('scope="cluster"');
      assert.ok(age !== undefined && age > 0 && age < 120, `${node.name}: oldest live task age ${age}`);
    }
  });
});
