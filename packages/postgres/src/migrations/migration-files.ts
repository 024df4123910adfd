import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * Where the migrations are: the top-level `migrations/` of the repository when this package sits
 * in it (the source of truth during development), else the copy shipped inside the package.
 * Only the repository layout is trusted for the first, so an application's own `migrations/`
 * folder is never picked up.
 */
export function migrationsDirectory(): string {
  const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
  const repositoryRoot = path.resolve(packageRoot, '../..');
  const inRepository = path.resolve(repositoryRoot, 'packages', 'postgres') === path.resolve(packageRoot);
  const repositoryMigrations = path.join(repositoryRoot, 'migrations');
  if (inRepository && existsSync(repositoryMigrations)) return repositoryMigrations;
  return path.join(packageRoot, 'migrations');
}

/** Every migration in `directory`, ordered by version; refuses gaps in naming and duplicate versions. */
export async function loadMigrations(directory = migrationsDirectory()): Promise<Migration[]> {
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
