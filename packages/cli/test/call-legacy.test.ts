// `mcp-tasks call` against a server of 2025-11-25 only (a demo node behind a front that refuses
// 2026-07-28 as a 1.x SDK server does), not on a terminal: the call becomes a 2025-11-25 task
// (params.task), is followed by tasks/get and tasks/result, and its input is answered the way
// that revision answers it (a POSTed response), from the lines on stdin.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { spawnDemoNode, type DemoProcess } from '../../../test/support/demo-process.js';
import { rpc } from '../../../test/support/server-raw-client.js';
import { startLegacyOnlyFront, type LegacyOnlyFront } from './support/legacy-only-front.js';
import { mcpTasks } from './support/run-mcp-tasks.js';

describe('mcp-tasks call against a 2025-11-25 server, not on a terminal', { timeout: 120_000 }, () => {
  let demo: DemoProcess;
  let front: LegacyOnlyFront;
  before(async () => {
    // An in-memory node: no DATABASE_URL (the test runner's would be shared by every file).
    demo = await spawnDemoNode('call-legacy-test', { DATABASE_URL: '', MCP_TASKS_POLL_INTERVAL_MS: '100' });
    front = await startLegacyOnlyFront(demo.url);
  });
  after(async () => {
    await front?.close();
    demo?.child.kill('SIGKILL');
  });
  beforeEach(() => front.seen.splice(0));

  it('follows a task created with params.task to its result on stdout, one line per state on stderr, exit 0', async () => {
    const run = await mcpTasks(['call', front.url, 'slow_compute', '--args', '{"seconds": 0.3}']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Computed result after 0.3s\n');
    assert.match(run.stderr, /^Task (\S+) created\.\ntask \1: working\n(task \1: working.*\n)*task \1: completed\n$/);
    assert.deepEqual(
      front.seen.filter((method) => method !== 'tasks/get'),
      ['initialize', 'notifications/initialized', 'tools/list', 'tools/call+task', 'tasks/result'],
    );
    assert.ok(front.seen.includes('tasks/get'));
  });

  it('shows each progress step of a task (n/total) from tasks/get', async () => {
    const run = await mcpTasks(['call', front.url, 'export', '--arg', 'project=demo', '--arg', 'files=3', '--arg', 'delayMs=300']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Exported 3 of 3 files.\n');
    for (const step of ['1/3', '2/3']) assert.match(run.stderr, new RegExp(`working \\(${step}\\)`));
  });

  it("answers a task's elicitation, asked on the tasks/result stream, from stdin with a POSTed response", async () => {
    const accepted = await mcpTasks(['call', front.url, 'confirm_delete', '--arg', 'filename=r.pdf'], {}, { input: 'a\ny\n' });
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal(accepted.stdout, 'Deleted r.pdf.\n');
    assert.match(accepted.stderr, /The server asks: Delete r\.pdf\?/);
    assert.ok(front.seen.includes('response'), front.seen.join(' '));
    assert.ok(!front.seen.includes('tasks/update'));
    const declined = await mcpTasks(['call', front.url, 'confirm_delete', '--arg', 'filename=r.pdf'], {}, { input: 'd\n' });
    assert.equal(declined.stdout, 'Kept r.pdf.\n', declined.stderr);
  });

  it('answers the input prepare asks for at the start of the task, as that revision runs it', async () => {
    const run = await mcpTasks(['call', front.url, 'test_tool_with_task'], {}, { input: 'a\nAnn\n' });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /What is your name\?/);
    assert.equal(run.stdout, 'Hello, Ann!\n');
  });

  it('an ordinary tool is called without params.task and prints its text result', async () => {
    const run = await mcpTasks(['call', front.url, 'greet', '--arg', 'name=Ann']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Hello, Ann!\n');
    assert.ok(front.seen.includes('tools/call') && !front.seen.includes('tools/call+task'), front.seen.join(' '));
  });

  it('a failed task prints its JSON-RPC error (from tasks/result) and exits 1; a tool error (isError) exits 5', async () => {
    const failed = await mcpTasks(['call', front.url, 'protocol_error_job']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /mcp-tasks: task \S+ failed: The job hit an internal protocol error \(JSON-RPC error -32603\)/);
    const toolError = await mcpTasks(['call', front.url, 'failing_job']);
    assert.equal(toolError.code, 5, toolError.stderr);
    assert.match(toolError.stderr, /the tool reported an error: The job failed/);
  });

  it('Ctrl-C (SIGINT) sends tasks/cancel and exits 130 once the task reads cancelled', async () => {
    const { spawn } = await import('node:child_process');
    const { bin } = await import('./support/run-mcp-tasks.js');
    const child = spawn(process.execPath, [bin, 'call', front.url, 'export', '--arg', 'project=p', '--arg', 'files=500', '--arg', 'delayMs=100'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const start = Date.now();
      while (!/working \([1-9]\d*\/500\)/.test(stderr)) {
        if (Date.now() - start > 15_000) throw new Error(`no progress shown:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const taskId = /Task (\S+) created\./.exec(stderr)![1]!;
      child.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 15_000))]);
      assert.equal(code, 130, stderr);
      assert.match(stderr, new RegExp(`Task ${taskId} cancelled\\.`));
      assert.ok(front.seen.includes('tasks/cancel'));
      assert.equal((await rpc(demo.url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
