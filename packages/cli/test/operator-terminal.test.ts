// The operator actions on a pseudo-terminal (tmux), against a demo node on a real PostgreSQL: a
// bulk cancel by filter lists the matches and asks, and "n" leaves them running, "y" cancels
// them; a retry asks, and the history `tasks show` prints then names the CLI's user as who did it.
import assert from 'node:assert/strict';
import { hostname, userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { authRpc } from '../../../test/support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../../../test/support/demo-process.js';
import { bin, mcpTasks } from './support/run-mcp-tasks.js';
import { startTmux, tmuxUnavailable, type TmuxSession } from './support/tmux-session.js';

const skip = tmuxUnavailable();

describe('the operator actions on a terminal', { timeout: 150_000, skip }, () => {
  let database: TestDatabase;
  let demo: DemoProcess;
  const db = () => ({ DATABASE_URL: database.url });

  async function create(project: string): Promise<string> {
    const reply = await authRpc(demo.url, undefined, 'tools/call', { name: 'export', arguments: { project, files: 10_000, delayMs: 200 } });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
    return reply.result!['taskId'] as string;
  }
  async function status(taskId: string): Promise<string> {
    return String((await authRpc(demo.url, undefined, 'tasks/get', { taskId })).result!['status']);
  }
  async function terminal(t: { after(fn: () => Promise<void>): void }, ...args: string[]): Promise<TmuxSession> {
    const session = await startTmux([process.execPath, bin, ...args], db());
    t.after(() => session.close());
    return session;
  }

  before(async () => {
    database = await createTestDatabase();
    demo = await spawnDemoNode('op-terminal', { DATABASE_URL: database.url, MCP_TASKS_POLL_INTERVAL_MS: '50' });
  });
  after(async () => {
    demo?.child.kill('SIGKILL');
    await demo?.exited;
    await database?.drop();
  });

  it('asks before a bulk cancel by filter: n leaves the tasks running, y cancels them; a retry asks too and the history names who', async (t) => {
    const ids = [await create('a'), await create('b')];
    const declined = await terminal(t, 'tasks', 'cancel', '--tool', 'export');
    await declined.until(/Cancel these 2 live tasks matching --tool export\? \[y\/N\]/, 15_000);
    for (const id of ids) assert.match(await declined.screen(), new RegExp(id));
    await declined.keys('n', 'Enter');
    assert.equal(await declined.exitCode(10_000), 0);
    assert.match(await declined.screen(), /Nothing cancelled\./);
    for (const id of ids) assert.equal(await status(id), 'working');

    const confirmed = await terminal(t, 'tasks', 'cancel', '--tool', 'export');
    await confirmed.until(/\[y\/N\]/, 15_000);
    await confirmed.keys('y', 'Enter');
    assert.equal(await confirmed.exitCode(10_000), 0);
    assert.match(await confirmed.screen(), /Operator cancel: 2 of 2 tasks cancelled\./);
    for (const id of ids) await eventually(async () => (await status(id)) === 'cancelled', 5_000, 'the task is cancelled');

    const retry = await terminal(t, 'tasks', 'retry', ids[0]!);
    await retry.until(/Retry task \S+ \(tool export, owner \S+, cancelled\) as a new task with the same arguments\? \[y\/N\]/, 15_000);
    await retry.keys('y', 'Enter');
    assert.equal(await retry.exitCode(10_000), 0);
    const newId = /runs again as task (\S+) /.exec(await retry.screen())?.[1];
    assert.ok(newId, await retry.screen());
    await eventually(async () => (await status(newId)) === 'working', 10_000, 'the owner has the retried task');

    const shown = await mcpTasks(['tasks', 'show', ids[0]!], db());
    const who = `cli:${userInfo().username}@${hostname()}`;
    assert.match(shown.stdout, new RegExp(`operator ${who}: cancel \\(bulk, --tool export\\)`));
    assert.match(shown.stdout, new RegExp(`operator ${who}: retried as ${newId}`));
    await mcpTasks(['tasks', 'cancel', newId, '--yes'], db());
  });
});
