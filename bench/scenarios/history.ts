// Scenario 23, a table with a history (issue 32): one demo node's reads and whole tasks on an
// empty table, then again beside a history of finished tasks kept until their TTL (in the hourly
// partitions ahead, where a cluster's history waits for its TTL); then a day of expired hourly
// partitions dropped by the TTL sweeper while readers read, their p99 beside the baseline.
import { readFile } from 'node:fs/promises';
import { ownerKey, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { median, percentile } from '../stats.js';
import { closedLoopFor, sleep } from '../support/concurrency.js';
import { startDemoNode, stopDemoNode } from '../support/demo-nodes.js';
import { oneTask, saturate, seedCompletedTasks } from '../support/task-load.js';
import { atLeast, atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const CLIENTS = 16;
const READERS = 4;
const READER_PAUSE_MS = 2;
const LIVE_TASKS = 100;
const reader: TaskOwner = { subject: 'history-reader', server: 'bench', clientId: 'client', resource: '' };

interface Phase {
  readonly reads: number[];
  readonly wholeTasks: number[];
  /** The `tasks/get` the whole tasks' clients sent until their task read completed, per task. */
  readonly pollsPerTask: number[];
}

export async function runHistory(context: BenchContext): Promise<ScenarioResult> {
  const historyRows = context.quick ? 20_000 : 10_000_000;
  const expiredPerHour = context.quick ? 500 : 100_000;
  const durationMs = context.quick ? 1_000 : 5_000;
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  const notes: string[] = [];
  // The journal and the history keep no foreign key to the partitioned table: emptied with it.
  const empty = () => admin.query('TRUNCATE mcp_tasks.tasks, mcp_tasks.task_events, mcp_tasks.task_steps');
  // The node's commits time their WAL writes and syncs (pg_stat_wal), what a whole task waits on most.
  await admin.query(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET track_wal_io_timing = on', current_database()); END $$`);
  // The node migrates a fresh database.
  const node = await startDemoNode(context.root, context.databaseUrl, 'bench-history', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity' });
  try {
    await empty();
    const seeded = await seedCompletedTasks(node.url, context.quick ? 20 : 200);
    const measure = async (phase: Phase, clear: boolean) => {
      const watch = () => watchActivity(context.databaseUrl, node.process.pid);
      const [readsActivity, tasksActivity] = [await watch(), await watch()];
      try {
        for (let run = 0; run < context.runs; run += 1) {
          phase.reads.push((await readsActivity.during(() => saturate(node.url, seeded, durationMs, CLIENTS))).rate);
          const completed = { count: 0, polls: 0 };
          const elapsed = await tasksActivity.during(() => closedLoopFor(CLIENTS, durationMs, () => oneTask(node.url, completed)));
          phase.wholeTasks.push(completed.count / (elapsed / 1000));
          phase.pollsPerTask.push(completed.polls / Math.max(completed.count, 1));
          // The empty table stays empty but for what the reads read.
          if (clear) await admin.query('DELETE FROM mcp_tasks.tasks WHERE NOT (id = ANY($1))', [seeded]);
          context.log(`  ${clear ? 'empty' : 'history'} run ${run + 1}: tasks/get ${phase.reads.at(-1)!.toFixed(0)}/s, end to end ${phase.wholeTasks.at(-1)!.toFixed(0)} tasks/s, ${phase.pollsPerTask.at(-1)!.toFixed(1)} polls a task`);
        }
      } finally {
        for (const [what, activity] of [['reads', readsActivity], ['whole tasks', tasksActivity]] as const) {
          const seen = await activity.stop();
          notes.push(
            `What the database was running during the ${what} of the ${clear ? 'empty' : 'history'} runs (\`pg_stat_activity\` sampled every ${ACTIVITY_SAMPLE_MS} ms, ` +
              `${seen.samples} samples; statements active in the most samples): ${seen.top}; what they were waiting on (\`wait_event\`, CPU when none): ${seen.waits}; ` +
              `the machine's CPU then (\`/proc/stat\`): ${seen.cpu}; the WAL written then (\`pg_stat_wal\`): ${seen.wal}.`,
          );
          context.log(`  ${clear ? 'empty' : 'history'} ${what}: ${seen.top}; waits: ${seen.waits}; cpu: ${seen.cpu}; wal: ${seen.wal}`);
        }
      }
    };
    // Warm-up: JIT, connections, the plan cache.
    await closedLoopFor(CLIENTS, durationMs, () => oneTask(node.url, { count: 0 }));
    await admin.query('DELETE FROM mcp_tasks.tasks WHERE NOT (id = ANY($1))', [seeded]);
    const before: Phase = { reads: [], wholeTasks: [], pollsPerTask: [] };
    await measure(before, true);

    const fillStarted = performance.now();
    await fillHistory(admin, historyRows);
    const fillS = (performance.now() - fillStarted) / 1000;
    const { rows: sized } = await admin.query<{ bytes: string; partitions: number; event_bytes: string }>(
      `SELECT sum(pg_total_relation_size(inhrelid))::bigint AS bytes, count(*)::int AS partitions,
              (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'mcp_tasks.task_events'::regclass)::bigint AS event_bytes
         FROM pg_inherits WHERE inhparent = 'mcp_tasks.tasks'::regclass`,
    );
    notes.push(
      `${historyRows.toLocaleString('en')} finished tasks inserted in ${fillS.toFixed(0)} s (with their history events), then \`VACUUM ANALYZE\` and \`CHECKPOINT\`, and the same warm-up as before the empty runs; ` +
        `the table's ${sized[0]!.partitions} partitions then held ${(Number(sized[0]!.bytes) / 2 ** 30).toFixed(2)} GiB with their indexes, ` +
        `the history's ${(Number(sized[0]!.event_bytes) / 2 ** 30).toFixed(2)} GiB.`,
    );
    // As before the empty table's runs: the fill's gigabytes of dirty pages written out (a
    // cluster's history accumulates over hours, not in the minutes before a measurement), then
    // the same warm-up.
    await admin.query('CHECKPOINT');
    await closedLoopFor(CLIENTS, durationMs, () => oneTask(node.url, { count: 0 }));
    const full: Phase = { reads: [], wholeTasks: [], pollsPerTask: [] };
    await measure(full, false);

    // The node's own sweeper would drop the day's partitions beside the measured one (and hold
    // the leader's lock, so the measured sweep would find nothing to do): it stops first.
    await stopDemoNode(node);
    const sweep = await sweepADay(context, admin, expiredPerHour, notes);
    const ratio = (a: number[], b: number[]) => [median(a) / median(b)];
    const metrics: Metric[] = [
      { name: 'tasks/get, empty table', unit: 'req/s', values: before.reads, digits: 0 },
      { name: `tasks/get, ${historyRows.toLocaleString('en')} finished tasks kept`, unit: 'req/s', values: full.reads, digits: 0 },
      { name: 'tasks/get with the history ÷ empty (medians)', unit: '×', values: ratio(full.reads, before.reads), target: atLeast(0.83), digits: 2 },
      { name: 'tools/call → completed, empty table', unit: 'tasks/s', values: before.wholeTasks, digits: 0 },
      { name: `tools/call → completed, ${historyRows.toLocaleString('en')} finished tasks kept`, unit: 'tasks/s', values: full.wholeTasks, digits: 0 },
      { name: 'tools/call → completed with the history ÷ empty (medians)', unit: '×', values: ratio(full.wholeTasks, before.wholeTasks), target: atLeast(0.83), digits: 2 },
      { name: 'tasks/get a whole task took until completed, empty table', unit: '', values: before.pollsPerTask, digits: 1 },
      { name: `tasks/get a whole task took until completed, ${historyRows.toLocaleString('en')} finished tasks kept`, unit: '', values: full.pollsPerTask, digits: 1 },
      { name: `sweep of a day: 24 expired hourly partitions of ${expiredPerHour.toLocaleString('en')} tasks`, unit: 's', values: [sweep.seconds], digits: 1 },
      { name: 'partitions dropped by the sweep', unit: '', values: [sweep.dropped], digits: 0 },
      { name: 'store.get p99 before the sweep', unit: 'ms', values: [sweep.baselineP99], digits: 2 },
      { name: 'store.get p99 during the sweep', unit: 'ms', values: [sweep.p99], target: atMost(50), digits: 2 },
      { name: 'store.get max during the sweep', unit: 'ms', values: [sweep.max], digits: 2 },
    ];
    return {
      number: 23,
      title: 'A table with a history: reads and whole tasks beside it, and a day of partitions swept',
      method:
        `One demo node (its own process, the quota off) on the partitioned task table and its partitioned history (migrations 0030–0035). ${CLIENTS} keep-alive clients read ` +
        `${seeded.length} completed tasks with \`tasks/get\` for ${durationMs / 1000} s, then run whole tasks (\`tools/call slow_compute {seconds: 0}\`, ` +
        `\`tasks/get\` until completed) for ${durationMs / 1000} s, in each of ${context.runs} runs on an empty table (emptied after each run), then ` +
        `\`INSERT … SELECT generate_series\` of ${historyRows.toLocaleString('en')} finished tasks of 1 000 owners, expiring over the next two hours ` +
        `(so in the hourly partitions the node made ahead, as a cluster's history waits for its TTL), and the same runs again beside them; ` +
        `the ratios are of the medians of the two phases, which ran one after the other. Then 24 hourly partitions of the day before, ` +
        `made by \`make_task_partition()\` and filled with ${expiredPerHour.toLocaleString('en')} expired tasks each, and the TTL sweeper ` +
        `(\`sweeper.runOnce()\`, default configuration) drops them while ${READERS} readers call \`store.get\` on ${LIVE_TASKS} live tasks ` +
        `(a ${READER_PAUSE_MS} ms pause between reads), their p99 beside 2 s of reads before the sweep.`,
      metrics,
      notes,
    };
  } finally {
    await stopDemoNode(node);
    await empty().catch(() => undefined);
    await admin.end();
  }
}

const ACTIVITY_SAMPLE_MS = 250;

/** What a phase's sampling saw. */
interface Activity {
  readonly samples: number;
  readonly top: string;
  readonly waits: string;
  readonly cpu: string;
  readonly wal: string;
}

/**
 * Samples the database's active statements (and what they wait on) and the machine's CPU while
 * work passed to `during` goes on: a run's figure also depends on what else the database does
 * then (the maintenance leader's counts, autovacuum) and on whether the time went to the database
 * at all, which a ratio of two phases would otherwise hide.
 */
async function watchActivity(databaseUrl: string, nodePid: number | undefined): Promise<{ during<T>(work: () => Promise<T>): Promise<T>; stop(): Promise<Activity> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const [counts, waits] = [new Map<string, number>(), new Map<string, number>()];
  const cpu = new Map<string, number>();
  const wal = new Map<string, number>();
  let [samples, watching, stopped] = [0, false, false];
  // A failed sample ends the sampling (its figures are a note, never the bench's failure).
  const sampling = (async () => {
    while (!stopped) {
      if (watching) {
        const { rows } = await client.query<{ statement: string; wait: string }>(
          `SELECT coalesce(nullif(backend_type, 'client backend') || ': ', '') || left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS statement,
                  coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait
             FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND (datname = current_database() OR backend_type = 'autovacuum worker')`,
        );
        samples += 1;
        for (const { statement, wait } of rows) {
          counts.set(statement, (counts.get(statement) ?? 0) + 1);
          waits.set(wait, (waits.get(wait) ?? 0) + 1);
        }
      }
      await sleep(ACTIVITY_SAMPLE_MS);
    }
  })().catch(() => undefined);
  const top = (seen: Map<string, number>): string =>
    [...seen].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([what, n]) => `\`${what}\` ${n}`).join(', ') || 'nothing';
  return {
    async during(work) {
      const [before, walBefore] = [await cpuTimes(nodePid), await walCounts(client)];
      watching = true;
      try {
        return await work();
      } finally {
        watching = false;
        const [after, walAfter] = [await cpuTimes(nodePid), await walCounts(client)];
        for (const [kind, ticks] of after) cpu.set(kind, (cpu.get(kind) ?? 0) + ticks - (before.get(kind) ?? 0));
        for (const [kind, count] of walAfter) wal.set(kind, (wal.get(kind) ?? 0) + count - (walBefore.get(kind) ?? 0));
      }
    },
    async stop() {
      stopped = true;
      await sampling;
      await client.end().catch(() => undefined);
      const total = MACHINE_KINDS.reduce((sum, kind) => sum + (cpu.get(kind) ?? 0), 0);
      const shares = [...cpu].map(([kind, ticks]) => `${kind} ${total > 0 ? Math.round((100 * ticks) / total) : 0} %`).join(', ');
      const perSync = (wal.get('ms syncing') ?? 0) / (wal.get('syncs') || 1);
      const walSeen = [...wal].map(([kind, count]) => `${kind} ${count.toLocaleString('en')}`).concat(`${perSync.toFixed(2)} ms a sync`).join(', ');
      return { samples, top: top(counts), waits: top(waits), cpu: shares, wal: walSeen };
    },
  };
}

/** The cluster's WAL so far (`pg_stat_wal`, PostgreSQL 14 and later): records, full-page images, bytes, syncs; empty where it fails. */
async function walCounts(client: pg.Client): Promise<Map<string, number>> {
  try {
    const { rows } = await client.query<Record<string, string>>('SELECT wal_records AS records, wal_fpi AS "full pages", wal_bytes AS bytes, wal_sync AS syncs, round(wal_sync_time) AS "ms syncing" FROM pg_stat_wal');
    return new Map(Object.entries(rows[0] ?? {}).map(([kind, count]) => [kind, Number(count)]));
  } catch {
    return new Map();
  }
}

/** The kinds of the machine's CPU time that add up to all of it. */
const MACHINE_KINDS = ['user', 'system', 'iowait', 'steal', 'idle'];

/**
 * The machine's CPU time so far by kind (`/proc/stat`'s first line), and the part of it the demo
 * node's process and this one (the clients) took (`/proc/<pid>/stat`), in ticks; empty where
 * there is no `/proc`. What is busy and neither is mostly PostgreSQL.
 */
async function cpuTimes(nodePid: number | undefined): Promise<Map<string, number>> {
  const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0] ?? '';
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
  if (steal === undefined || Number.isNaN(steal)) return new Map();
  return new Map([
    ['user', user! + nice!],
    ['system', system! + irq! + softirq!],
    ['iowait', iowait!],
    ['steal', steal],
    ['idle', idle!],
    ['of which the demo node', await processTicks(nodePid)],
    ['the clients', await processTicks(process.pid)],
  ]);
}

/** User and system ticks of process `pid` so far (fields 14 and 15 of `/proc/<pid>/stat`, after the command's parentheses). */
async function processTicks(pid: number | undefined): Promise<number> {
  const stat = pid === undefined ? '' : await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) || 0) + (Number(fields[12]) || 0);
}

