import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { EMBEDDED_MIGRATIONS } from './embedded-migrations.js';

/** One numbered SQL file. */
export interface Migration {
  /** The number the file name starts with; applied in ascending order. */
  readonly version: number;
  /** The file name, e.g. `0001_tasks.sql`. */
  readonly name: string;
  readonly sql: string;
}

const FILE_PATTERN = /^(\d+)_[a-z0-9_]+\.sql$/;

/**
 * The migrations of this release. Without `directory`, the copy compiled into the package (so a
 * bundled application needs no files beside it); with it, the `NNNN_name.sql` files found there,
 * ordered by version, refusing misnamed files and two files with one version.
 */
export async function loadMigrations(directory?: string): Promise<Migration[]> {
  if (directory === undefined) return [...EMBEDDED_MIGRATIONS];
  const names = (await readdir(directory)).filter((name) => name.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const name of names) {
    const match = FILE_PATTERN.exec(name);
    if (!match) throw new Error(`mcp-tasks: migration file ${name} does not match NNNN_name.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`mcp-tasks: two migrations share version ${version}`);
    migrations.push({ version, name, sql: await readFile(path.join(directory, name), 'utf8') });
  }
  return migrations.sort((a, b) => a.version - b.version);
}
