import { chown, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const OWNER_FILE = 'owner.pid';
const LEGACY_NAME = /^(\d+)-[0-9a-f]{6}$/;

/** A private directory of one embedded-PostgreSQL run: its data, and the binaries when they had to be copied. */
export interface RunDirectory {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Creates `<parent>/<prefix>-XXXXXX` (mode 0700, owned by `owner` when given) and records this
 * process's pid in it, after removing the directories of earlier runs whose recorded pid is dead
 * (a launcher that was SIGKILLed or lost its terminal before it could clean up). A PostgreSQL
 * still running in such a directory shuts itself down once its lock file is gone.
 */
export async function createRunDirectory(parent: string, prefix: string, owner?: { uid: number; gid: number }): Promise<RunDirectory> {
  await removeStaleRunDirectories(parent, prefix);
  const dir = await mkdtemp(path.join(parent, `${prefix}-`));
  await writeFile(path.join(dir, OWNER_FILE), `${process.pid}\n`);
  if (owner) await chown(dir, owner.uid, owner.gid);
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Removes `<parent>/<prefix>-*` directories whose recorded owner pid no longer runs; returns their paths. */
export async function removeStaleRunDirectories(parent: string, prefix: string): Promise<string[]> {
  const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(`${prefix}-`)) continue;
    const dir = path.join(parent, entry.name);
    const recorded = (await readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => '')).trim();
    // Earlier versions named the directory `<prefix>-<pid>-<hex>` and recorded nothing else.
    const pid = Number(recorded || (LEGACY_NAME.exec(entry.name.slice(prefix.length + 1))?.[1] ?? ''));
    // No pid: not ours (or still being created by a concurrent run); leave it.
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
