// Two demo node processes whose pool goes through PgBouncer in transaction mode (Debian's 1.18,
// its defaults), with and without DIRECT_DATABASE_URL. With it, the session connections (LISTEN,
// lease, maintenance) go straight to PostgreSQL under their names, and an answer given on one
// node reaches the run on the other by NOTIFY, well under the poll interval. Without it, the
// nodes say so (first log line, /readyz, the gauge, the nodes table) and deliver by the poll; in
// both, no request fails.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually, metric, ROOT, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { pgBouncerMissing, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { testPool } from '../support/pg-clients.js';

const run = promisify(execFile);
const skip = pgBouncerMissing();
const POLL_MS = 3_000;
const ENV = { MCP_TASKS_POLL_INTERVAL_MS: String(POLL_MS), MCP_TASKS_LEASE_MS: '3000', MCP_TASKS_POOL_SIZE: '6', MCP_TASKS_DRAIN_MS: '500', MCP_TASKS_MAX_IN_FLIGHT: 'off', MCP_TASKS_RATE_LIMIT: 'off' };

let database: TestDatabase;
let bouncer: PgBouncer;
let admin: pg.Pool;
const nodes: DemoProcess[] = [];

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  admin = testPool({ connectionString: database.url, max: 1 });
  admin.on('error', () => undefined);
  bouncer = await startPgBouncer(database.url, { poolSize: 6 });
});

after(async () => {
  for (const node of nodes) node.child.kill('SIGKILL');
  await Promise.all(nodes.map((node) => node.exited));
  await admin?.end();
  await bouncer?.stop();
  await database?.drop();
});

async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(url, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
  return created.result!['taskId'] as string;
}

async function readyz(node: DemoProcess): Promise<Record<string, unknown>> {
  const res = await fetch(`${node.base}/readyz`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>;
}

/** 30 calls spread over both nodes at once, each read back on the other: every one must answer. */
async function noRequestFails(a: DemoProcess, b: DemoProcess): Promise<void> {
  const errors: string[] = [];
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const [on, other] = i % 2 === 0 ? [a, b] : [b, a];
      const created = await rpc(on.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
      if (created.error) return void errors.push(JSON.stringify(created.error));
      const read = await rpc(other.url, 'tasks/get', { taskId: created.result!['taskId'] });
      if (read.error) errors.push(JSON.stringify(read.error));
    }),
  );
  // An internal error's cause is in the node's log, under its ref: shown with the failure.
  const refs = errors.flatMap((error) => [.../ref ([0-9a-f]+)/.exec(error)?.slice(1) ?? []]);
  const logged = [a, b].flatMap((node) => node.output().split('\n')).filter((line) => refs.some((ref) => line.includes(ref)));
  assert.deepEqual(errors, [], `${errors.length} of 60 requests failed; the nodes logged: ${logged.join('\n')}`);
}

/** An answer given on `answerer` to a task run on `runner`: how long until it completed. */
async function answerAcross(runner: DemoProcess, answerer: DemoProcess, bound: number): Promise<number> {
  const taskId = await startTask(runner.url, 'confirm_delete', { filename: 'a.txt' });
  await waitFor(answerer.url, taskId, (task) => task['status'] === 'input_required');
  const sent = Date.now();
  const answered = await rpc(answerer.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
  assert.equal(answered.error, undefined, JSON.stringify(answered.error));
  const done = await waitFor(answerer.url, taskId, (task) => task['status'] === 'completed', bound);
  assert.match(JSON.stringify(done), /Deleted a\.txt\./);
  return Date.now() - sent;
}

async function spawnBoth(first: string, second: string, env: Record<string, string>): Promise<[DemoProcess, DemoProcess]> {
  const spawned = await Promise.allSettled([spawnDemoNode(first, env), spawnDemoNode(second, env)]);
  for (const result of spawned) if (result.status === 'fulfilled') nodes.push(result.value);
  for (const result of spawned) if (result.status === 'rejected') throw result.reason;
  return [nodes.at(-2)!, nodes.at(-1)!];
}

/** `mcp-tasks …args` from source, bounded; its stdout. */
async function cli(args: string[], databaseUrl: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/cli/src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    timeout: 30_000,
  });
  return stdout;
}

