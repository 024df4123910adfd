// Scenario 22, the capacity model (docs/scale-out.md "What one task costs"): what one task costs
// the node and PostgreSQL, counted on a server of the scenario's own (its WAL, CPU and statements
// are nobody else's). One demo node; clients run a fixed number of tasks through it over HTTP;
// before and after, the node's CPU (/proc), the server processes' CPU (/proc), the WAL position
// and pg_stat_wal, pg_stat_statements, the NOTIFYs a listener on the node's channels receives,
// and the tables' and indexes' bytes and leaf items (pageinspect, autovacuum held off during the
// run so nothing is reclaimed before it is counted). Then what a VACUUM and the delete of the
// same tasks cost, per task: the part of the bill that comes later.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { controlChannelOf } from '@mcp-tasks/postgres';
import { sleep } from '../support/concurrency.js';
import { startDemoNode, stopDemoNode, type DemoNode } from '../support/demo-nodes.js';
import { serverBinaries, startMeasuredPostgres, type MeasuredPostgres } from '../support/measured-postgres.js';
import { rpc } from '../support/mcp-client.js';
import { cpuMs } from '../support/proc-stats.js';
import type { BenchContext, Metric, ScenarioResult } from '../types.js';

const TITLE = 'The capacity model: what one task costs';
const CLIENTS = 16;
const TABLES = ['tasks', 'task_events', 'task_steps', 'task_storage'];

interface Workload {
  readonly label: string;
  /** One task of the owner of `token`, start to end, through `node`; false when it did not end as it should. */
  readonly run: (node: DemoNode, token: string) => Promise<boolean>;
}

const WORKLOADS: readonly Workload[] = [
  {
    label: 'create → completed',
    async run(node, token) {
      const created = await rpc(node.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, token);
      const taskId = created.result?.['taskId'] as string | undefined;
      if (!taskId) return false;
      return (await pollUntil(node, token, taskId, 'completed')) === 'completed';
    },
  },
  {
    label: 'create → cancelled',
    async run(node, token) {
      const created = await rpc(node.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 600 } }, token);
      const taskId = created.result?.['taskId'] as string | undefined;
      if (!taskId) return false;
      await rpc(node.url, 'tasks/cancel', { taskId }, token);
      return (await pollUntil(node, token, taskId, 'cancelled')) === 'cancelled';
    },
  },
];

async function pollUntil(node: DemoNode, token: string, taskId: string, wanted: string): Promise<string | undefined> {
  for (let i = 0; i < 2_000; i += 1) {
    const status = (await rpc(node.url, 'tasks/get', { taskId }, token)).result?.['status'] as string | undefined;
    if (status === wanted || status === 'failed' || status === undefined) return status;
    if (i > 3) await sleep(2);
  }
  return undefined;
}

interface Costs {
  readonly tasks: number;
  readonly perSecond: number;
  readonly nodeCpuMs: number;
  readonly postgresCpuMs: number;
  readonly walBytes: number;
  readonly walRecords: number;
  readonly walFullPages: number;
  readonly statements: number;
  readonly statementMs: number;
  readonly tableBytes: number;
  readonly indexBytes: number;
  readonly indexItems: number;
  readonly notifies: number;
  readonly peakConnections: number;
  readonly vacuumCpuMs: number;
  readonly vacuumWalBytes: number;
  readonly deleteCpuMs: number;
  readonly deleteWalBytes: number;
  readonly topStatements: string[];
}

