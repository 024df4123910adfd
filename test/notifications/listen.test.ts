// notifications/tasks on subscriptions/listen, from any node: three demo node processes and one
// in-process node on one PostgreSQL database, with the demo's static token table (auth on).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import type { PostgresTaskNode } from '@mcp-tasks/postgres';
import { authRpc } from '../support/auth-client.js';
import { listen, type ListenStream } from '../support/notifications-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const TOKENS = {
  alice: { sub: 'alice', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
  'alice-noscope': { sub: 'alice', clientId: 'app-a', scopes: [], resource: RESOURCE },
  'alice-app-b': { sub: 'alice', clientId: 'app-b', scopes: ['export'], resource: RESOURCE },
  bob: { sub: 'bob', clientId: 'app-a', scopes: ['export'], resource: RESOURCE },
};
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAAAA';

let db: TestDatabase;
let nodes: DemoProcess[] = [];
let nodeD: DemoServer;
const url = (name: 'A' | 'B' | 'C') => nodes['ABC'.indexOf(name)]!.url;

before(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-notifications-'));
  const tokensFile = path.join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(TOKENS));
  const env = { DATABASE_URL: db.url, MCP_TASKS_TOKENS: tokensFile, MCP_TASKS_POLL_INTERVAL_MS: '50', MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_DRAIN_MS: '500' };
  nodes = await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => spawnDemoNode(name, env)));
  nodeD = await startDemoServer({
    port: 0, host: '127.0.0.1', databaseUrl: db.url, nodeId: 'node-d', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: Infinity,
    auth: authFromEnv({ MCP_TASKS_TOKENS: tokensFile }),
  });
});

after(async () => {
  for (const node of nodes) node.child.kill('SIGTERM');
  await Promise.all(nodes.map((node) => node.exited));
  await nodeD?.close(500).catch(() => {});
  await db?.drop();
});

async function call(url: string, token: string, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await authRpc(url, token, 'tools/call', { name, arguments: args });
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return created.result!['taskId'] as string;
}

/** tasks/get as a notification carries it: without resultType and _meta. */
async function get(url: string, token: string, taskId: string): Promise<Record<string, unknown>> {
  const reply = await authRpc(url, token, 'tasks/get', { taskId });
  assert.ok(reply.result, JSON.stringify(reply.body));
  const { resultType, _meta, ...task } = reply.result;
  assert.equal(resultType, 'complete');
  return task;
}

const ack = (stream: ListenStream) => stream.messages().find((m) => m['method'] === 'notifications/subscriptions/acknowledged');
const statuses = (stream: ListenStream) => stream.tasks().map((t) => t['status']);

