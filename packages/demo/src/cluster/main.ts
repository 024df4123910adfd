// `npm start`: a local cluster — PostgreSQL (embedded unless DATABASE_URL is set), three demo
// nodes as child processes, and a round-robin front on PORT (default 3000). Ctrl-C, SIGTERM,
// SIGHUP (the terminal closed) and a closed output (`npm start | tee log`, then Ctrl-C) all drain
// it the same way; the exit code is then 0, or 130 after Ctrl-C (SIGINT). It prints the database's
// URL for the operator commands (an embedded PostgreSQL's port and password are this run's own).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { defaultPostgresParentDir, EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedPostgresServer } from './embedded-postgres.js';
import { freePort, portIsFree } from './free-port.js';
import { startNodeProcess, type NodeProcess } from './node-process.js';
import { startRoundRobinFront, type RoundRobinFront } from './round-robin-front.js';

const env = process.env;
const host = env['HOST'] || '127.0.0.1';
const port = Number(env['PORT'] || 3000);
const nodeCount = Number(env['MCP_TASKS_NODES'] || 3);
const drainMs = Number(env['MCP_TASKS_DRAIN_MS'] || 10_000);
const log = (message: string) => console.log(`mcp-tasks cluster: ${message}`);
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

// A Ctrl-C in a terminal signals the whole foreground process group: PostgreSQL would shut down
// at once and the nodes could not drain. So the cluster runs in a process group of its own
// (a detached copy of this script), and this process only forwards the signal and the exit code.
// The IPC channel tells the cluster when this process is gone (killed, or its terminal closed).
if (env['MCP_TASKS_CLUSTER_SUPERVISED'] !== '1') {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    detached: true,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...env, MCP_TASKS_CLUSTER_SUPERVISED: '1' },
  });
  let received: NodeJS.Signals | undefined;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      received ??= signal;
      // The same signal, so the cluster says why it stops ("Ctrl-C", not "SIGTERM").
      child.kill(signal);
    });
  }
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const code = await new Promise<number>((resolve) => child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
  // Ctrl-C ends in 130 (128 + SIGINT), as the shell convention has it: `npm start`'s `sh -c`
  // reports it that way anyway once the terminal's SIGINT reached it.
  process.exit(code === 0 && received === 'SIGINT' ? 130 : code);
}

let embedded: EmbeddedPostgresServer | undefined;
let front: RoundRobinFront | undefined;
const nodes: NodeProcess[] = [];
let stopping: Promise<void> | undefined;

/** A start failure the user can act on: printed as its one-line message, exit code 1. */
class StartRefused extends Error {}

async function main(): Promise<void> {
  // Before anything starts: an earlier cluster still serving here is the usual cause.
  if (!(await portIsFree(port, host))) {
    throw new StartRefused(`port ${port} on ${host} is already in use (an earlier npm start still running?): stop that, or set PORT to another port.`);
  }
  let databaseUrl = env['DATABASE_URL'];
  if (!databaseUrl) {
    log('starting an embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      parentDir: defaultPostgresParentDir(env),
      name: 'cluster-pg',
      onError: (message) => console.error(`[postgres] ${message}`),
    });
    databaseUrl = embedded.url;
  }
  if (stopping) return;
  // Once, before the nodes start (each would otherwise queue on the migration lock).
  const store = await PostgresTaskStore.connect({ connectionString: databaseUrl, poolSize: 1, migrate: true });
  await store.close();
  if (stopping) return;
  // The operator console on every node, with a token of this run's own unless one is given: its
  // sessions are signed with it, so the front may send each request to any node.
  const consoleToken = env['MCP_TASKS_CONSOLE_TOKEN'] || randomBytes(18).toString('base64url');
  // The nodes' output is piped through this process: they log pretty lines when it has a terminal.
  const prettyLogs = process.stdout.isTTY && !env['MCP_TASKS_LOG_FORMAT'] ? { MCP_TASKS_LOG_FORMAT: 'pretty', FORCE_COLOR: '1' } : {};
  for (let i = 1; i <= nodeCount; i += 1) {
    const nodePort = await freePort(host);
    nodes.push(startNodeProcess(`node-${i}`, host, nodePort, { DATABASE_URL: databaseUrl, MCP_TASKS_MIGRATE: 'false', MCP_TASKS_CONSOLE_TOKEN: consoleToken, ...prettyLogs }));
  }
  await Promise.all(nodes.map((node) => node.ready));
  if (stopping) return;
  front = await startRoundRobinFront({ port, host, targets: nodes });
  for (const node of nodes) void node.exited.then((code) => !stopping && log(`${node.name} exited (code ${code}); the others keep serving`));
  log(`${nodes.length} nodes (${nodes.map((node) => `${node.name} :${node.port}`).join(', ')})`);
  log(`MCP at ${front.url}`);
  log(`try it (in another terminal): npx mcp-tasks call ${front.url} export --arg project=demo`);
  log(`or watch which node answers each step: npm run try -- ${front.url}`);
  // The operator commands need the database: an embedded one's URL (port, password) is this run's own.
  log(`operator commands (tasks list, nodes, status): DATABASE_URL=${shellWord(databaseUrl)} npx mcp-tasks nodes`);
  const consoleUrl = front.url.replace(/\/mcp$/, '/console');
  log(env['MCP_TASKS_CONSOLE_TOKEN'] ? `operator console: ${consoleUrl} (sign in with MCP_TASKS_CONSOLE_TOKEN)` : `operator console: ${consoleUrl}?token=${consoleToken}`);
  log('Ctrl-C stops it');
}

/** `text` as one word a POSIX shell reads back unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** Why the cluster stops, as the person who stopped it would say it. */
const SIGNAL_REASONS: Record<(typeof STOP_SIGNALS)[number], string> = {
  SIGINT: 'Ctrl-C',
  SIGTERM: 'SIGTERM (asked to stop)',
  SIGHUP: 'SIGHUP (the terminal closed)',
};

const starting = main();

function stop(reason: string): Promise<void> {
  stopping ??= (async () => {
    // Whatever main() is starting right now is stopped too, once it exists.
    await starting.catch(() => undefined);
    if (nodes.length > 0) log(`${reason}: draining the nodes`);
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

function shutdown(reason: string): void {
  stop(reason).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('mcp-tasks cluster: shutdown failed:', error);
      process.exit(1);
    },
  );
}

for (const signal of STOP_SIGNALS) process.on(signal, () => shutdown(SIGNAL_REASONS[signal]));
// EPIPE/EIO: whoever read the output is gone (`| tee` after Ctrl-C, a closed terminal). Later
// writes fail the same way and are dropped; the cluster drains as on a signal.
for (const stream of [process.stdout, process.stderr]) stream.on('error', (error: NodeJS.ErrnoException) => shutdown(`output closed (${error.code ?? error.message})`));
process.on('disconnect', () => shutdown('the launcher went away'));

starting.catch(async (error: unknown) => {
  if (error instanceof StartRefused || error instanceof EmbeddedPostgresError) console.error(`mcp-tasks cluster: ${error.message}`);
  else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') console.error(`mcp-tasks cluster: port ${port} on ${host} is already in use: stop what listens there, or set PORT to another port.`);
  else console.error('mcp-tasks cluster: start failed:', error);
  await stop('start failed').catch(() => undefined);
  process.exit(1);
});
