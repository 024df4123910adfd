// The fault schedule: drawn from the seed alone (the same seed, the same faults at the same
// offsets on the same nodes), then injected one after the other while the workload runs.
import { testClient } from '../support/pg-clients.js';
import type { ChaosProxy } from './chaos-proxy.js';
import type { ChaosNode } from './cluster.js';
import type { History } from './history.js';
import type { PrivatePostgres } from './private-postgres.js';
import { Random } from './random.js';

export const FAULT_KINDS = [
  'sigkill',
  'sigstop',
  'sigterm',
  'cut-listener',
  'cut-lease',
  'pg-restart-fast',
  'pg-restart-immediate',
  'proxy-delay',
  'proxy-stall',
  'proxy-drop',
  'clock-skew',
  'flood',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Not a fault of the schedule: the harness starting a node again after it crashed (from the crash to its restart). */
export const SUPERVISOR_RESTART = 'supervisor-restart';

export interface PlannedFault {
  /** Milliseconds after the workload starts. */
  readonly at: number;
  readonly fault: FaultKind;
  /** Index of the node it hits (the proxied node for the proxy faults; unused by PostgreSQL's). */
  readonly node: number;
  /** The fault's size: a pause, a delay, a skew in seconds, a flood's count. */
  readonly amount: number;
}

/** The schedule of a run of `durationMs` on `nodes` nodes; `skew` only when faketime is there. */
export function planFaults(seed: number, durationMs: number, nodes: number, options: { skew: boolean }): PlannedFault[] {
  const random = new Random(seed ^ 0x5eed_fa17);
  const kinds = FAULT_KINDS.filter((kind) => kind !== 'clock-skew' || options.skew);
  const plan: PlannedFault[] = [];
  // The first seconds build a workload; the last leave time for the faults' effects to be seen.
  for (let at = random.int(3_000, 6_000); at < durationMs - 10_000; at += random.int(3_000, 7_000)) {
    const fault = random.pick(kinds);
    const amount =
      fault === 'pg-restart-fast' || fault === 'pg-restart-immediate'
        ? random.int(300, 3_000)
        : fault === 'proxy-delay'
          ? random.int(20, 300)
          : fault === 'proxy-stall'
            ? random.int(500, 5_000)
            : fault === 'clock-skew'
              ? random.pick([-3, -2, -1, 1, 2, 3, 0])
              : fault === 'flood'
                ? random.int(20, 40)
                : fault === 'sigkill'
                  ? random.int(200, 2_000)
                  : 0;
    plan.push({ at, fault, node: random.int(0, nodes - 1), amount });
  }
  return plan;
}

export interface FaultTargets {
  readonly history: History;
  readonly nodes: readonly ChaosNode[];
  readonly postgres: PrivatePostgres;
  readonly proxy: ChaosProxy;
  /** Index of the node behind the proxy. */
  readonly proxiedNode: number;
  readonly leaseMs: number;
  readonly flood: (count: number) => Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Injects `plan` from `startedAt` until `stopAt` (no fault starts later): each fault at its
 * offset, without waiting for the previous one's effect to end (a node's restart takes tens of
 * seconds on a loaded machine). A fault whose target (a node, PostgreSQL, the proxy) is still in
 * an earlier fault is recorded as `skipped`. Resolves once every fault's effect is over.
 */
export async function injectFaults(plan: readonly PlannedFault[], targets: FaultTargets, startedAt: number, stopAt: number): Promise<void> {
  const busy = new Map<string, Promise<void>>();
  for (const planned of plan) {
    const wait = startedAt + planned.at - Date.now();
    if (wait > 0) await sleep(wait);
    if (Date.now() >= stopAt) break;
    const t = Date.now();
    const node = planned.fault.startsWith('proxy-') ? targets.nodes[targets.proxiedNode]! : targets.nodes[planned.node]!;
    const onNode = !planned.fault.startsWith('pg-') && planned.fault !== 'flood';
    const target = planned.fault.startsWith('pg-') ? 'postgres' : planned.fault.startsWith('proxy-') ? 'proxy' : planned.fault === 'flood' ? 'flood' : node.name;
    if (busy.has(target)) {
      targets.history.add({ kind: 'fault', t, fault: 'skipped', detail: `${planned.fault}${onNode ? ` on ${node.name}` : ''}: still in an earlier fault` });
      continue;
    }
    const effect = (async () => {
      let detail: string | undefined;
      try {
        detail = await inject(planned, node, targets);
      } catch (error) {
        detail = `the injection failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      targets.history.add({ kind: 'fault', t, fault: planned.fault, ...(onNode ? { node: node.name } : {}), ...(detail ? { detail } : {}), until: Date.now() });
    })().finally(() => busy.delete(target));
    busy.set(target, effect);
  }
  await Promise.all(busy.values());
}

async function inject(planned: PlannedFault, node: ChaosNode, targets: FaultTargets): Promise<string | undefined> {
  switch (planned.fault) {
    case 'sigkill':
      await node.stopWith('SIGKILL', 5_000);
      await sleep(planned.amount);
      await node.start();
      return `down ${planned.amount} ms${failedStarts(node)}`;
    case 'sigstop': {
      // Stopped past its lease: the others must take over its tasks; woken, it must write nothing.
      const pauseMs = targets.leaseMs + 1_500;
      node.signal('SIGSTOP');
      await sleep(pauseMs);
      node.signal('SIGCONT');
      return `stopped ${pauseMs} ms`;
    }
    case 'sigterm': {
      const stopped = await node.stopWith('SIGTERM', 20_000);
      const startedAt = Date.now();
      await node.start();
      return `${stopped}, started again in ${Date.now() - startedAt} ms${failedStarts(node)}`;
    }
    case 'cut-listener':
    case 'cut-lease':
      return `${await terminateBackends(targets.postgres.url, node.name, planned.fault === 'cut-listener' ? 'mcp-tasks:listener:' : 'mcp-tasks:lease:')} connection(s) terminated`;
    case 'pg-restart-fast':
    case 'pg-restart-immediate':
      await targets.postgres.restart(planned.fault === 'pg-restart-fast' ? 'fast' : 'immediate', planned.amount);
      return `down ${planned.amount} ms`;
    case 'proxy-delay':
      targets.proxy.delay(planned.amount);
      await sleep(5_000);
      targets.proxy.delay(0);
      return `${planned.amount} ms per chunk for 5 s`;
    case 'proxy-stall':
      targets.proxy.stall(planned.amount);
      await sleep(planned.amount);
      return `stalled ${planned.amount} ms`;
    case 'proxy-drop':
      targets.proxy.drop();
      return undefined;
    case 'clock-skew':
      node.spec.skewSeconds = planned.amount;
      const stopped = await node.stopWith('SIGTERM', 20_000);
      await node.start();
      return `wall clock ${planned.amount >= 0 ? '+' : ''}${planned.amount} s (${stopped})${failedStarts(node)}`;
    case 'flood':
      await targets.flood(planned.amount);
      return `${planned.amount} task calls at once`;
  }
}

/** The starts that failed before the one that worked (the process exited before listening: its database out). */
function failedStarts(node: ChaosNode): string {
  return node.failedStarts > 0 ? `; ${node.failedStarts} start(s) exited first` : '';
}

/** Ends the named node's connections of one role (the LISTEN or the lease connection) from the server side. */
async function terminateBackends(url: string, nodeName: string, prefix: string): Promise<number> {
  const client = testClient({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(a.pid))::int AS n
         FROM pg_stat_activity a
         JOIN mcp_tasks.nodes n ON a.application_name = $2 || n.instance_id
        WHERE n.name = $1`,
      [nodeName, prefix],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}
