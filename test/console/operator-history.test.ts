// A task's history and the operator actions beyond a single cancel, across two node processes on
// one PostgreSQL: the history records each change with its time, node and attempt, the question
// asked as its form, a failure's code and message; a bulk cancel by filter from the CLI needs a
// confirmation, stops the run on the node that holds it and leaves an audit row (who, what) in
// each task's history; a retry runs a cancelled task again as a new task that the other node may
// claim, and refuses a tool that does not allow it; the history goes with its task.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresOperator, type TaskEvent } from '@mcp-tasks/postgres';
import { authRpc } from '../support/auth-client.js';
import { mcpTasks } from '../../packages/cli/test/support/run-mcp-tasks.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { testPool } from '../support/pg-clients.js';

const TOKENS = { alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'] }, bob: { sub: 'bob', clientId: 'app-b', scopes: ['export'] } };

describe('a task\'s history and the operator actions, across nodes', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let nodeA: DemoProcess;
  let nodeB: DemoProcess;
  let dir: string;
  let pool: ReturnType<typeof testPool>;
  let operator: PostgresOperator;
  const db = () => ({ DATABASE_URL: database.url });
  const cliActor = `cli:${userInfo().username}@${hostname()}`;

  async function create(node: DemoProcess, token: string, name: string, args: Record<string, unknown>): Promise<string> {
    const reply = await authRpc(node.url, token, 'tools/call', { name, arguments: args });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
    return reply.result!['taskId'] as string;
  }
  async function status(node: DemoProcess, token: string, taskId: string): Promise<Record<string, any>> {
    return (await authRpc(node.url, token, 'tasks/get', { taskId })).result!;
  }
  async function events(taskId: string): Promise<TaskEvent[]> {
    return [...((await operator.getTaskHistory(taskId))?.events ?? [])];
  }

  before(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'operator-history-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(TOKENS));
    const env = { DATABASE_URL: database.url, MCP_TASKS_TOKENS: tokens, MCP_TASKS_POLL_INTERVAL_MS: '50' };
    [nodeA, nodeB] = await Promise.all([spawnDemoNode('hist-a', env), spawnDemoNode('hist-b', env)]);
    pool = testPool({ connectionString: database.url });
    operator = new PostgresOperator(pool);
  });
  after(async () => {
    for (const node of [nodeA, nodeB]) node?.child.kill('SIGKILL');
    await Promise.all([nodeA?.exited, nodeB?.exited]);
    await pool?.end();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('records a task\'s changes with time, node and attempt, the question as its form, and a failure\'s code and message', async () => {
    const asking = await create(nodeA, 'bob', 'confirm_delete', { filename: 'bob-private.pdf' });
    const failing = await create(nodeB, 'alice', 'protocol_error_job', {});
    await eventually(async () => (await status(nodeB, 'bob', asking))['status'] === 'input_required', 15_000, 'confirm_delete asks');
    await eventually(async () => (await status(nodeA, 'alice', failing))['status'] === 'failed', 15_000, 'protocol_error_job fails');
    const asked = await events(asking);
    assert.deepEqual(asked.map((event) => event.kind), ['created', 'input_requested']);
    assert.match(asked[0]!.nodeId ?? '', /^hist-a\//);
    assert.equal(asked[0]!.attempt, 1);
    assert.deepEqual(asked[1]!.question, { method: 'elicitation/create', mode: 'form', message: 'Delete bob-private.pdf?', fields: [{ name: 'confirm', type: 'boolean', description: 'Delete the file', required: true }] });
    const failed = await events(failing);
    assert.deepEqual(failed.map((event) => event.kind), ['created', 'failed']);
    assert.equal(failed[1]!.error?.code, -32603);
    assert.match(failed[1]!.error?.message ?? '', /internal protocol error/);
    assert.match(failed[1]!.nodeId ?? '', /^hist-b\//);
    assert.ok(failed[0]!.at.getTime() <= failed[1]!.at.getTime());
    // tasks show prints the same history in words.
    const shown = await mcpTasks(['tasks', 'show', asking], db());
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^ {4}\S+Z {2}asked confirm: elicitation\/create, "Delete bob-private\.pdf\?", fields confirm: boolean \(required\) {2}\[node hist-a\/[0-9a-f]{16}, attempt 1\]$/m);
    // The refusal of a tool that does not allow a retry, once the task ended.
    const cancelled = await mcpTasks(['tasks', 'cancel', asking], db());
    assert.equal(cancelled.code, 0, cancelled.stderr);
    const refused = await mcpTasks(['tasks', 'retry', asking, '--yes'], db());
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is not retried: its tool does not allow a retry/);
    const live = await mcpTasks(['tasks', 'retry', (await create(nodeA, 'alice', 'export', { project: 'p', files: 1000, delayMs: 100 })), '--yes'], db());
    assert.match(live.stderr, /only a failed or cancelled task is retried/);
  });

  it('cancels in bulk by filter once confirmed, on whichever node runs each task, with who and what in each history; a retry runs on a node again', async () => {
    const onA = await create(nodeA, 'alice', 'export', { project: 'alice-secret', files: 10_000, delayMs: 100 });
    const onB = await create(nodeB, 'alice', 'export', { project: 'alice-secret', files: 10_000, delayMs: 100 });
    const bobs = await create(nodeA, 'bob', 'export', { project: 'bob', files: 10_000, delayMs: 100 });
    // Without a terminal and without --yes a bulk cancel is refused, and nothing changes.
    const unconfirmed = await mcpTasks(['tasks', 'cancel', '--tool', 'export', '--owner', 'alice'], db());
    assert.equal(unconfirmed.code, 2);
    assert.match(unconfirmed.stderr, /Cancel these \d+ live tasks matching --tool export --owner alice: pass --yes to confirm without a terminal/);
    assert.equal((await status(nodeA, 'alice', onA))['status'], 'working');
    const run = await mcpTasks(['tasks', 'cancel', '--tool', 'export', '--owner', 'alice', '--yes'], db());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(onA));
    assert.match(run.stdout, new RegExp(onB));
    assert.match(run.stdout, /Operator cancel: \d+ of \d+ tasks cancelled/);
    for (const [node, id] of [[nodeB, onA], [nodeA, onB]] as const) {
      assert.equal((await status(node, 'alice', id))['status'], 'cancelled');
      const history = await events(id);
      const audit = history.find((event) => event.kind === 'operator');
      assert.equal(audit?.actor, cliActor);
      assert.equal(audit?.action, 'cancel');
      assert.equal(audit?.filter, '--tool export --owner alice');
      assert.equal(history.at(-1)!.kind, 'cancelled');
    }
    assert.equal((await status(nodeA, 'bob', bobs))['status'], 'working', 'another owner\'s task is not taken');
    await operator.cancelTask(bobs, 'test');

    const retried = await mcpTasks(['tasks', 'retry', onB, '--yes'], db());
    assert.equal(retried.code, 0, retried.stderr);
    const newId = /runs again as task (\S+) /.exec(retried.stdout)?.[1];
    assert.ok(newId, retried.stdout);
    // The owner sees the new task, claimed by a node (either), with the same arguments.
    await eventually(async () => /^\d+\//.test(String((await status(nodeA, 'alice', newId))['statusMessage'])), 20_000, 'the retry runs');
    const renewed = await events(newId);
    assert.deepEqual(renewed.slice(0, 3).map((event) => event.kind), ['operator', 'created', 'claimed']);
    assert.equal(renewed[0]!.action, 'retry_of');
    assert.equal(renewed[0]!.relatedTaskId, onB);
    assert.match(renewed[2]!.nodeId ?? '', /^hist-[ab]\//);
    assert.equal((await operator.getTask(newId))!.owner.subject, 'alice');
    assert.deepEqual((await operator.getTask(newId))!.args, (await operator.getTask(onB))!.args);
    const source = await events(onB);
    assert.equal(source.at(-1)!.action, 'retry');
    assert.equal(source.at(-1)!.relatedTaskId, newId);
    const twice = await operator.retryTask(onB, 'test');
    assert.deepEqual(twice, { retried: false, reason: `the task was retried already, as ${newId}` });
    await operator.cancelTask(newId, 'test');

    // Gone with its task: the sweeper's delete takes the history along.
    await pool.query('DELETE FROM mcp_tasks.tasks WHERE id = $1', [onA]);
    assert.equal((await pool.query('SELECT count(*)::int AS n FROM mcp_tasks.task_events WHERE task_id = $1', [onA])).rows[0].n, 0);
    assert.equal(await operator.getTaskHistory(onA), undefined);
  });

  it('stays bounded: a task that asks 70 questions and is claimed 70 times keeps the newest 50 of each, and still counts them all', async () => {
    await pool.query(`SELECT 1 FROM mcp_tasks.create_durable_task('bounded', 's', 'srv', 'c', 'r', 'k', 'export', '{}', NULL, 60000, 1000, 'n', NULL, '{}'::jsonb, NULL, true, 3)`);
    await pool.query(`DO $$ BEGIN FOR i IN 1..70 LOOP
      UPDATE mcp_tasks.tasks SET status = 'input_required', inputs = inputs || jsonb_build_object('q' || i, '{"request": {"method": "elicitation/create"}}'::jsonb), input_keys = array_append(input_keys, 'q' || i) WHERE id = 'bounded';
      UPDATE mcp_tasks.tasks SET status = 'working', inputs = jsonb_set(inputs, ARRAY['q' || i, 'response'], '{}') WHERE id = 'bounded';
      UPDATE mcp_tasks.tasks SET attempt = attempt + 1 WHERE id = 'bounded';
      UPDATE mcp_tasks.tasks SET status_message = 'progress ' || i WHERE id = 'bounded';
    END LOOP; END $$`);
    const history = (await operator.getTaskHistory('bounded'))!;
    const count = (kind: string) => history.events.filter((event) => event.kind === kind).length;
    assert.equal(count('input_requested'), 50);
    assert.equal(count('input_answered'), 50);
    assert.equal(count('claimed'), 50);
    assert.equal(count('created'), 1);
    assert.equal(history.events.length, 151, 'a progress message records nothing');
    assert.equal(history.inputsAsked, 70);
    assert.equal(history.attempts, 71);
    assert.equal(history.events.find((event) => event.kind === 'input_requested')!.key, 'q21', 'the oldest are the ones coalesced');
  });
});
