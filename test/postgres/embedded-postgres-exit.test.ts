// An embedded PostgreSQL started by a test file does not outlive it when the test runner kills the
// file (as it does when the file times out): no after hook runs then.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/demo-process.js';
import { within } from '../support/within.js';

test('an embedded PostgreSQL stops when the test process that started it is killed by a signal', { timeout: 90_000 }, async (t) => {
  // Under the repository, not the system temp dir: as root the server runs as `postgres`, which must reach it.
  const parent = await mkdtemp(path.join(ROOT, '.tmp', 'exit-'));
  t.after(() => rm(parent, { recursive: true, force: true }));
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'test/fixtures/embedded-postgres-exits.fixture.ts', parent], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed = new Promise((resolve) => child.on('close', resolve));
  await within(
    (async () => {
      while (!/postmaster \d+/.test(output)) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    60_000,
    'the fixture to start PostgreSQL',
  );
  const pid = Number(/postmaster (\d+)/.exec(output)?.[1]);
  assert.ok(pid > 0, `no postmaster pid in ${JSON.stringify(output)}`);
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  });
  child.kill('SIGTERM');
  await within(closed, 10_000, 'the fixture to end on SIGTERM');
  const deadline = Date.now() + 10_000;
  while (running(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(running(pid), false, `postmaster ${pid} outlived the process that started it`);
});

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