/**
 * `rows` finished tasks of 1 000 owners, expiring over the next two hours: in the hourly
 * partitions ahead (`expiry_key` is what routes a row; the create functions set it so).
 */
async function fillHistory(admin: pg.Pool, rows: number): Promise<void> {
  const chunk = 1_000_000;
  for (let from = 1; from <= rows; from += chunk) {
    await admin.query(
      `INSERT INTO mcp_tasks.tasks (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status,
                                    created_at, last_updated_at, ttl_ms, expires_at, expiry_key, poll_interval_ms, result, node_id)
       SELECT 'history-' || i, 'owner-' || (i % 1000), 'bench', 'client', '', '["owner-' || (i % 1000) || '","bench","client",""]', 'slow_compute', 'completed',
              e - interval '1 hour', e - interval '1 hour', 3600000, e, e, 1000, '{"content":[{"type":"text","text":"done"}]}', 'bench-history'
         FROM generate_series($1::int, $2::int) AS i,
              LATERAL (SELECT date_trunc('milliseconds', now()) + interval '5 minutes' + (i % 6000) * interval '1 second' AS e) AS expiry`,
      [from, Math.min(rows, from + chunk - 1)],
    );
  }
  await admin.query('VACUUM ANALYZE mcp_tasks.tasks, mcp_tasks.task_events');
}

