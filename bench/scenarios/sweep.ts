// Scenario 5, the sweep: a backlog of expired rows (INSERT … SELECT generate_series), deleted by
// the store's TTL sweeper (`sweeper.runOnce()`, default batch size and pause), while readers
// call `store.get` on live tasks through the same store (the same pool) the whole time.
// Each batch is timed on the client (its DELETE and its transaction) by wrapping the pool's clients.
import { ownerKey, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { percentile } from '../stats.js';
import { sleep } from '../support/concurrency.js';
import { atMost, type BenchContext, type ScenarioResult } from '../types.js';

const LIVE_TASKS = 1_000;
const READERS = 4;
const READER_PAUSE_MS = 5;
const SAMPLE_MS = 10;
const SLOW_BATCH_MS = 50;
const owner: TaskOwner = { subject: 'sweep-reader', server: 'bench', clientId: 'client', resource: '' };

/** Checkpoints the server has begun (timed and requested), which stall writes while they flush (log_checkpoints shows the same). */
async function checkpointCount(admin: pg.Pool): Promise<number> {
  // PostgreSQL 17 moved the counts from pg_stat_bgwriter to pg_stat_checkpointer (the embedded server is 18).
  const { rows: [view] } = await admin.query<{ checkpointer: boolean }>("SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL AS checkpointer");
  const sql = view!.checkpointer
    ? 'SELECT (num_timed + num_requested)::text AS n FROM pg_stat_checkpointer'
    : 'SELECT (checkpoints_timed + checkpoints_req)::text AS n FROM pg_stat_bgwriter';
  const { rows } = await admin.query<{ n: string }>(sql);
  return Number(rows[0]!.n);
}

/** One sweep batch as the client saw it: its DELETE statement and its whole transaction (BEGIN to COMMIT's answer). */
interface TimedBatch {
  readonly startedAt: number;
  readonly deleteMs: number;
  readonly transactionMs: number;
}

/**
 * Times the sweep's batches on the pool's connections: the statement that deletes (the only one
 * that starts with DELETE or WITH deleted) and the transaction around it. The clock starts once a
 * connection is checked out, so neither figure includes waiting for the pool.
 */
function timeBatches(pool: pg.Pool, batches: TimedBatch[]): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    let begun: number | undefined;
    let deleteMs = 0;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      const started = performance.now();
      const result = query(...args);
      if (!text || !(result instanceof Promise)) return result;
      if (/^\s*begin\b/i.test(text)) begun = started;
      const deletes = /^\s*(DELETE\b|WITH\s+deleted\b)/i.test(text);
      const commits = /^\s*commit\b/i.test(text);
      if (!deletes && !commits) return result;
      return result.then((value: unknown) => {
        const now = performance.now();
        if (deletes) deleteMs = now - started;
        else if (begun !== undefined && deleteMs > 0) batches.push({ startedAt: begun, deleteMs, transactionMs: now - begun });
        if (commits) [begun, deleteMs] = [undefined, 0];
        return value;
      });
    };
  });
}

/** What the server was doing at one instant of the sweep. */
interface ServerSample {
  readonly at: number;
  /** The checkpointer was writing or syncing (idle it waits on CheckpointerMain). */
  readonly checkpointing: boolean;
  /** The sweep's DELETE, when one was running: its wait event, or `on CPU` (none: running or waiting for a CPU). */
  readonly deleteWait: string | undefined;
}

/** Samples the checkpointer and the sweep's DELETE every few milliseconds, on a connection of its own. */
async function watchServer(url: string): Promise<{ samples: ServerSample[]; stop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples: ServerSample[] = [];
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const at = performance.now();
      const { rows } = await client.query<{ checkpointing: boolean; delete_wait: string | null }>(
        `SELECT (SELECT coalesce(wait_event, '') <> 'CheckpointerMain' FROM pg_stat_activity WHERE backend_type = 'checkpointer') AS checkpointing,
                (SELECT coalesce(wait_event_type || ' ' || wait_event, 'on CPU') FROM pg_stat_activity
                  WHERE datname = current_database() AND state = 'active' AND (query LIKE '%WITH deleted AS%' OR query ~* '^\\s*DELETE') AND pid <> pg_backend_pid()
                  LIMIT 1) AS delete_wait`,
      );
      samples.push({ at, checkpointing: rows[0]?.checkpointing ?? false, deleteWait: rows[0]?.delete_wait ?? undefined });
      await sleep(SAMPLE_MS);
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await sampling;
      await client.end();
    },
  };
}

/** The samples taken while a batch ran (for the checkpointer: within one sampling gap of it). */
function samplesOf(batch: TimedBatch, samples: readonly ServerSample[], margin = 0): ServerSample[] {
  const from = batch.startedAt - margin;
  const to = batch.startedAt + batch.transactionMs + margin;
  return samples.filter((sample) => sample.at >= from && sample.at <= to);
}

/** "on CPU 5, IO DataFileRead 1": how often each wait event was seen, most frequent first. */
function tally(events: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const event of events) counts.set(event, (counts.get(event) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([event, n]) => `${event} ${n}`).join(', ') || 'none';
}

