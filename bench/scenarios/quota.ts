// Scenario 6, the quota: 64 concurrent creators for one owner, spread over three stores (three
// pools, as three nodes have), against a limit they all exceed together. Live tasks at the end
// must equal the limit.
import { QuotaExceededError, newTaskId, type TaskOwner } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { alwaysEqualTo, type BenchContext, type ScenarioResult } from '../types.js';

const CREATORS = 64;
const NODES = 3;
const MAX_LIVE = 10;

export async function runQuota(context: BenchContext): Promise<ScenarioResult> {
  const rounds = context.quick ? 2 : Math.max(10, context.runs);
  const stores: PostgresTaskStore[] = [];
  const admin = new pg.Pool({ connectionString: context.databaseUrl, max: 1 });
  try {
    for (let i = 0; i < NODES; i += 1) stores.push(await PostgresTaskStore.connect({ connectionString: context.databaseUrl, poolSize: 8, migrate: i === 0 }));
    const overshoot: number[] = [];
    const live: number[] = [];
    const durations: number[] = [];
    const unexpected: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const owner: TaskOwner = { subject: `quota-${round}-${Date.now()}`, server: 'bench', clientId: 'client', resource: '' };
      const started = performance.now();
      const attempts = await Promise.allSettled(
        Array.from({ length: CREATORS }, (_, i) =>
          stores[i % NODES]!.create(
            { taskId: newTaskId(), owner, tool: 'bench', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: `node-${i % NODES}` },
            { maxLive: MAX_LIVE },
          ),
        ),
      );
      durations.push(performance.now() - started);
      for (const attempt of attempts) {
        if (attempt.status === 'rejected' && !(attempt.reason instanceof QuotaExceededError)) unexpected.push(String(attempt.reason));
      }
      const { rows } = await admin.query<{ live: number }>(
        `SELECT count(*)::int AS live FROM mcp_tasks.tasks WHERE owner_subject = $1 AND status IN ('working', 'input_required')`,
        [owner.subject],
      );
      live.push(rows[0]!.live);
      overshoot.push(Math.max(0, rows[0]!.live - MAX_LIVE));
    }
    context.log(`  live per round: ${live.join(', ')}`);
    return {
      number: 6,
      title: 'Quota: concurrent creators across three nodes',
      method:
        `${CREATORS} concurrent \`create\` calls for one owner with \`maxLive: ${MAX_LIVE}\`, spread over ${NODES} \`PostgresTaskStore\`s ` +
        `(three pools of 8 connections, as three nodes have), ${rounds} rounds with a fresh owner each. Live tasks are counted in SQL afterwards. ` +
        `The runs column lists every round.`,
      metrics: [
        { name: 'overshoot (live − limit)', unit: '', values: overshoot, target: alwaysEqualTo(0), digits: 0 },
        { name: 'live tasks at the end', unit: '', values: live, target: alwaysEqualTo(MAX_LIVE), digits: 0 },
        { name: `${CREATORS} concurrent creates, wall time`, unit: 'ms', values: durations, digits: 1 },
      ],
      notes: unexpected.length ? [`Unexpected errors (not QuotaExceededError): ${unexpected.slice(0, 3).join('; ')}`] : [],
    };
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await admin.end();
  }
}
