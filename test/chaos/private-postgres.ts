// A PostgreSQL server of the soak's own (initdb in a temporary folder), so that it can be
// restarted, fast or immediately, without touching the machine's server or its other users.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './cluster.js';

const run = promisify(execFile);
const bin = (): string => process.env['MCP_TASKS_CHAOS_PG_BIN'] ?? installedBinaries();

/** The binaries of the newest PostgreSQL installed the Debian way (/usr/lib/postgresql/<major>/bin). */
function installedBinaries(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name) && existsSync(path.join(root, name, 'bin', 'initdb'))) : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql/<major>/bin; set MCP_TASKS_CHAOS_PG_BIN');
  return path.join(root, newest, 'bin');
}

export interface PrivatePostgres {
  readonly port: number;
  /** The superuser URL of the `postgres` database. */
  readonly url: string;
  /** Stops with `mode` (`fast`: sessions are ended cleanly; `immediate`: a crash, recovery on start), waits `downMs`, starts again. */
  restart(mode: 'fast' | 'immediate', downMs: number): Promise<void>;
  /** Stops the server (immediately) and removes its folder. Idempotent. */
  destroy(): Promise<void>;
}

/** Root cannot run PostgreSQL: then every pg_ctl/initdb runs as the `postgres` OS user. */
const asRoot = process.getuid?.() === 0;

async function pg(binary: string, args: string[]): Promise<void> {
  const command = path.join(bin(), binary);
  if (asRoot) await run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 });
  else await run(command, args, { timeout: 60_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-chaos-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const port = await freePort();
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  // fsync off keeps a 2-core machine responsive and loses nothing here (the soak crashes
  // PostgreSQL, never the machine). synchronous_commit stays on: off, an immediate stop loses
  // commits already acknowledged, and the soak reported tasks created and then missing.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off -c full_page_writes=off`;
  const start = () => pg('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
  const stop = (mode: string) => pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  await start();
  let destroyed = false;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode, downMs) {
      await stop(mode);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