async function stop(...stopping: DemoProcess[]): Promise<void> {
  for (const node of stopping) node.child.kill('SIGTERM');
  await Promise.all(stopping.map((node) => node.exited));
}

describe('through PgBouncer in transaction mode', { skip, timeout: 120_000 }, () => {
  it('with DIRECT_DATABASE_URL: no request fails, the session connections keep their names, and an answer arrives by NOTIFY', async () => {
    const env = { ...ENV, DATABASE_URL: bouncer.url, DIRECT_DATABASE_URL: database.url };
    const [a, b] = await spawnBoth('pooled-direct-a', 'pooled-direct-b', env);
    await noRequestFails(a, b);
    const took = await answerAcross(a, b, POLL_MS);
    // The runner's poll is 3 s: what arrives well under it came by NOTIFY.
    assert.ok(took < POLL_MS / 2, `the answer took ${took} ms`);
    assert.equal((await readyz(a))['listener'], 'listening');
    assert.equal(await metric(a.base, 'mcp_tasks_listener_listening'), 1);
    // The lease and LISTEN connections of both processes are there by name while idle: they do not go through the pooler.
    const { rows } = await admin.query<{ name: string }>(
      `SELECT regexp_replace(application_name, ':[0-9a-f]{16}$', '') AS name FROM pg_stat_activity
        WHERE datname = current_database() AND application_name ~ '^mcp-tasks:(lease|listener):[0-9a-f]{16}$' ORDER BY 1`,
    );
    assert.deepEqual(rows.map((row) => row.name), ['mcp-tasks:lease', 'mcp-tasks:lease', 'mcp-tasks:listener', 'mcp-tasks:listener']);
    assert.doesNotMatch(a.output() + b.output(), /DIRECT_DATABASE_URL|self-test failed|refused/);
    await eventually(async () => {
      const { rows: listening } = await admin.query(`SELECT listening FROM mcp_tasks.nodes WHERE name LIKE 'pooled-direct-%' AND lease_expires_at > now()`);
      return listening.length === 2 && listening.every((row) => row.listening === true);
    }, 5_000, 'both nodes record that they listen');
    await stop(a, b);
  });

  it('without it: no request fails, the first log line says to set it, /readyz and the gauge say polling only, and an answer arrives by the poll', async () => {
    const env = { ...ENV, DATABASE_URL: bouncer.url };
    const [c, d] = await spawnBoth('pooled-only-c', 'pooled-only-d', env);
    assert.match(c.output().split('\n')[0]!, /DIRECT_DATABASE_URL/, `first line of:\n${c.output()}`);
    await noRequestFails(c, d);
    await answerAcross(c, d, POLL_MS * 2 + 2_000);
    const ready = await readyz(c);
    assert.equal(ready['status'], 'ready');
    assert.equal(ready['listener'], 'polling-only');
    assert.match(String(ready['detail']), /DIRECT_DATABASE_URL/);
    assert.equal(await metric(c.base, 'mcp_tasks_listener_listening'), 0);
    await eventually(async () => {
      const { rows } = await admin.query(`SELECT listening FROM mcp_tasks.nodes WHERE name LIKE 'pooled-only-%' AND lease_expires_at > now()`);
      return rows.length === 2 && rows.every((row) => row.listening === false);
    }, 5_000, 'both nodes record that they poll only');
    // The operator's view through the same pooler: `mcp-tasks nodes` names the state.
    const listed = await cli(['nodes'], bouncer.url);
    assert.match(listed, /^pooled-only-c\/[0-9a-f]{16}\s.*\slive\s+\d+\s+polling only\s/m, listed);
    assert.doesNotMatch(c.output() + d.output(), /already exists|does not exist|Internal error/);
    await stop(c, d);
  });
});
