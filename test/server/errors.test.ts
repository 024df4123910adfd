// The error paths of the MCP tasks surface, over real HTTP with hand-built requests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { post, rpc, waitFor } from '../support/server-raw-client.js';

let demo: DemoServer;
let url: string;

before(async () => {
  demo = await startDemoServer({ port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'test', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined });
  url = demo.url;
});
after(() => demo.close(1_000));

async function parkedConfirmDelete(): Promise<string> {
  const created = await rpc(url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
  assert.equal(created.result?.['resultType'], 'task');
  const taskId = created.result!['taskId'] as string;
  await waitFor(url, taskId, (task) => task['status'] === 'input_required');
  return taskId;
}

describe('tasks/* without the extension', () => {
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    it(`${method} answers -32021 with requiredCapabilities before any lookup`, async () => {
      const reply = await rpc(url, method, { taskId: 'does-not-exist', inputResponses: {} }, { tasks: false });
      assert.equal(reply.error?.code, -32021);
      assert.deepEqual(reply.error?.data?.requiredCapabilities, { extensions: { 'io.modelcontextprotocol/tasks': {} } });
    });
  }

  it('a required task tool is refused with -32021; an optional one runs inline', async () => {
    const required = await rpc(url, 'tools/call', { name: 'failing_job', arguments: {} }, { tasks: false });
    assert.equal(required.error?.code, -32021);
    assert.deepEqual(required.error?.data?.requiredCapabilities, { extensions: { 'io.modelcontextprotocol/tasks': {} } });
    const optional = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, { tasks: false });
    assert.equal(optional.result?.['resultType'], 'complete');
    assert.equal(optional.result?.['taskId'], undefined);
  });
});

describe('task ids', () => {
  it('an unknown id and another owner\'s id get the identical -32602', async () => {
    const unknown = await rpc(url, 'tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal(unknown.error?.code, -32602);
    // A task of another owner: created in the store under a different owner.
    const foreign = await demo.tasks.runtime.store.create(
      { taskId: 'BBBBBBBBBBBBBBBBBBBBBBBB', owner: { subject: 'someone-else', server: 'mcp-tasks-demo', clientId: '', resource: '' }, tool: 'slow_compute', scopes: [], ttlMs: 60_000, pollIntervalMs: 100, nodeId: null },
      { maxLive: Infinity },
    );
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const reply = await rpc(url, method, { taskId: foreign.taskId, inputResponses: {} });
      assert.deepEqual(reply.error, unknown.error, method);
    }
  });

  it('a missing or ill-typed taskId is -32602 saying what is wrong', async () => {
    const missing = await rpc(url, 'tasks/get', {});
    assert.equal(missing.error?.code, -32602);
    assert.match(missing.error!.message, /needs params\.taskId/);
    const number = await rpc(url, 'tasks/cancel', { taskId: 42 });
    assert.equal(number.error?.code, -32602);
    assert.match(number.error!.message, /taskId must be a string, got a number/);
  });

  it('tasks/list and tasks/result are -32601', async () => {
    assert.equal((await rpc(url, 'tasks/list', {})).error?.code, -32601);
    assert.equal((await rpc(url, 'tasks/result', { taskId: 'x' })).error?.code, -32601);
  });
});

describe('tools/call arguments', () => {
  it('bad JSON is a -32700 parse error', async () => {
    const reply = await post(url, '{"jsonrpc":"2.0",', { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' });
    assert.equal(reply.status, 400);
    assert.equal(reply.error?.code, -32700);
  });

  it('wrong types are -32602 naming the field, and no task is created', async () => {
    const before = demo.tasks.runtime.running;
    const reply = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 'soon' } });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /slow_compute: seconds: /);
    assert.equal(demo.tasks.runtime.running, before);
  });

  it('oversized arguments are -32602 with the size and the limit', async () => {
    const reply = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', padding: 'x'.repeat(1_100_000) } });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /arguments are \d+ bytes; the limit is 1048576/);
  });
});

describe('tasks/update', () => {
  it('a non-object answer is -32602 naming the key, and the task is unchanged', async () => {
    const taskId = await parkedConfirmDelete();
    const beforeTask = (await rpc(url, 'tasks/get', { taskId })).result;
    const reply = await rpc(url, 'tasks/update', { taskId, inputResponses: { confirm: 12345 } });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /inputResponses\.confirm/);
    assert.deepEqual((await rpc(url, 'tasks/get', { taskId })).result, beforeTask);
  });

  it('an answer of the wrong shape for its request is -32602, and the task is unchanged', async () => {
    const taskId = await parkedConfirmDelete();
    const beforeTask = (await rpc(url, 'tasks/get', { taskId })).result;
    const reply = await rpc(url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'maybe' } } });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /inputResponses\.confirm\.action/);
    assert.deepEqual((await rpc(url, 'tasks/get', { taskId })).result, beforeTask);
  });

  it('unknown keys are acked and ignored', async () => {
    const taskId = await parkedConfirmDelete();
    const reply = await rpc(url, 'tasks/update', { taskId, inputResponses: { nope: { action: 'accept' } } });
    assert.equal(reply.result?.['resultType'], 'complete');
    assert.deepEqual(Object.keys(reply.result!).filter((k) => k !== '_meta'), ['resultType']);
    assert.equal((await rpc(url, 'tasks/get', { taskId })).result?.['status'], 'input_required');
    await rpc(url, 'tasks/cancel', { taskId });
  });
});

describe('results', () => {
  it('a tool throwing an SDK ProtocolError ends failed with that error', async () => {
    const created = await rpc(url, 'tools/call', { name: 'protocol_error_job', arguments: {} });
    const task = await waitFor(url, created.result!['taskId'], (t) => t['status'] === 'failed');
    assert.deepEqual(task['error'], { code: -32603, message: 'The job hit an internal protocol error', data: { reason: 'simulated' } });
  });

  // The 2026-07-28 Tool has no `execution` (the SDK strips it there), so taskSupport shows to
  // 2025-11-25 clients, which the same endpoint serves statelessly.
  it('tools/list shows execution.taskSupport per task tool and none for greet (2025-11-25 clients)', async () => {
    const reply = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    const support = Object.fromEntries(reply.result!['tools'].map((t: any) => [t.name, t.execution?.taskSupport]));
    assert.deepEqual(support, {
      greet: undefined,
      slow_compute: 'optional',
      failing_job: 'required',
      protocol_error_job: 'optional',
      confirm_delete: 'optional',
      multi_input: 'optional',
      test_tool_with_task: 'required',
      export: 'optional',
      stubborn: 'optional',
    });
  });
});