describe('notifications/tasks on subscriptions/listen', () => {
  it('a listener on B follows a task running on A through input and completion answered via C, each event equal to tasks/get', async () => {
    const taskId = await call(url('A'), 'alice', 'confirm_delete', { filename: 'notes.txt', delayMs: 1_500 });
    const stream = await listen(url('B'), [taskId], { token: 'alice' });
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    assert.equal(stream.headers.get('cache-control'), 'no-cache, no-transform');
    await stream.until((m) => m.length >= 1, 5_000, 'the acknowledgement');
    const first = stream.messages()[0]!;
    assert.equal(first['method'], 'notifications/subscriptions/acknowledged');
    assert.deepEqual(first['params']['notifications'], { taskIds: [taskId] });
    assert.equal(first['params']['_meta']['io.modelcontextprotocol/subscriptionId'], stream.id);

    const expect = async (status: string, count: number): Promise<Record<string, any>> => {
      await stream.until(() => stream.tasks().length >= count, 10_000, `${status} (#${count})`);
      const event = stream.tasks()[count - 1]!;
      assert.equal(event['status'], status);
      const now = await get(url('C'), 'alice', taskId);
      // A working task moves on by itself (after the tool's delay): on a slow machine the read may
      // come after that. Waiting states and the end stay put, so those are always compared.
      if (status !== 'working' || now['status'] === 'working') assert.deepEqual(event, now, `${status}: the notification is what tasks/get returns`);
      return event;
    };
    await expect('working', 1);
    const asking = await expect('input_required', 2);
    assert.deepEqual(Object.keys(asking['inputRequests']), ['confirm']);
    assert.equal(asking['inputRequests']['confirm']['method'], 'elicitation/create');
    const update = await authRpc(url('C'), 'alice', 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    assert.equal(update.result?.['resultType'], 'complete', JSON.stringify(update.body));
    const resumed = await expect('working', 3);
    assert.equal(resumed['inputRequests'], undefined);
    const done = await expect('completed', 4);
    assert.deepEqual(done['result']['content'], [{ type: 'text', text: 'Deleted notes.txt.' }]);

    // Every followed task is terminal: the stream ends with the listen result.
    await stream.ended;
    assert.deepEqual(statuses(stream), ['working', 'input_required', 'working', 'completed']);
    const last = stream.messages().at(-1)!;
    assert.equal(last['id'], stream.id);
    assert.equal(last['result']['resultType'], 'complete');
    assert.equal(last['result']['_meta']['io.modelcontextprotocol/subscriptionId'], stream.id);
    assert.equal(stream.messages().length, 6);
  });

  it('a listener on B sees the progress of a task running on A, each intermediate statusMessage', async () => {
    const taskId = await call(url('A'), 'alice', 'export', { project: 'progress', files: 4, delayMs: 400 });
    const stream = await listen(url('B'), [taskId], { token: 'alice' });
    await stream.ended;
    const events = stream.tasks();
    assert.equal(events.at(-1)!['status'], 'completed');
    const progress = [...new Set(events.filter((t) => t['status'] === 'working').map((t) => t['statusMessage']).filter(Boolean))];
    // A file takes 400 ms, far longer than a notification: none of the steps coalesce here.
    assert.ok(progress.length >= 3, `intermediate progress seen: ${JSON.stringify(progress)}`);
    const times = events.map((t) => Date.parse(t['lastUpdatedAt']));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'states arrive in order');
  });

  it('acknowledges only the caller own tasks, foreign and unknown ids look alike and get no events, and an own task without the token\'s scope refuses the listen', async () => {
    const alices = await call(url('A'), 'alice', 'confirm_delete', { filename: 'a.txt' });
    const alicesExport = await call(url('A'), 'alice', 'export', { project: 'p', files: 1000, delayMs: 60_000 });
    const bobs = await call(url('A'), 'bob', 'confirm_delete', { filename: 'b.txt' });
    try {
      const asBob = await listen(url('B'), [alices, alicesExport, UNKNOWN_ID, 'not a task id', bobs], { token: 'bob' });
      await asBob.until((m) => m.some((x) => x['method'] === 'notifications/tasks'), 5_000, "bob's task state");
      assert.deepEqual(ack(asBob)!['params']['notifications'], { taskIds: [bobs] });
      // Another client of the same user is another owner; a token without the export scope is
      // refused a listen on the export task (as tasks/get is) and follows the task that needs none.
      const asAppB = await listen(url('C'), [alices], { token: 'alice-app-b' });
      const refused = await listen(url('C'), [alicesExport, alices], { token: 'alice-noscope' });
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="insufficient_scope".*scope="export"/);
      const noScope = await listen(url('C'), [alices], { token: 'alice-noscope' });
      await noScope.until((m) => m.some((x) => x['method'] === 'notifications/tasks'), 5_000, "alice's confirm_delete state");
      assert.deepEqual(ack(noScope)!['params']['notifications'], { taskIds: [alices] });
      await asAppB.ended;
      assert.deepEqual(ack(asAppB)!['params']['notifications'], { taskIds: [] });
      assert.equal(asAppB.messages().length, 2, 'an acknowledgement without ids, then the listen result');

      // Alice's task changes; bob's stream hears nothing of it.
      await authRpc(url('C'), 'alice', 'tasks/update', { taskId: alices, inputResponses: { confirm: { action: 'accept', content: { confirm: false } } } });
      await noScope.until(() => noScope.tasks().some((t) => t['status'] === 'completed'), 10_000, "alice's task completed");
      assert.ok(asBob.tasks().every((t) => t['taskId'] === bobs), JSON.stringify(asBob.tasks()));
      asBob.abort();
      noScope.abort();
    } finally {
      await authRpc(url('A'), 'alice', 'tasks/cancel', { taskId: alicesExport });
      await authRpc(url('A'), 'bob', 'tasks/cancel', { taskId: bobs });
    }
  });

  it('refuses taskIds without the tasks extension: -32021 naming the extension', async () => {
    const taskId = await call(url('A'), 'alice', 'confirm_delete', { filename: 'c.txt' });
    const refused = await listen(url('B'), [taskId], { token: 'alice', tasks: false });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, -32021);
    assert.deepEqual(refused.json.error.data, { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    assert.equal(refused.json.id, refused.id);
    await authRpc(url('A'), 'alice', 'tasks/cancel', { taskId });
  });

  it('serves taskIds beside the standard kinds, and leaves listens without taskIds to the SDK', async () => {
    const taskId = await call(url('A'), 'alice', 'confirm_delete', { filename: 'd.txt' });
    const both = await listen(url('B'), [taskId], { token: 'alice', filter: { toolsListChanged: true } });
    await both.until(() => both.tasks().length >= 1, 5_000, 'the first state');
    assert.deepEqual(ack(both)!['params']['notifications'], { toolsListChanged: true, taskIds: [taskId] });
    await authRpc(url('A'), 'alice', 'tasks/cancel', { taskId });
    await both.until(() => both.tasks().some((t) => t['status'] === 'cancelled'), 10_000, 'cancelled');
    // The task part is over but the tools part is not: the stream stays open.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(!both.messages().some((m) => 'result' in m));
    both.abort();

    const standard = await listen(url('B'), undefined, { token: 'alice', filter: { toolsListChanged: true } });
    await standard.until((m) => m.length >= 1, 5_000, 'the SDK acknowledgement');
    assert.deepEqual(ack(standard)!['params']['notifications'], { toolsListChanged: true });
    standard.abort();
  });

  it('never puts progress of export on the stream', async () => {
    const taskId = await call(url('A'), 'alice', 'export', { project: 'p', files: 5, delayMs: 100 });
    const stream = await listen(url('B'), [taskId], { token: 'alice' });
    await stream.ended;
    const methods = stream.messages().map((m) => m['method'] ?? 'result');
    assert.ok(!methods.includes('notifications/progress') && !methods.includes('notifications/message'), methods.join());
    assert.equal(statuses(stream).at(-1), 'completed');
    assert.deepEqual(stream.tasks().at(-1), await get(url('C'), 'alice', taskId));
  });

  it('a dropped stream unfollows everything (in-process node: the listen and the store counters go back to zero)', async () => {
    const store = nodeD.node as PostgresTaskNode;
    const first = await call(url('A'), 'alice', 'export', { project: 'p', files: 1000, delayMs: 60_000 });
    const second = await call(nodeD.url, 'alice', 'confirm_delete', { filename: 'e.txt' });
    const stream = await listen(nodeD.url, [first, second], { token: 'alice' });
    await stream.until(() => stream.tasks().length >= 2, 5_000, 'both states');
    assert.equal(nodeD.listen.openStreams, 1);
    assert.equal(nodeD.listen.following, 2);
    assert.equal(store.followedTaskCount, 2);
    stream.abort();
    await eventually(async () => nodeD.listen.openStreams === 0 && nodeD.listen.following === 0 && store.followedTaskCount === 0, 5_000, 'followers freed');
    await authRpc(url('A'), 'alice', 'tasks/cancel', { taskId: first });
    await authRpc(url('A'), 'alice', 'tasks/cancel', { taskId: second });
  });

  it('draining the node ends open listen streams after their last states', async () => {
    const store = nodeD.node as PostgresTaskNode;
    // Not resumable: the drain fails it (a resumable export would be handed over, still working).
    const running = await call(nodeD.url, 'alice', 'slow_compute', { seconds: 600 });
    const stream = await listen(nodeD.url, [running], { token: 'alice' });
    await stream.until(() => stream.tasks().length >= 1, 5_000, 'the first state');
    await nodeD.close(200);
    await stream.ended;
    assert.deepEqual(statuses(stream), ['working', 'failed']);
    assert.equal(stream.messages().at(-1)!['id'], stream.id);
    assert.equal(store.followedTaskCount, 0);
  });
});