export async function runCapacity(context: BenchContext): Promise<ScenarioResult> {
  if (!serverBinaries()) {
    // The scenario needs a server of its own; without one it says so instead of failing the run.
    return { number: 22, title: TITLE, method: 'Not run: no PostgreSQL server binaries in /usr/lib/postgresql/<major>/bin to start a server of its own.', metrics: [], notes: [] };
  }
  const tasks = context.quick ? 200 : 2_000;
  const server = await startMeasuredPostgres();
  const measured = new Map<string, Costs[]>();
  const notes: string[] = [];
  let node: DemoNode | undefined;
  const admin = new pg.Client({ connectionString: server.url });
  admin.on('error', () => {});
  const listener = new pg.Client({ connectionString: server.url });
  listener.on('error', () => {});
  // One owner per client, as callers are: one owner's creates would wait on each other under its quota lock.
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-bench-capacity-'));
  const tokens = Array.from({ length: CLIENTS }, (_, i) => `capacity-token-${i}`);
  await writeFile(path.join(dir, 'tokens.json'), JSON.stringify(Object.fromEntries(tokens.map((token, i) => [token, { sub: `owner-${i}`, clientId: 'bench', scopes: [] }]))));
  try {
    await admin.connect();
    await admin.query('CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pageinspect');
    node = await startDemoNode(context.root, server.url, 'capacity-node', { MCP_TASKS_TOKENS: path.join(dir, 'tokens.json') });
    for (const leaf of await leafTables(admin)) await admin.query(`ALTER TABLE ${leaf} SET (autovacuum_enabled = off)`);
    // The NOTIFYs of the workload: the broadcast channel and the node's own wake channel.
    const { rows: channels } = await admin.query<{ wake_channel: string | null }>('SELECT wake_channel FROM mcp_tasks.nodes');
    await listener.connect();
    let notifies = 0;
    listener.on('notification', () => void (notifies += 1));
    for (const channel of [controlChannelOf('mcp_tasks'), ...channels.map((row) => row.wake_channel).filter((c): c is string => !!c)]) {
      await listener.query(`LISTEN ${listener.escapeIdentifier(channel)}`);
    }
    for (const workload of WORKLOADS) {
      // Warm-up: JIT in the node, its pool's connections open, plans cached.
      await loop(CLIENTS, context.quick ? 50 : 300, (client) => workload.run(node!, tokens[client]!));
      for (let run = 0; run < context.runs; run += 1) {
        const costs = await measure(server, admin, node, workload, tasks, tokens, () => notifies);
        measured.set(workload.label, [...(measured.get(workload.label) ?? []), costs]);
        context.log(
          `  ${workload.label}, run ${run + 1}: ${costs.perSecond.toFixed(0)} tasks/s; per task node ${costs.nodeCpuMs.toFixed(2)} ms CPU, ` +
            `PostgreSQL ${costs.postgresCpuMs.toFixed(2)} ms CPU, ${costs.walBytes.toFixed(0)} B WAL, ${costs.statements.toFixed(1)} statements, ${costs.notifies.toFixed(2)} NOTIFYs`,
        );
      }
      const last = measured.get(workload.label)!.at(-1)!;
      notes.push(`${workload.label}: the statements taking most server time per task: ${last.topStatements.join('; ')}.`);
    }
  } finally {
    if (node) await stopDemoNode(node);
    await listener.end().catch(() => {});
    await admin.end().catch(() => {});
    await server.destroy();
    await rm(dir, { recursive: true, force: true });
  }
  const metrics: Metric[] = [];
  for (const [label, runs] of measured) {
    const metric = (name: string, unit: string, pick: (c: Costs) => number, digits?: number): Metric => ({ name: `${name} (${label})`, unit, values: runs.map(pick), ...(digits === undefined ? {} : { digits }) });
    metrics.push(
      metric('tasks through one node', 'tasks/s', (c) => c.perSecond, 0),
      metric("node's CPU per task", 'ms', (c) => c.nodeCpuMs, 2),
      metric("PostgreSQL's CPU per task", 'ms', (c) => c.postgresCpuMs, 2),
      metric('statements per task', '', (c) => c.statements, 1),
      metric('statement execution time per task', 'ms', (c) => c.statementMs, 3),
      metric('WAL per task', 'B', (c) => c.walBytes, 0),
      metric('WAL records per task', '', (c) => c.walRecords, 1),
      metric('WAL full-page images per task', '', (c) => c.walFullPages, 2),
      metric('table bytes per task (heap and TOAST)', 'B', (c) => c.tableBytes, 0),
      metric('index bytes per task', 'B', (c) => c.indexBytes, 0),
      metric('index leaf items per task', '', (c) => c.indexItems, 1),
      metric('NOTIFYs per task', '', (c) => c.notifies, 2),
      metric('server connections at peak (one node)', '', (c) => c.peakConnections, 0),
      metric("a later VACUUM's PostgreSQL CPU per task", 'ms', (c) => c.vacuumCpuMs, 3),
      metric("a later VACUUM's WAL per task", 'B', (c) => c.vacuumWalBytes, 0),
      metric("the delete's PostgreSQL CPU per task", 'ms', (c) => c.deleteCpuMs, 3),
      metric("the delete's WAL per task", 'B', (c) => c.deleteWalBytes, 0),
    );
  }
  return {
    number: 22,
    title: TITLE,
    method:
      `A PostgreSQL of the scenario's own (\`bench/support/measured-postgres.ts\`: initdb, full_page_writes on, fsync off, pg_stat_statements loaded) ` +
      `and one demo node process (default pool of 10, static tokens: each client its own owner). ${CLIENTS} clients run ${tasks} tasks per run through the node over HTTP, one workload at a time: ` +
      `\`tools/call slow_compute {seconds: 0}\` polled with \`tasks/get\` until completed, and \`slow_compute {seconds: 600}\` cancelled with \`tasks/cancel\`, ` +
      `polled until cancelled. Around each run: the node's and the server processes' CPU (/proc/PID/stat), pg_current_wal_lsn() and pg_stat_wal, ` +
      `pg_stat_statements (calls and execution time), a listener on the broadcast and the node's wake channel (NOTIFYs), the client connections ` +
      `sampled every 50 ms (the scenario's own two excluded), and the tables' and indexes' bytes and btree leaf items (pageinspect; autovacuum off on ` +
      `the task tables during the run, so nothing is reclaimed before it is counted). Then a VACUUM of the tables and a DELETE of the run's tasks ` +
      `(the sweeper's work, in one statement), each with its CPU and WAL per task. Everything divided by the tasks of the run. The load generator ` +
      `shares the machine and is not counted.`,
    metrics,
    notes,
  };
}

