// `npm run chaos -- --seed N --minutes M [--nodes K]`: a fault-injection soak. A private
// PostgreSQL, K demo nodes (one of them behind a degrading TCP proxy, one without tokens when
// K >= 3), a mixed workload of both revisions, a fault schedule drawn from the seed, the history
// as JSON lines, and the checker's verdict; a violation prints the schedule and the shortest
// excerpt that shows it, and exits 1. `--check FILE` checks a saved history again.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/demo-process.js';
import { startChaosProxy } from './chaos-proxy.js';
import { ChaosNode, FAKETIME_LIBRARY, freePort } from './cluster.js';
import { injectFaults, planFaults, SUPERVISOR_RESTART } from './faults.js';
import { History, readHistory } from './history.js';
import { startObserver } from './observer.js';
import { startPrivatePostgres } from './private-postgres.js';
import { Random } from './random.js';
import { report } from './report.js';
import { Workload, type Owner } from './workload.js';

const LEASE_MS = 3_000;
const MAX_PER_PRINCIPAL = 12;

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

function number(name: string, fallback: number): number {
  const raw = option(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

async function main(): Promise<number> {
  const recheck = option('check');
  if (recheck) return report(readHistory(recheck), { file: recheck, schedule: undefined });
  const seed = option('seed') === undefined ? Math.floor(Math.random() * 2 ** 31) : Math.floor(number('seed', 1));
  const minutes = number('minutes', 1);
  const nodeCount = Math.floor(number('nodes', 3));
  const durationMs = Math.round(minutes * 60_000);
  const skew = existsSync(FAKETIME_LIBRARY);
  // `--compiled`: the nodes run the built demo (run `npm run build` first), which starts in seconds on a loaded machine.
  const compiled = process.argv.includes('--compiled');
  if (compiled && !existsSync(path.join(ROOT, 'packages/demo/dist/node/main.js'))) throw new Error('--compiled needs the built demo: run `npm run build` first');
  const schedule = planFaults(seed, durationMs, nodeCount, { skew });
  const outDir = path.join(ROOT, '.tmp', 'chaos');
  mkdirSync(outDir, { recursive: true });
  const file = option('out') ?? path.join(outDir, `seed-${seed}.jsonl`);
  console.log(`chaos: seed ${seed}, ${minutes} min, ${nodeCount} nodes${compiled ? ' (built)' : ''}, ${schedule.length} faults planned${skew ? '' : ' (no clock skew: libfaketime is not installed)'}; history in ${file}`);

  const history = new History(file);
  const cleanup: (() => Promise<unknown>)[] = [];
  // Nothing outlives its bound: past the run, its tail and a margin, everything is stopped.
  const watchdog = setTimeout(() => {
    console.error('chaos: the run outlived its bound; stopping everything');
    void Promise.allSettled(cleanup.map((stop) => stop())).then(() => process.exit(2));
  }, durationMs + 240_000);
  watchdog.unref();
  const stopSignal = () => void Promise.allSettled([...cleanup].reverse().map((stop) => stop())).then(() => process.exit(130));
  process.once('SIGINT', stopSignal);
  process.once('SIGTERM', stopSignal);
  // A bug of the harness itself must not leave nodes and a PostgreSQL behind.
  const crash = (error: unknown) => {
    console.error('chaos: the harness crashed:', error);
    void Promise.allSettled([...cleanup].reverse().map((stop) => stop())).then(() => process.exit(2));
  };
  process.once('uncaughtException', crash);
  process.once('unhandledRejection', crash);
  try {
    const postgres = await startPrivatePostgres();
    cleanup.push(() => postgres.destroy());
    const proxy = await startChaosProxy(postgres.port);
    cleanup.push(() => proxy.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-chaos-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const tokensFile = path.join(dir, 'tokens.json');
    const tokens = { alice: 'tok-alice', bob: 'tok-bob', carol: 'tok-carol' };
    writeFileSync(tokensFile, JSON.stringify(Object.fromEntries(Object.entries(tokens).map(([sub, token]) => [token, { sub, clientId: 'chaos', scopes: ['export'] }]))));
    const env = {
      MCP_TASKS_LEASE_MS: String(LEASE_MS),
      MCP_TASKS_POLL_INTERVAL_MS: '1000',
      MCP_TASKS_MAX_RUNS: '3',
      MCP_TASKS_MAX_PER_PRINCIPAL: String(MAX_PER_PRINCIPAL),
      MCP_TASKS_DRAIN_MS: '1500',
      MCP_TASKS_POOL_SIZE: '4',
    };
    const nodes: ChaosNode[] = [];
    for (let i = 0; i < nodeCount; i++) {
      const databaseUrl = i === 0 ? `postgres://postgres@127.0.0.1:${proxy.port}/postgres` : postgres.url;
      const anonymous = nodeCount >= 3 && i === nodeCount - 1;
      nodes.push(new ChaosNode({ name: `chaos-${i + 1}`, databaseUrl, compiled, ...(anonymous ? {} : { tokensFile }) }, await freePort(), env));
    }
    let ending = false;
    cleanup.push(() => {
      ending = true;
      return Promise.all(nodes.map((node) => node.stopWith('SIGKILL', 5_000)));
    });
    for (const node of nodes) {
      node.onCrash = (crash) => {
        history.add({ kind: 'node-crash', ...crash });
        console.error(`chaos: ${crash.node} crashed (exit ${crash.code ?? crash.signal}):\n${crash.output}`);
        // A supervisor's restart, so the rest of the run still has the node.
        // Recorded as an outage of the node's, as a kill is: the checker then expects its tasks
        // taken over, and allows for it when every other node is out.
        if (!ending)
          setTimeout(() => {
            void node
              .start()
              .catch(() => {})
              .finally(() => history.add({ kind: 'fault', t: crash.t, fault: SUPERVISOR_RESTART, node: node.name, detail: 'after a crash', until: Date.now() }));
          }, 1_000);
      };
    }
    // Together: the migration runner's advisory lock lets one apply them while the others wait.
    await Promise.all(nodes.map((node) => node.start()));

    const tokenNodes = nodes.filter((node) => node.spec.tokensFile);
    const openNodes = nodes.filter((node) => !node.spec.tokensFile);
    const owners: Owner[] = [
      { label: 'alice', token: tokens.alice, nodes: tokenNodes },
      { label: 'bob', token: tokens.bob, nodes: tokenNodes },
      { label: 'carol', token: tokens.carol, nodes: tokenNodes },
      ...(openNodes.length > 0 ? [{ label: 'anonymous', token: undefined, nodes: openNodes }] : []),
    ];
    history.add({
      kind: 'run',
      t: Date.now(),
      seed,
      minutes,
      nodes: nodeCount,
      nodeNames: nodes.map((node) => node.name),
      leaseMs: LEASE_MS,
      maxPerPrincipal: MAX_PER_PRINCIPAL,
      owners: owners.map((owner) => ({ label: owner.label, sub: owner.token === undefined ? null : owner.label })),
    });

    const observer = startObserver(postgres.url, history, 500);
    const startedAt = Date.now();
    const stopAt = startedAt + durationMs - 15_000;
    const workload = new Workload({ history, owners, stopAt: Math.max(stopAt, startedAt + 10_000), giveUpAt: startedAt + durationMs });
    const random = new Random(seed);
    const clientOwners = [owners[0]!, owners[1]!, owners.at(-1)!, owners[2]!, owners[0]!];
    const clients = clientOwners.map((owner, i) => workload.client(`c${i + 1}-${owner.label}`, random.fork(), owner));
    const floodRandom = random.fork();
    const faults = injectFaults(
      schedule,
      { history, nodes, postgres, proxy, proxiedNode: 0, leaseMs: LEASE_MS, flood: (count) => workload.flood(owners[2]!, count, floodRandom) },
      startedAt,
      stopAt,
    );
    await Promise.all([...clients, faults]);
    // Settle: every node up and on time, then long enough for leases and claims to do their work.
    for (const node of nodes) node.spec.skewSeconds = 0;
    await Promise.all(nodes.map((node) => (node.up ? undefined : node.start())));
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2 + 3_000));
    await observer.stop();
    await observer.final();
    history.add({ kind: 'end', t: Date.now() });
  } catch (error) {
    console.error('chaos: the run failed:', error);
    return 2;
  } finally {
    await Promise.allSettled([...cleanup].reverse().map((stop) => stop()));
    clearTimeout(watchdog);
  }
  return report(history.events, { file, schedule });
}

process.exit(await main());
