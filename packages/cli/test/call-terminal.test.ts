// `mcp-tasks call` on a pseudo-terminal (tmux), against a real demo node process: the live
// progress bar, questions answered by typed keys, and Ctrl-C.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawnDemoNode, type DemoProcess } from '../../../test/support/demo-process.js';
import { rpc } from '../../../test/support/server-raw-client.js';
import { bin } from './support/run-mcp-tasks.js';
import { startLegacyOnlyFront, type LegacyOnlyFront } from './support/legacy-only-front.js';
import { startTmux, tmuxUnavailable, type TmuxSession } from './support/tmux-session.js';

const skip = tmuxUnavailable();

describe('mcp-tasks call on a terminal', { timeout: 120_000, skip }, () => {
  let demo: DemoProcess;
  before(async () => {
    // An in-memory node: no DATABASE_URL (the test runner's would be shared by every file).
    demo = await spawnDemoNode('call-terminal-test', { DATABASE_URL: '', MCP_TASKS_POLL_INTERVAL_MS: '50' });
  });
  after(() => demo?.child.kill('SIGKILL'));

  async function call(t: { after(fn: () => Promise<void>): void }, ...args: string[]): Promise<TmuxSession> {
    const session = await startTmux([process.execPath, bin, 'call', demo.url, ...args]);
    t.after(() => session.close());
    return session;
  }

  it('draws a progress bar that moves as the task reports n/total, then prints the result', async (t) => {
    const session = await call(t, 'export', '--arg', 'project=demo', '--arg', 'files=5', '--arg', 'delayMs=200');
    const bars = await barsUntilResult(session, 5);
    assert.ok(bars.size >= 2, `the bar moved through ${[...bars].join(', ') || 'nothing'}`);
    assert.equal(await session.exitCode(10_000), 0);
    const screen = await session.screen();
    assert.match(screen, /Exported 5 of 5 files\./);
    assert.doesNotMatch(screen, /\[#+-*\]/, 'the bar is gone once the result is printed');
  });

  it('asks a task\'s elicitation in the terminal and sends what is typed', async (t) => {
    const session = await call(t, 'confirm_delete', '--arg', 'filename=report.pdf');
    await session.until(/The server asks: Delete report\.pdf\?\nAnswer\? \[a\]ccept, \[d\]ecline, \[c\]ancel/, 15_000);
    await session.keys('a', 'Enter');
    await session.until(/confirm \(Delete the file\) \* \[y\/n\]:\s*$/, 5_000);
    await session.keys('x', 'Enter');
    await session.until(/Type y or n\./, 5_000);
    await session.keys('y', 'Enter');
    assert.equal(await session.exitCode(10_000), 0, await session.screen());
    assert.match(await session.screen(), /Deleted report\.pdf\./);
  });

  it('shows the time elapsed on the bar, then the rate and the time left once the task moved on', async (t) => {
    const session = await call(t, 'export', '--arg', 'project=demo', '--arg', 'files=500', '--arg', 'delayMs=100');
    await session.until(/\[#*-+\] \d+% \d+\/500 \(\d+(ms|s) elapsed/, 15_000);
    const screen = await session.until(/\[#*-+\] \d+% \d+\/500 \(\d+s elapsed, [\d.]+\/s, ETA \d+(s|m\d\ds)\)/, 15_000);
    const [, rate] = /, ([\d.]+)\/s, ETA/.exec(screen)!;
    // 100 ms a file: about 10 a second, whatever the machine's load does to it.
    assert.ok(Number(rate) > 0 && Number(rate) <= 12, `rate ${rate}/s`);
    await session.keys('C-c');
    assert.equal(await session.exitCode(15_000), 130, await session.screen());
  });

  it('Ctrl-C cancels the running task, waits until it reads cancelled, and exits 130', async (t) => {
    const session = await call(t, 'export', '--arg', 'project=demo', '--arg', 'files=500', '--arg', 'delayMs=100');
    const shown = await session.until(/\[#*-+\] \d+% [1-9]\d*\/500/, 15_000);
    const taskId = /Task (\S+) created\./.exec(shown)![1]!;
    await session.keys('C-c');
    assert.equal(await session.exitCode(15_000), 130, await session.screen());
    assert.match(await session.screen(), new RegExp(`Cancelling task ${taskId}; waiting up to 10 s[\\s\\S]*Task ${taskId} cancelled\\.`));
    const task = await rpc(demo.url, 'tasks/get', { taskId });
    assert.equal(task.result?.['status'], 'cancelled');
  });

  it('takes the question back at once when the task is cancelled elsewhere while it is open', async (t) => {
    const session = await call(t, 'confirm_delete', '--arg', 'filename=report.pdf');
    const shown = await session.until(/Answer\? \[a\]ccept, \[d\]ecline, \[c\]ancel/, 15_000);
    const taskId = /Task (\S+) created\./.exec(shown)![1]!;
    const cancelled = Date.now();
    const cancel = await rpc(demo.url, 'tasks/cancel', { taskId });
    assert.ok(cancel.result, JSON.stringify(cancel));
    await session.until(/The task ended while its question was open: cancelled\./, 5_000);
    assert.equal(await session.exitCode(5_000), 1, await session.screen());
    assert.ok(Date.now() - cancelled < 5_000, 'noticed within a poll interval or so, without a key pressed');
    assert.match(await session.screen(), new RegExp(`task ${taskId} was cancelled`));
  });

  it('Ctrl-C while a question is open cancels the task too', async (t) => {
    await ctrlCWhileAsked(await call(t, 'confirm_delete', '--arg', 'filename=report.pdf'), demo.url);
  });

  it('Ctrl-C after a question was answered still cancels the task (the terminal is given back)', async (t) => {
    const session = await call(t, 'confirm_delete', '--arg', 'filename=report.pdf', '--arg', 'delayMs=3000');
    const shown = await session.until(/Answer\? \[a\]ccept/, 15_000);
    const taskId = /Task (\S+) created\./.exec(shown)![1]!;
    await session.keys('a', 'Enter');
    await session.until(/\[y\/n\]:\s*$/, 5_000);
    await session.keys('y', 'Enter');
    // The answer is in; the tool now sleeps for 3 s before it finishes.
    await session.until(/\[y\/n\]: y\n.*working/, 5_000);
    await session.keys('C-c');
    assert.equal(await session.exitCode(15_000), 130, await session.screen());
    assert.equal((await rpc(demo.url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
  });
});

describe('mcp-tasks call on a terminal, against a 2025-11-25 server', { timeout: 120_000, skip }, () => {
  let demo: DemoProcess;
  let front: LegacyOnlyFront;
  before(async () => {
    demo = await spawnDemoNode('call-terminal-legacy-test', { DATABASE_URL: '', MCP_TASKS_POLL_INTERVAL_MS: '50' });
    front = await startLegacyOnlyFront(demo.url);
  });
  after(async () => {
    await front?.close();
    demo?.child.kill('SIGKILL');
  });

  async function call(t: { after(fn: () => Promise<void>): void }, ...args: string[]): Promise<TmuxSession> {
    const session = await startTmux([process.execPath, bin, 'call', front.url, ...args]);
    t.after(() => session.close());
    return session;
  }

  it('asks the elicitation that arrives on the tasks/result stream and sends what is typed, then the bar moves to the result', async (t) => {
    const session = await call(t, 'export', '--arg', 'project=demo', '--arg', 'files=4', '--arg', 'delayMs=300', '--arg', 'confirm=true');
    await session.until(/The server asks: .*\nAnswer\? \[a\]ccept, \[d\]ecline, \[c\]ancel/, 15_000);
    await session.keys('a', 'Enter');
    await session.until(/\[y\/n\]:\s*$/, 5_000);
    await session.keys('y', 'Enter');
    const bars = await barsUntilResult(session, 4);
    assert.equal(await session.exitCode(10_000), 0, await session.screen());
    assert.match(await session.screen(), /Exported 4 of 4 files\./);
    assert.ok(bars.size >= 1, 'the bar showed the export\'s progress after the answer');
    assert.ok(front.seen.includes('response') && front.seen.includes('tools/call+task'), front.seen.join(' '));
  });

  it('Ctrl-C while the question is open sends tasks/cancel and exits 130', async (t) => {
    await ctrlCWhileAsked(await call(t, 'confirm_delete', '--arg', 'filename=report.pdf'), demo.url);
    assert.ok(front.seen.includes('tasks/cancel'));
  });
});

/** The file counts the progress bar showed (`[##--] 50% 2/4`) until the result `Exported total of total files.` appeared, within 15 s. */
async function barsUntilResult(session: TmuxSession, total: number): Promise<Set<string>> {
  const bars = new Set<string>();
  const start = Date.now();
  while (Date.now() - start < 15_000) {
    const screen = await session.screen();
    const bar = new RegExp(`\\[(#*-*)\\] \\d+% (\\d)/${total}`).exec(screen);
    if (bar) bars.add(bar[2]!);
    if (screen.includes(`Exported ${total} of ${total} files.`)) break;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  return bars;
}

/** Presses Ctrl-C while `confirm_delete`'s question is open; the command exits 130 and the task reads cancelled. */
async function ctrlCWhileAsked(session: TmuxSession, url: string): Promise<void> {
  const shown = await session.until(/Answer\? \[a\]ccept/, 15_000);
  const taskId = /Task (\S+) created\./.exec(shown)![1]!;
  await session.keys('C-c');
  assert.equal(await session.exitCode(15_000), 130, await session.screen());
  assert.equal((await rpc(url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
}
