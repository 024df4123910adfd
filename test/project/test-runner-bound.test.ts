// `npm test` cannot hang: a test that never settles, or a file that never finishes loading, is cut
// off by the per-test timeout, and should that not end it, by the run's watchdog. Either way the
// run exits non-zero, says why, and leaves no process behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { ROOT } from '../support/demo-process.js';
import { within } from '../support/within.js';

const IN_TEST = 'test/fixtures/hangs-in-test.fixture.ts';
const AT_LOAD = 'test/fixtures/hangs-at-load.fixture.ts';

/** Whether `pid` still runs (a zombie waiting for its new parent to reap it does not). */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return !/^\d+ \(.*\) Z/.test(stat);
}

async function assertGone(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    // A killed process may take a moment to be reaped.
    const deadline = Date.now() + 5_000;
    while ((await alive(pid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await alive(pid), false, `process ${pid} outlived the run`);
  }
}

/** Runs scripts/test.mjs on hanging fixtures with the given bounds. */
async function runHungFixtures(t: TestContext, fixtures: readonly string[], bounds: { testMs: number; runMs: number }) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-tasks-hang-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pidFile = path.join(dir, 'pids');
  // Without this the inner `node --test` would take itself for a nested run and skip its files.
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  const started = Date.now();
  const run = spawn(process.execPath, ['scripts/test.mjs', ...fixtures], {
    cwd: ROOT,
    env: {
      ...env,
      MCP_TASKS_TEST_TIMEOUT_MS: String(bounds.testMs),
      MCP_TASKS_TEST_RUN_TIMEOUT_MS: String(bounds.runMs),
      HANG_FIXTURE_PID_FILE: pidFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => run.kill('SIGKILL'));
  let output = '';
  run.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  run.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await within(new Promise<number | null>((resolve) => run.on('close', resolve)), 45_000, 'the hung run to be cut off');
  const pids = (await readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
  return { code, output, tookMs: Date.now() - started, pids };
}

test('a test that never settles fails the run at the per-test timeout and leaves no process', { timeout: 60_000 }, async (t) => {
  const run = await runHungFixtures(t, [IN_TEST, AT_LOAD], { testMs: 5_000, runMs: 60_000 });
  assert.notEqual(run.code, 0, run.output);
  assert.ok(run.tookMs < 30_000, `took ${run.tookMs} ms`);
  // The run ends with its failures again (scripts/failures-reporter.mjs): CI keeps only the tail.
  const summaryAt = run.output.lastIndexOf('# 2 failed test(s):');
  assert.ok(summaryAt > 0, run.output);
  assert.equal(run.output.slice(0, summaryAt).match(/timed out after 5000ms/g)?.length, 2, run.output);
  const summary = run.output.slice(summaryAt);
  assert.match(summary, /# FAILED test\/fixtures\/hangs-in-test\.fixture\.ts\n#   at test\/fixtures\/hangs-in-test\.fixture\.ts:1\n#     test timed out after 5000ms/);
  assert.match(summary, /# FAILED test\/fixtures\/hangs-at-load\.fixture\.ts\n#   at test\/fixtures\/hangs-at-load\.fixture\.ts:1\n#     test timed out after 5000ms/);
  assert.equal(run.pids.length, 4, 'both fixtures ran');
  await assertGone(run.pids);
});

test('a run that outlasts its watchdog is killed with its whole process tree and fails', { timeout: 60_000 }, async (t) => {
  const run = await runHungFixtures(t, [AT_LOAD], { testMs: 600_000, runMs: 10_000 });
  assert.notEqual(run.code, 0, run.output);
  assert.ok(run.tookMs < 30_000, `took ${run.tookMs} ms`);
  assert.match(run.output, /did not finish within 10000 ms/, 'the watchdog says why it killed the run');
  assert.equal(run.pids.length, 2, 'the fixture ran');
  await assertGone(run.pids);
});