async function loop(workers: number, total: number, operation: (worker: number) => Promise<boolean>): Promise<{ elapsedMs: number; failed: number }> {
  let started = 0;
  let failed = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (started < total) {
        started += 1;
        if (!(await operation(worker))) failed += 1;
      }
    }),
  );
  return { elapsedMs: performance.now() - begin, failed };
}

async function measure(server: MeasuredPostgres, admin: pg.Client, node: DemoNode, workload: Workload, tasks: number, tokens: readonly string[], notifies: () => number): Promise<Costs> {
  await admin.query(`TRUNCATE ${TABLES.map((t) => `mcp_tasks.${t}`).join(', ')} CASCADE`);
  await admin.query("SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')");
  await admin.query('CHECKPOINT'); // every run starts after a checkpoint: its full-page images are comparable
  const before = { node: await cpuMs(node.process.pid!), postgres: await server.cpuMs(), lsn: await lsn(admin), notifies: notifies() };
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'");
      peak = Math.max(peak, rows[0]!.n - 2);
      await sleep(50);
    }
  })();
  const { elapsedMs, failed } = await loop(CLIENTS, tasks, (client) => workload.run(node, tokens[client]!));
  sampling = false;
  await sampler;
  await sleep(200); // the last NOTIFYs arrive
  if (failed > 0) throw new Error(`${failed} of ${tasks} tasks of "${workload.label}" did not end as expected`);
  const after = { node: await cpuMs(node.process.pid!), postgres: await server.cpuMs(), lsn: await lsn(admin), notifies: notifies() };
  const { rows: wal } = await admin.query<{ records: string; fpi: string }>('SELECT wal_records AS records, wal_fpi AS fpi FROM pg_stat_wal');
  const { rows: statements } = await admin.query<{ calls: string; ms: number }>(
    "SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(total_exec_time), 0)::float8 AS ms FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_current_wal%' AND query NOT LIKE 'CHECKPOINT%' AND query NOT LIKE 'TRUNCATE%'",
  );
  const { rows: top } = await admin.query<{ query: string; calls: string; ms: number }>(
    "SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query, calls, total_exec_time::float8 AS ms FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE 'CHECKPOINT%' AND query NOT LIKE 'TRUNCATE%' ORDER BY total_exec_time DESC LIMIT 4",
  );
  const sizes = await relationSizes(admin);
  const per = (value: number) => value / tasks;

  // What comes later for the same tasks: a VACUUM (dead versions of the updates), then the delete.
  const vacuum = await costOf(server, admin, `VACUUM ${TABLES.map((t) => `mcp_tasks.${t}`).join(', ')}`);
  const deletion = await costOf(server, admin, 'DELETE FROM mcp_tasks.tasks');
  return {
    tasks,
    perSecond: tasks / (elapsedMs / 1000),
    nodeCpuMs: per(after.node - before.node),
    postgresCpuMs: per(after.postgres - before.postgres),
    walBytes: per(Number(after.lsn - before.lsn)),
    walRecords: per(Number(wal[0]!.records)),
    walFullPages: per(Number(wal[0]!.fpi)),
    statements: per(Number(statements[0]!.calls)),
    statementMs: per(statements[0]!.ms),
    tableBytes: per(sizes.table),
    indexBytes: per(sizes.index),
    indexItems: per(sizes.items),
    notifies: per(after.notifies - before.notifies),
    peakConnections: peak,
    vacuumCpuMs: per(vacuum.cpuMs),
    vacuumWalBytes: per(vacuum.walBytes),
    deleteCpuMs: per(deletion.cpuMs),
    deleteWalBytes: per(deletion.walBytes),
    topStatements: top.map((row) => `${(row.ms / tasks).toFixed(3)} ms in ${(Number(row.calls) / tasks).toFixed(2)}× \`${row.query}…\``),
  };
}

