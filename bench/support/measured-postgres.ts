// A PostgreSQL server of the scenario's own, so that its WAL, its processes' CPU and its statement
// counts are the scenario's alone (the machine's server is shared). Production's WAL settings are
// kept (full_page_writes on, so a page's first change after a checkpoint writes the whole page);
// only fsync is off, which changes no byte of WAL, only when it reaches the disk.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './demo-nodes.js';
import { cpuMs } from './proc-stats.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

export interface MeasuredPostgres {
  /** The superuser URL of the `postgres` database. */
  readonly url: string;
  /** User plus system CPU of the server's processes (the postmaster and its children), ms. */
  cpuMs(): Promise<number>;
  /** Stops the server and removes its folder. Idempotent. */
  destroy(): Promise<void>;
}

/** The newest PostgreSQL server binaries installed the Debian way (/usr/lib/postgresql/<major>/bin), if any. */
export function serverBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name) && existsSync(path.join(root, name, 'bin', 'initdb'))) : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : path.join(root, newest, 'bin');
}

function binaries(): string {
  const found = serverBinaries();
  if (!found) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql/<major>/bin');
  return found;
}

async function pgCommand(binary: string, args: string[]): Promise<void> {
  const command = path.join(binaries(), binary);
  if (asRoot) await run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 });
  else await run(command, args, { timeout: 60_000 });
}

/** Starts a server with pg_stat_statements loaded, `max_connections` 100 and `settings` on top. */
export async function startMeasuredPostgres(settings: Record<string, string> = {}): Promise<MeasuredPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-capacity-pg-'));
  chmodSync(dir, 0o777);
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  await pgCommand('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const all = { listen_addresses: '127.0.0.1', max_connections: '100', fsync: 'off', shared_preload_libraries: 'pg_stat_statements', ...settings };
  const options = [`-p ${port}`, `-k ${dir}`, ...Object.entries(all).map(([name, value]) => `-c ${name}=${value}`)].join(' ');
  await pgCommand('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async cpuMs() {
      let total = await cpuMs(postmaster);
      for (const entry of await readdir('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
        // Field 4 (after the parenthesised name) is the parent pid.
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) total += await cpuMs(Number(entry)).catch(() => 0);
      }
      return total;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