/** 24 expired hourly partitions of the day before, dropped by one sweep while readers read. */
async function sweepADay(context: BenchContext, admin: pg.Pool, perHour: number, notes: string[]) {
  const pool = new pg.Pool({ connectionString: context.databaseUrl, max: 10 });
  const store = await PostgresTaskStore.connect({ pool });
  // The sweeper alone, not started: it sweeps once, when the benchmark says.
  const sweeper = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false }).sweeper!;
  try {
    for (let hour = 1; hour <= 24; hour += 1) {
      await admin.query(`SELECT mcp_tasks.make_task_partition(now() - $1::int * interval '1 hour' - interval '1 hour')`, [hour]);
    }
    await admin.query(
      `INSERT INTO mcp_tasks.tasks (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status,
                                    created_at, last_updated_at, ttl_ms, expires_at, expiry_key, poll_interval_ms, result, node_id)
       SELECT 'expired-' || i, 'owner-' || (i % 1000), 'bench', 'client', '', '["owner-' || (i % 1000) || '","bench","client",""]', 'slow_compute', 'completed',
              e - interval '1 hour', e - interval '1 hour', 3600000, e, e, 1000, '{"content":[]}', 'bench-history'
         FROM generate_series(1, $1::int) AS i,
              LATERAL (SELECT date_trunc('hour', now()) - interval '25 hours' + (i % 86400) * interval '1 second' AS e) AS expiry`,
      [perHour * 24],
    );
    await admin.query(
      `INSERT INTO mcp_tasks.tasks (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status,
                                    created_at, last_updated_at, ttl_ms, expires_at, expiry_key, poll_interval_ms, node_id)
       SELECT 'live-' || i, $2, 'bench', 'client', '', $3, 'bench', 'working', now(), now(), NULL, NULL, 'infinity', 1000, 'bench-history'
         FROM generate_series(1, $1::int) AS i`,
      [LIVE_TASKS, reader.subject, ownerKey(reader)],
    );
    await admin.query('VACUUM ANALYZE mcp_tasks.tasks, mcp_tasks.task_events');
    const refs: TaskRef[] = Array.from({ length: LIVE_TASKS }, (_, i) => ({ taskId: `live-${i + 1}`, owner: reader }));
    let stop = false;
    let latencies: number[] = [];
    const readers = Array.from({ length: READERS }, async (_, worker) => {
      for (let i = worker; !stop; i += READERS) {
        const started = performance.now();
        if (!(await store.get(refs[i % LIVE_TASKS]!))) throw new Error('a live task read as absent');
        latencies.push(performance.now() - started);
        await sleep(READER_PAUSE_MS);
      }
    });
    await sleep(2_000);
    const baselineP99 = percentile(latencies, 99);
    latencies = [];
    const droppedBefore = sweeper.partitionsDropped;
    const started = performance.now();
    await sweeper.runOnce();
    const seconds = (performance.now() - started) / 1000;
    stop = true;
    await Promise.all(readers);
    const dropped = sweeper.partitionsDropped - droppedBefore;
    const { rows: left } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM mcp_tasks.tasks WHERE id LIKE 'expired-%'`);
    if (left[0]!.n > 0) notes.push(`The sweep left ${left[0]!.n} of the day's ${perHour * 24} expired tasks.`);
    return { seconds, dropped, baselineP99, p99: percentile(latencies, 99), max: latencies.reduce((most, ms) => Math.max(most, ms), 0) };
  } finally {
    await store.close();
    await pool.end();
  }
}
