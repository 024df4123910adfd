import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Where Debian's `pgbouncer` package installs the binary (`.ci/run` installs it when missing). */
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) => existsSync(file));

/** A PgBouncer of the test's own in transaction mode, in front of the server of a test database. */
export interface PgBouncer {
  /** `url` with host and port swapped for the pooler's (same database, user and parameters). */
  readonly url: string;
  readonly port: number;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** Why PgBouncer cannot run here, or undefined when it can (for `test(..., { skip })`). */
export function pgBouncerMissing(): string | undefined {
  if (!PGBOUNCER) return 'pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'pgbouncer refuses to run as root and there is no postgres user to run it as';
  return undefined;
}

/**
 * Starts PgBouncer in transaction mode (the mode of most production poolers) in front of the
 * server of `url`, with its defaults otherwise: no `max_prepared_statements` (1.18 has none), no
 * `ignore_startup_parameters`. Every database name is forwarded, so the test's own database works.
 */
export async function startPgBouncer(url: string, options: { readonly poolSize?: number } = {}): Promise<PgBouncer> {
  if (!PGBOUNCER) throw new Error(pgBouncerMissing());
  const target = new URL(url);
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-pgbouncer-'));
  // PgBouncer refuses to run as root: as root it is started as the postgres user, who must read the files.
  await chmod(dir, 0o755);
  const user = decodeURIComponent(target.username || 'postgres');
  await writeFile(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir =`,
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 10}`,
      'max_client_conn = 200',
      'server_reset_query =',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = [path.join(dir, 'pgbouncer.ini')];
  if (process.getuid?.() === 0) args.unshift('-u', 'postgres');
  const child: ChildProcess = spawn(PGBOUNCER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000).unref())]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, exited, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  const pooled = new URL(url);
  pooled.hostname = '127.0.0.1';
  pooled.port = String(port);
  return { url: pooled.toString(), port, output: () => output, stop };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number, exited: Promise<void>, output: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`pgbouncer exited at start:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port} within 10 s:\n${output()}`);
}