export async function runSweep(context: BenchContext): Promise<ScenarioResult> {
  const rows = context.quick ? 20_000 : 1_000_000;
  const batches: TimedBatch[] = [];
  const pool = new pg.Pool({ connectionString: context.databaseUrl, max: 10 });
  timeBatches(pool, batches);
  const store = await PostgresTaskStore.connect({ pool });
  // The sweeper alone, not started: each run sweeps once, when the benchmark says.
  const sweeper = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false }).sweeper!;
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  const tasks = `${store.schema}.tasks`;
  const totals: number[] = [];
  const worst: number[] = [];
  const batchP99: number[] = [];
  const worstTransaction: number[] = [];
  const readP99: number[] = [];
  const readP50: number[] = [];
  const baselineP99: number[] = [];
  const p99Ratio: number[] = [];
  const checkpoints: number[] = [];
  const smallest: number[] = [];
  const inserts: number[] = [];
  const notes: string[] = [];
  try {
    for (let run = 0; run < context.runs; run += 1) {
      await admin.query(`TRUNCATE ${tasks} CASCADE`);
      const inserted = performance.now();
      // Expired rows of many owners, already completed, expiring one millisecond apart.
      await admin.query(
        `INSERT INTO ${tasks} (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status,
                               created_at, last_updated_at, ttl_ms, expires_at, poll_interval_ms, result, node_id)
         SELECT 'expired-' || i, 'owner-' || (i % 1000), 'bench', 'client', '', '["owner-' || (i % 1000) || '","bench","client",""]', 'bench', 'completed',
                now() - interval '2 hours', now() - interval '2 hours', 3600000,
                now() - interval '1 hour' - ($1 - i) * interval '1 millisecond', 1000, '{"content":[]}', 'node-1'
           FROM generate_series(1, $1) AS i`,
        [rows],
      );
      await admin.query(
        `INSERT INTO ${tasks} (id, owner_subject, owner_server, owner_client_id, owner_resource, owner_key, tool, status,
                               created_at, last_updated_at, ttl_ms, expires_at, poll_interval_ms, node_id)
         SELECT 'live-' || i, $2, 'bench', 'client', '', $3, 'bench', 'working',
                now(), now(), 3600000, now() + interval '1 hour', 1000, 'node-1'
           FROM generate_series(1, $1) AS i`,
        [LIVE_TASKS, owner.subject, ownerKey(owner)],
      );
      // What autovacuum would have done for a backlog that built up over time.
      await admin.query(`VACUUM ANALYZE ${tasks}`);
      inserts.push((performance.now() - inserted) / 1000);

      const refs: TaskRef[] = Array.from({ length: LIVE_TASKS }, (_, i) => ({ taskId: `live-${i + 1}`, owner }));
      let stop = false;
      let latencies: number[] = [];
      const readers = Array.from({ length: READERS }, async (_, reader) => {
        for (let i = reader; !stop; i += READERS) {
          const started = performance.now();
          const task = await store.get(refs[i % LIVE_TASKS]!);
          latencies.push(performance.now() - started);
          if (!task) throw new Error('a live task read as absent');
          await sleep(READER_PAUSE_MS);
        }
      });
      await sleep(2_000);
      baselineP99.push(percentile(latencies, 99));
      latencies = [];
      batches.length = 0;
      // The size the sweeper chose for its next batch, sampled while it sweeps.
      let smallestSeen = sweeper.batchSize;
      const sampler = setInterval(() => (smallestSeen = Math.min(smallestSeen, sweeper.batchSize)), 2);
      const server = await watchServer(context.databaseUrl);
      const checkpointsBefore = await checkpointCount(admin);
      const started = performance.now();
      const result = await sweeper.runOnce().finally(() => server.stop());
      const total = (performance.now() - started) / 1000;
      checkpoints.push((await checkpointCount(admin)) - checkpointsBefore);
      clearInterval(sampler);
      smallest.push(smallestSeen);
      stop = true;
      await Promise.all(readers);
      if (result.deleted !== rows) notes.push(`Run ${run + 1}: the sweep deleted ${result.deleted} of ${rows} rows.`);
      totals.push(total);
      const deleteTimes = batches.map((batch) => batch.deleteMs);
      worst.push(Math.max(...deleteTimes));
      batchP99.push(percentile(deleteTimes, 99));
      worstTransaction.push(Math.max(...batches.map((batch) => batch.transactionMs)));
      const inDeletes = deleteTimes.reduce((sum, ms) => sum + ms, 0) / 1000;
      const inTransactions = batches.reduce((sum, batch) => sum + batch.transactionMs, 0) / 1000;
      const slow = batches.filter((batch) => batch.deleteMs > SLOW_BATCH_MS);
      const slowInCheckpoint = slow.filter((batch) => samplesOf(batch, server.samples, SAMPLE_MS).some((sample) => sample.checkpointing)).length;
      const waitsOf = (some: readonly TimedBatch[]) =>
        tally(some.flatMap((batch) => samplesOf(batch, server.samples).flatMap((sample) => (sample.deleteWait ? [sample.deleteWait] : []))));
      const slowTransactions = batches.filter((batch) => batch.transactionMs > SLOW_BATCH_MS).length;
      notes.push(
        `Run ${run + 1}: ${inDeletes.toFixed(1)} s of the ${total.toFixed(1)} s in DELETE statements, ${inTransactions.toFixed(1)} s in the batches' ` +
          `transactions, the rest in pauses; ${slow.length} of ${batches.length} DELETEs over ${SLOW_BATCH_MS} ms (${slowInCheckpoint} of them while ` +
          `a checkpoint was under way), ${slowTransactions} transactions over ${SLOW_BATCH_MS} ms. The DELETE as sampled every ${SAMPLE_MS} ms ` +
          `in pg_stat_activity, in every batch: ${waitsOf(batches)}; in the DELETEs over ${SLOW_BATCH_MS} ms: ${waitsOf(slow)}.`,
      );
      readP50.push(percentile(latencies, 50));
      readP99.push(percentile(latencies, 99));
      p99Ratio.push(readP99.at(-1)! / baselineP99.at(-1)!);
      context.log(
        `  run ${run + 1}: ${result.deleted} rows in ${result.batches} batches, ${total.toFixed(1)} s; worst batch ${worst.at(-1)!.toFixed(1)} ms; ` +
          `reads p99 ${readP99.at(-1)!.toFixed(1)} ms (before the sweep ${baselineP99.at(-1)!.toFixed(1)} ms); ${checkpoints.at(-1)} checkpoint(s); smallest batch ${smallest.at(-1)} rows`,
      );
    }
    const { batchSize, batchPauseMs, targetBatchMs, minBatchSize } = sweeper.config;
    notes.push(
      `Defaults: batchSize ${batchSize}, targetBatchMs ${targetBatchMs}: a batch slower than that makes the next one smaller in proportion ` +
        `(down to ${minBatchSize} rows), one under half of it doubles the next (up to ${batchSize}), so a checkpoint or a busy disk shrinks the batches ` +
        `instead of stretching them; after each batch the sweeper pauses half as long as the batch took, at most batchPauseMs ` +
        `(${batchPauseMs} ms), so it leaves at least a third of the time to other work whatever the database's speed. ` +
        `Each batch starts in the expiry index at the last expiry the batch before it deleted (so it does not step again over the ` +
        `index entries of the rows already deleted, which stay until VACUUM), deletes the rows it locked by ctid, and commits with ` +
        `synchronous_commit = off (no WAL-flush wait; the sweep is idempotent, so a crash only brings back expired rows for the next sweep).`,
    );
    return {
      number: 5,
      title: 'Sweep: TTL sweeper on a backlog of expired rows',
      method:
        `${rows.toLocaleString('en-US')} expired, completed rows (1 000 owners, expiring 1 ms apart) and ${LIVE_TASKS} live tasks are inserted with ` +
        `\`INSERT … SELECT generate_series\`, then \`VACUUM ANALYZE\` (as autovacuum would have for a backlog built over time). ` +
        `\`sweeper.runOnce()\` deletes the expired rows with the default configuration. Meanwhile ${READERS} readers call \`store.get\` ` +
        `on the live tasks through the same store and pool, each pausing ${READER_PAUSE_MS} ms between reads; the same readers run 2 s before the ` +
        `sweep for a baseline. Batch time is the client-side time of each batch's \`DELETE\` statement; the batch's transaction ` +
        `(BEGIN to COMMIT's answer) is timed too, both on the checked-out connection, so neither includes waiting for the pool. ` +
        `A connection of its own samples \`pg_stat_activity\` every ${SAMPLE_MS} ms: whether the checkpointer is writing or syncing, and the ` +
        `DELETE's wait event (none is reported as "on CPU": running, or waiting for a CPU).`,
      metrics: [
        { name: 'sweep total', unit: 's', values: totals, target: atMost(20), digits: 1 },
        { name: 'worst batch', unit: 'ms', values: worst, target: atMost(50), digits: 1 },
        { name: 'batch p99', unit: 'ms', values: batchP99, digits: 1 },
        { name: 'worst batch transaction (BEGIN to COMMIT)', unit: 'ms', values: worstTransaction, digits: 1 },
        { name: 'live store.get p50 during the sweep', unit: 'ms', values: readP50, digits: 2 },
        { name: 'live store.get p99 during the sweep', unit: 'ms', values: readP99, target: atMost(5), digits: 2 },
        { name: 'live store.get p99 before the sweep', unit: 'ms', values: baselineP99, digits: 2 },
        { name: 'live store.get p99: during ÷ before the sweep', unit: '×', values: p99Ratio, target: atMost(1.2), digits: 2 },
        { name: 'checkpoints during the sweep (pg_stat_bgwriter)', unit: '', values: checkpoints, digits: 0 },
        { name: 'smallest batch the sweeper chose', unit: 'rows', values: smallest, digits: 0 },
        { name: 'insert + VACUUM ANALYZE of the backlog (setup)', unit: 's', values: inserts, digits: 1 },
      ],
      notes,
    };
  } finally {
    await store.close();
    await pool.end();
    await admin.end();
  }
}
