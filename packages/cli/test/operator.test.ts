// The operator commands (`tasks list|show|cancel`, `nodes`) against a real PostgreSQL that a
// demo node process serves, with tasks of several owners created through MCP.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authRpc } from '../../../test/support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../../../test/support/demo-process.js';
import { mcpTasks } from './support/run-mcp-tasks.js';

const TOKENS = {
  alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'] },
  bob: { sub: 'bob', clientId: 'app-b', scopes: ['export'] },
};

describe('the operator commands', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let demo: DemoProcess;
  let dir: string;
  const ids: Record<string, string> = {};
  const db = () => ({ DATABASE_URL: database.url });

  async function create(token: string, name: string, args: Record<string, unknown>): Promise<string> {
    const reply = await authRpc(demo.url, token, 'tools/call', { name, arguments: args });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
    return reply.result!['taskId'] as string;
  }
  async function status(token: string, taskId: string): Promise<Record<string, any>> {
    return (await authRpc(demo.url, token, 'tasks/get', { taskId })).result!;
  }

  before(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'operator-test-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    demo = await spawnDemoNode('op-node', { DATABASE_URL: database.url, MCP_TASKS_TOKENS: tokens, MCP_TASKS_POLL_INTERVAL_MS: '50' });
    ids['aliceExport'] = await create('alice', 'export', { project: 'secret-project', files: 10_000, delayMs: 100 });
    ids['aliceDone'] = await create('alice', 'slow_compute', { seconds: 0 });
    ids['bobConfirm'] = await create('bob', 'confirm_delete', { filename: 'bob-private.pdf' });
    await eventually(async () => (await status('alice', ids['aliceDone']!))['status'] === 'completed', 10_000, 'slow_compute completes');
    await eventually(async () => (await status('bob', ids['bobConfirm']!))['status'] === 'input_required', 10_000, 'confirm_delete asks');
    await eventually(async () => /^\d+\//.test(String((await status('alice', ids['aliceExport']!))['statusMessage'])), 10_000, 'export runs');
  });
  after(async () => {
    demo?.child.kill('SIGKILL');
    await demo?.exited;
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('tasks list shows every owner\'s tasks, newest first, and filters by status, tool, owner, node, age and count', async () => {
    const list = async (...args: string[]) => {
      const run = await mcpTasks(['tasks', 'list', '--json', ...args], db());
      assert.equal(run.code, 0, run.stderr);
      return (JSON.parse(run.stdout) as { taskId: string; ownerSubject: string }[]).map((t) => t.taskId);
    };
    assert.deepEqual(await list(), [ids['bobConfirm'], ids['aliceDone'], ids['aliceExport']]);
    assert.deepEqual(await list('--owner', 'bob'), [ids['bobConfirm']]);
    assert.deepEqual(await list('--owner', 'alice'), [ids['aliceDone'], ids['aliceExport']]);
    assert.deepEqual(await list('--status', 'working'), [ids['aliceExport']]);
    assert.deepEqual(await list('--status', 'input_required', '--tool', 'confirm_delete'), [ids['bobConfirm']]);
    assert.deepEqual(await list('--tool', 'slow_compute'), [ids['aliceDone']]);
    assert.deepEqual(await list('--node', 'op-node', '--limit', '1'), [ids['bobConfirm']]);
    assert.deepEqual(await list('--node', 'another-node'), []);
    assert.deepEqual(await list('--older-than', '1h'), []);
    assert.equal((await list('--older-than', '0s')).length, 3);
    const text = await mcpTasks(['tasks', 'list'], db());
    assert.match(text.stdout, /^TASK\s+STATUS\s+TOOL\s+OWNER\s+NODE\s+AGE\s+UPDATED\s+MESSAGE$/m);
    assert.match(text.stdout, new RegExp(`^${ids['bobConfirm']}\\s+input_required\\s+confirm_delete\\s+bob\\s+op-node\\/[0-9a-f]{16}\\s`, 'm'));
    const bad = await mcpTasks(['tasks', 'list', '--status', 'stuck'], db());
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--status must be working, input_required, completed, failed or cancelled/);
    const badAge = await mcpTasks(['tasks', 'list', '--older-than', 'a while'], db());
    assert.equal(badAge.code, 2);
    assert.match(badAge.stderr, /--older-than takes a duration such as 90s/);
    const noAction = await mcpTasks(['tasks'], db());
    assert.equal(noAction.code, 2);
    assert.match(noAction.stderr, /mcp-tasks tasks needs list, show ID, cancel ID or retry ID/);
    const noId = await mcpTasks(['tasks', 'cancel'], db());
    assert.equal(noId.code, 2);
    assert.match(noId.stderr, /mcp-tasks tasks cancel takes one task id/);
  });

  it('tasks show prints a task\'s row, its input requests, answers and result as keys and sizes, and the data itself only with --reveal', async () => {
    const answered = await authRpc(demo.url, 'bob', 'tasks/update', { taskId: ids['bobConfirm'], inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.ok(answered.result, JSON.stringify(answered.body));
    await eventually(async () => (await status('bob', ids['bobConfirm']!))['status'] === 'completed', 10_000, 'confirm_delete completes');
    const shown = await mcpTasks(['tasks', 'show', ids['bobConfirm']!], db());
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /status\s+completed/);
    assert.match(shown.stdout, /tool\s+confirm_delete/);
    assert.match(shown.stdout, /owner\s+bob \(client app-b/);
    assert.match(shown.stdout, /node\s+op-node\/[0-9a-f]{16}/);
    // The question as the form it asked; the owner's answer as keys and size.
    assert.match(shown.stdout, /confirm {2}elicitation\/create, "Delete bob-private\.pdf\?", fields confirm: boolean \(required\); answered: keys action, content; \d+ bytes \(--reveal shows it\)/);
    assert.match(shown.stdout, /result\s+keys content(, \w+)*; \d+ bytes \(--reveal shows it\)/);
    assert.doesNotMatch(shown.stdout, /Deleted/, 'the result does not show');
    const revealed = await mcpTasks(['tasks', 'show', ids['bobConfirm']!, '--reveal'], db());
    assert.match(revealed.stdout, /Delete bob-private\.pdf\?/);
    assert.match(revealed.stdout, /Deleted bob-private\.pdf\./);
    const json = JSON.parse((await mcpTasks(['tasks', 'show', ids['bobConfirm']!, '--json'], db())).stdout);
    assert.deepEqual(json.result.keys.includes('content'), true);
    assert.equal(typeof json.result.bytes, 'number');
    assert.doesNotMatch(JSON.stringify(json), /bob-private|Deleted/);
    assert.match(shown.stdout, /^ {2}steps {10}none$/m, 'confirm_delete keeps no journal');
    const exporting = await mcpTasks(['tasks', 'show', ids['aliceExport']!], db());
    assert.match(exporting.stdout, /^ {2}steps {10}\d+/m, 'the export journals its files');
    assert.match(exporting.stdout, /^ {4}file-\d+ {2}done$/m);
    const exportJson = JSON.parse((await mcpTasks(['tasks', 'show', ids['aliceExport']!, '--json'], db())).stdout);
    assert.ok(exportJson.steps.total >= 1 && /^file-\d+$/.test(exportJson.steps.steps[0].name), JSON.stringify(exportJson.steps));
    const unknown = await mcpTasks(['tasks', 'show', 'no-such-task'], db());
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no task "no-such-task"/);
  });

  it('nodes lists each node with its lease age, whether it expired, and its running tasks', async () => {
    const run = await mcpTasks(['nodes', '--json'], db());
    assert.equal(run.code, 0, run.stderr);
    const nodes = JSON.parse(run.stdout) as { nodeId: string; name: string; expired: boolean; running: number; leaseAgeMs: number }[];
    const node = nodes.find((n) => n.name === 'op-node');
    assert.match(node?.nodeId ?? '', /^op-node\/[0-9a-f]{16}$/, run.stdout);
    assert.ok(node, run.stdout);
    assert.equal(node.expired, false);
    assert.equal(node.running, 1, 'the export still runs');
    assert.ok(node.leaseAgeMs >= 0 && node.leaseAgeMs < 60_000);
    const text = await mcpTasks(['nodes'], db());
    assert.match(text.stdout, /^op-node\/[0-9a-f]{16}\s+\d+(ms|s) ago\s+live\s+1\s/m);
  });

  it('tasks cancel stops another owner\'s running task as tasks/cancel does, and its owner reads that an operator cancelled it', async () => {
    // The export runs (another test's task may still be finishing beside it).
    assert.ok((await metric(demo.base, 'mcp_tasks_running')) >= 1, 'the export runs');
    const run = await mcpTasks(['tasks', 'cancel', ids['aliceExport']!], db());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`Operator cancel: task ${ids['aliceExport']} \\(tool export, owner alice, node op-node\\/[0-9a-f]{16}\\) is cancelled`));
    const task = await status('alice', ids['aliceExport']!);
    assert.equal(task['status'], 'cancelled');
    assert.equal(task['statusMessage'], 'Cancelled by an operator');
    // The NOTIFY reached the node: its run stopped.
    await eventually(async () => (await metric(demo.base, 'mcp_tasks_running')) === 0, 10_000, 'the run on the node stops');
    const again = await mcpTasks(['tasks', 'cancel', ids['aliceExport']!], db());
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is cancelled already: nothing to cancel/);
    const done = await mcpTasks(['tasks', 'cancel', ids['aliceDone']!], db());
    assert.equal(done.code, 1);
    assert.match(done.stderr, /is completed already/);
    assert.equal((await status('alice', ids['aliceDone']!))['status'], 'completed', 'a terminal task stays as it was');
  });

  it('mcp-tasks call sends --token (or MCP_TASKS_TOKEN), and says when the server refuses the credentials', async () => {
    const withToken = await mcpTasks(['call', demo.url, 'slow_compute', '--arg', 'seconds=0', '--token', 'bob']);
    assert.equal(withToken.code, 0, withToken.stderr);
    assert.equal(withToken.stdout, 'Computed result after 0s\n');
    const fromEnv = await mcpTasks(['call', demo.url, 'greet', '--arg', 'name=x'], { MCP_TASKS_TOKEN: 'alice' });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    const without = await mcpTasks(['call', demo.url, 'greet', '--arg', 'name=x']);
    assert.equal(without.code, 1);
    assert.match(without.stderr, /HTTP 401, the server refused the credentials.*; pass --token or set MCP_TASKS_TOKEN/);
  });
  it('tasks show gives a failed task\'s code and message (its data as keys and size) and names a tool error, as the console does', async () => {
    const failed = await create('alice', 'protocol_error_job', {});
    const toolError = await create('alice', 'failing_job', {});
    await eventually(async () => (await status('alice', failed))['status'] === 'failed', 15_000, 'protocol_error_job fails');
    await eventually(async () => (await status('alice', toolError))['status'] === 'completed', 15_000, 'failing_job completes');
    const shown = await mcpTasks(['tasks', 'show', failed], db());
    assert.match(shown.stdout, /^ {2}error {10}code -32603: The job hit an internal protocol error; data keys reason; 22 bytes \(--reveal shows it\)$/m);
    assert.doesNotMatch(shown.stdout, /simulated/);
    const tool = await mcpTasks(['tasks', 'show', toolError], db());
    assert.match(tool.stdout, /^ {2}result {9}a tool error \(isError\): keys content, isError; \d+ bytes/m);
  });
});
