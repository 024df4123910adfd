#!/usr/bin/env node
// Writes migrations/*.sql (the source of truth) into @mcp-tasks/postgres as a TypeScript module, so
// the SQL travels inside the compiled code: a bundled application (esbuild, a single-file
// executable) has no migrations folder next to it. Run by `npm run build` and `prepare`; the output
// is committed so a clean clone type-checks before any script runs, and a test fails when it falls
// behind the files. `--check` only reports whether the module is current (exit 1 when stale).
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'migrations');
const target = path.join(root, 'packages/postgres/src/migrations/embedded-migrations.ts');
const FILE_PATTERN = /^(\d+)_[a-z0-9_]+\.sql$/;

const names = (await readdir(source)).filter((name) => name.endsWith('.sql')).sort();
const entries = [];
for (const name of names) {
  const match = FILE_PATTERN.exec(name);
  if (!match) throw new Error(`migration file ${name} does not match NNNN_name.sql`);
  const sql = await readFile(path.join(source, name), 'utf8');
  entries.push(`  { version: ${Number(match[1])}, name: ${JSON.stringify(name)}, sql: ${JSON.stringify(sql)} },`);
}
const text = `// Generated from migrations/*.sql by scripts/embed-migrations.mjs (npm run build). Do not edit:
// change the SQL files and rebuild.
import type { Migration } from './migration-files.js';

/** Every migration of this release, ordered by version. */
export const EMBEDDED_MIGRATIONS: readonly Migration[] = [
${entries.join('\n')}
];
`;

const current = await readFile(target, 'utf8').catch(() => '');
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error(`${path.relative(root, target)} is stale: run npm run build`);
    process.exit(1);
  }
} else if (current !== text) {
  await writeFile(target, text);
  console.log(`embedded ${entries.length} migration(s) into ${path.relative(root, target)}`);
}
