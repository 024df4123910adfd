// Scenario 21, wake-ups per cancel with 8 nodes: eight TaskRuntimes, each on a PostgresTaskStore
// and PostgresTaskNode of its own (own pool, own LISTEN connection, own lease row), in one process.
// A task waits for its abort on node k; node k+1 cancels it; the sample is how many control
// messages the eight listeners received for that one cancel, and how long the runner took to
// notice. Once with wake channels (each node's own channel on its lease row, issue 32), once with
// every row's wake channel cleared, which is what a cluster of the previous release does: the
// broadcast every node receives and seven drop.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TaskRuntime, type TaskContext, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { percentile } from '../stats.js';
import { sleep } from '../support/concurrency.js';
import { atMost, type BenchContext, type Metric, type ScenarioResult } from '../types.js';

const NODES = 8;
/** Time for a NOTIFY that was sent to reach every listener that hears it. */
const SETTLE_MS = 30;
const quiet = { warn: () => {}, error: () => {} };

interface Member {
  readonly store: PostgresTaskStore;
  readonly node: PostgresTaskNode;
  readonly runtime: TaskRuntime;
}

async function startMembers(context: BenchContext): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < NODES; i += 1) {
    const store = await PostgresTaskStore.connect({ connectionString: context.databaseUrl, poolSize: 2, migrate: i === 0, logger: quiet });
    const node = await PostgresTaskNode.start(store, { nodeId: `wake-${i}`, reaper: false, sweeper: false, rescuer: false, stats: false, logger: quiet });
    const runtime = new TaskRuntime({ store, node, pollIntervalMs: 60_000, maxPerPrincipal: Infinity, onError: () => {} });
    members.push({ store, node, runtime });
  }
  return members;
}

const receivedOf = (members: readonly Member[]) => members.reduce((sum, member) => sum + member.node.wakeups.received, 0);

/** `count` cancels, each of a task running on one node sent from the next: messages received and delivery times. */
async function cancels(members: readonly Member[], count: number): Promise<{ messages: number[]; latencies: number[] }> {
  const messages: number[] = [];
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const runner = members[i % NODES]!;
    const sender = members[(i + 1) % NODES]!;
    const owner: TaskOwner = { subject: `wake-${randomUUID()}`, server: 'bench', clientId: 'client', resource: '' };
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let noticed!: Promise<number>;
    const record = await runner.runtime.start({
      owner,
      tool: 'wait',
      args: {},
      execute: async (_args: object, ctx: TaskContext) => {
        noticed = new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
        started();
        await noticed;
        return { content: [] };
      },
    });
    await running;
    // The runner's listener is up from its first watch; what it received before is not this sample's.
    await sleep(SETTLE_MS);
    const before = receivedOf(members);
    const sent = performance.now();
    await sender.runtime.cancel({ taskId: record.taskId, owner });
    latencies.push((await noticed) - sent);
    await sleep(SETTLE_MS);
    messages.push(receivedOf(members) - before);
  }
  return { messages, latencies };
}

export async function runWakeUps(context: BenchContext): Promise<ScenarioResult> {
  const count = context.quick ? 16 : 80;
  const members = await startMembers(context);
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  admin.on('error', () => {});
  const runs: Array<{ wake: { messages: number[]; latencies: number[] }; broadcast: { messages: number[]; latencies: number[] } }> = [];
  try {
    // Every listener up before the first sample.
    await cancels(members, NODES);
    for (let run = 0; run < context.runs; run += 1) {
      const { rows } = await admin.query<{ channel: string; node_id: string }>('SELECT node_id, wake_channel AS channel FROM mcp_tasks.nodes');
      const wake = await cancels(members, count);
      await admin.query('UPDATE mcp_tasks.nodes SET wake_channel = NULL');
      const broadcast = await cancels(members, count);
      for (const row of rows) await admin.query('UPDATE mcp_tasks.nodes SET wake_channel = $1 WHERE node_id = $2', [row.channel, row.node_id]);
      runs.push({ wake, broadcast });
      context.log(
        `  run ${run + 1}: messages per cancel ${percentile(wake.messages, 50)} (wake channels) vs ${percentile(broadcast.messages, 50)} (broadcast); ` +
          `delivery p99 ${percentile(wake.latencies, 99).toFixed(1)} vs ${percentile(broadcast.latencies, 99).toFixed(1)} ms`,
      );
    }
  } finally {
    await admin.end();
    for (const member of members) await member.runtime.close();
    for (const member of members) await member.node.stop();
    for (const member of members) await member.store.close();
  }
  const metrics: Metric[] = [
    { name: 'messages received per cancel, wake channels (median)', unit: 'messages', values: runs.map((r) => percentile(r.wake.messages, 50)), target: atMost(1), digits: 0 },
    { name: 'messages received per cancel, broadcast (median)', unit: 'messages', values: runs.map((r) => percentile(r.broadcast.messages, 50)), digits: 0 },
    { name: 'cancel delivery p50, wake channels', unit: 'ms', values: runs.map((r) => percentile(r.wake.latencies, 50)) },
    { name: 'cancel delivery p99, wake channels', unit: 'ms', values: runs.map((r) => percentile(r.wake.latencies, 99)) },
    { name: 'cancel delivery p99, broadcast', unit: 'ms', values: runs.map((r) => percentile(r.broadcast.latencies, 99)) },
  ];
  return {
    number: 21,
    title: 'Wake-ups per cancel with 8 nodes',
    method:
      `${NODES} nodes (each its own store, pool of 2, LISTEN connection and lease row) in one process; ${count} cancels per run, ` +
      'each of a task waiting for its abort on node k, sent from node k+1; counted: control messages all listeners received per cancel. ' +
      'Side by side: wake channels (migration 0021), then the same with every wake channel cleared (the broadcast of the previous release).',
    metrics,
    notes: [],
  };
}
