// `npm start`: a local cluster — PostgreSQL (embedded unless DATABASE_URL is set), three demo
// nodes as child processes, and a round-robin front on PORT (default 3000). Ctrl-C drains it all.
import { fileURLToPath } from 'node:url';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { defaultPostgresParentDir, freePort, startEmbeddedPostgres, type EmbeddedPostgresServer } from './embedded-postgres.js';
import { startNodeProcess, type NodeProcess } from './node-process.js';
import { startRoundRobinFront, type RoundRobinFront } from './round-robin-front.js';

const env = process.env;
const host = env['HOST'] || '127.0.0.1';
const port = Number(env['PORT'] || 3000);
const nodeCount = Number(env['MCP_TASKS_NODES'] || 3);
const drainMs = Number(env['MCP_TASKS_DRAIN_MS'] || 10_000);
const log = (message: string) => console.log(`mcp-tasks cluster: ${message}`);

// A Ctrl-C in a terminal signals the whole foreground process group: PostgreSQL would shut down
// at once and the nodes could not drain. So the cluster runs in a process group of its own
// (a detached copy of this script), and this process only forwards the signal and the exit code.
if (env['MCP_TASKS_CLUSTER_SUPERVISED'] !== '1') {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    detached: true,
    stdio: 'inherit',
    env: { ...env, MCP_TASKS_CLUSTER_SUPERVISED: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'));
  const code = await new Promise<number>((resolve) => child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
  process.exit(code);
}

let embedded: EmbeddedPostgresServer | undefined;
let front: RoundRobinFront | undefined;
const nodes: NodeProcess[] = [];
let stopping: Promise<void> | undefined;

async function main(): Promise<void> {
  let databaseUrl = env['DATABASE_URL'];
  if (!databaseUrl) {
    const packageDir = fileURLToPath(new URL('../../', import.meta.url));
    log('starting an embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      parentDir: defaultPostgresParentDir(env),
      name: 'cluster-pg',
      onError: (message) => console.error(`[postgres] ${message}`),
    });
    databaseUrl = embedded.url;
  }
  // Once, before the nodes start (each would otherwise queue on the migration lock).
  const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, poolSize: 1, migrate: true, sweepIntervalMs: 0 });
  await store.close();
  for (let i = 1; i <= nodeCount; i += 1) {
    const nodePort = await freePort(host);
    nodes.push(startNodeProcess(`node-${i}`, host, nodePort, { DATABASE_URL: databaseUrl }));
  }
  await Promise.all(nodes.map((node) => node.ready));
  front = await startRoundRobinFront({ port, host, targets: nodes });
  for (const node of nodes) void node.exited.then((code) => !stopping && log(`${node.name} exited (code ${code}); the others keep serving`));
  log(`${nodes.length} nodes (${nodes.map((node) => `${node.name} :${node.port}`).join(', ')})`);
  log(`MCP at ${front.url}`);
}

function stop(reason: string): Promise<void> {
  stopping ??= (async () => {
    log(`${reason}: draining the nodes`);
    await front?.close();
    const codes = await Promise.all(nodes.map((node) => node.stop(drainMs + 5_000)));
    if (codes.some((code) => code !== 0)) log(`node exit codes: ${codes.join(', ')}`);
    if (embedded) {
      log('stopping PostgreSQL');
      await embedded.stop();
    }
  })();
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('mcp-tasks cluster: shutdown failed:', error);
        process.exit(1);
      },
    );
  });
}

main().catch(async (error: unknown) => {
  console.error('mcp-tasks cluster: start failed:', error);
  await stop('start failed').catch(() => undefined);
  process.exit(1);
});