async function lsn(admin: pg.Client): Promise<bigint> {
  const { rows } = await admin.query<{ at: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS at");
  return BigInt(rows[0]!.at.split('.')[0]!);
}

async function costOf(server: MeasuredPostgres, admin: pg.Client, statement: string): Promise<{ cpuMs: number; walBytes: number }> {
  const cpu = await server.cpuMs();
  const at = await lsn(admin);
  await admin.query(statement);
  return { cpuMs: (await server.cpuMs()) - cpu, walBytes: Number((await lsn(admin)) - at) };
}

/** The task tables' bytes (heap and TOAST), their indexes' bytes, and their btree leaf items (live and dead, high keys excluded). */
async function relationSizes(admin: pg.Client): Promise<{ table: number; index: number; items: number }> {
  const names = (await leafTables(admin)).map((leaf) => `'${leaf}'::regclass`).join(', ');
  const { rows } = await admin.query<{ table: string; index: string }>(
    `SELECT sum(pg_table_size(r))::text AS table, sum(pg_indexes_size(r))::text AS index FROM unnest(ARRAY[${names}]) AS r`,
  );
  const { rows: items } = await admin.query<{ items: string }>(
    `SELECT coalesce(sum(s.live_items + s.dead_items - CASE WHEN s.btpo_next <> 0 THEN 1 ELSE 0 END), 0)::text AS items
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_am a ON a.oid = c.relam AND a.amname = 'btree'
       CROSS JOIN LATERAL generate_series(1, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int - 1) AS blk
       CROSS JOIN LATERAL bt_page_stats(c.oid::regclass::text, blk) AS s
      WHERE i.indrelid = ANY (ARRAY[${names}]) AND s.type = 'l'`,
  );
  return { table: Number(rows[0]!.table), index: Number(rows[0]!.index), items: Number(items[0]!.items) };
}

/**
 * The tables that hold the rows: each of TABLES, or, for a partitioned one (`tasks`, migration
 * 0032), its partitions, which hold the storage options, the bytes and the index pages.
 */
async function leafTables(admin: pg.Client): Promise<string[]> {
  const { rows } = await admin.query<{ leaf: string }>(
    `SELECT t.relid::regclass::text AS leaf FROM unnest($1::regclass[]) AS r, pg_partition_tree(r) AS t WHERE t.isleaf`,
    [TABLES.map((table) => `mcp_tasks.${table}`)],
  );
  return rows.map((row) => row.leaf);
}
