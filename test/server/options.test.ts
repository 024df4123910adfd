// McpTasks options over real HTTP: `tasks: false` and `maxPerPrincipal`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineTool } from '@mcp-tasks/server';
import * as z from 'zod';
import { startMcpTasksHttp, type McpTasksHttp } from '../support/mcp-tasks-http.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** Runs until its task is cancelled. */
const hold = defineTool({
  name: 'hold',
  task: 'required',
  input: z.object({}),
  async execute(_args, ctx) {
    await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve())));
    return text('released');
  },
});
const quick = defineTool({ name: 'quick', task: 'optional', input: z.object({}), execute: () => text('quick done') });
const mustTask = defineTool({ name: 'must_task', task: 'required', input: z.object({}), execute: () => text('must done') });

describe('tasks: false', () => {
  let server: McpTasksHttp;
  before(async () => {
    server = await startMcpTasksHttp({ tasks: false, pollIntervalMs: 50 }, [quick, mustTask]);
  });
  after(() => server.close());

  it('server/discover does not advertise the tasks extension', async () => {
    const discover = await rpc(server.url, 'server/discover', {});
    assert.ok(discover.result, JSON.stringify(discover));
    assert.equal(discover.result['capabilities']?.['extensions']?.['io.modelcontextprotocol/tasks'], undefined);
  });

  it('task tools run inline even for a request that declares the extension, required ones too', async () => {
    for (const [name, expected] of [['quick', 'quick done'], ['must_task', 'must done']] as const) {
      const reply = await rpc(server.url, 'tools/call', { name, arguments: {} });
      assert.equal(reply.result?.['resultType'], 'complete', name);
      assert.equal(reply.result?.['taskId'], undefined, name);
      assert.deepEqual(reply.result?.['content'], [{ type: 'text', text: expected }], name);
    }
  });

  it('tools/list shows no execution.taskSupport', async () => {
    const list = await rpc(server.url, 'tools/list', {});
    for (const tool of list.result?.['tools'] ?? []) assert.equal(tool['execution'], undefined, tool['name']);
  });

  it('tasks/get, tasks/update and tasks/cancel are not served (-32601)', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const reply = await rpc(server.url, method, { taskId: 'AAAAAAAAAAAAAAAAAAAAAAAA', inputResponses: {} });
      assert.equal(reply.error?.code, -32601, method);
    }
    assert.equal(server.tasks.enabled, false);
  });
});

describe('maxPerPrincipal: 1', () => {
  let server: McpTasksHttp;
  let held: string;
  before(async () => {
    server = await startMcpTasksHttp({ maxPerPrincipal: 1, pollIntervalMs: 50 }, [hold, quick, mustTask]);
    const created = await rpc(server.url, 'tools/call', { name: 'hold', arguments: {} });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    held = created.result!['taskId'] as string;
  });
  after(() => server.close());

  it('an optional task tool runs inline while the owner is at the limit', async () => {
    const reply = await rpc(server.url, 'tools/call', { name: 'quick', arguments: {} });
    assert.equal(reply.result?.['resultType'], 'complete');
    assert.equal(reply.result?.['taskId'], undefined);
    assert.deepEqual(reply.result?.['content'], [{ type: 'text', text: 'quick done' }]);
  });

  it('a required task tool is refused with -32600 naming the limit', async () => {
    const reply = await rpc(server.url, 'tools/call', { name: 'must_task', arguments: {} });
    assert.equal(reply.error?.code, -32600);
    assert.match(reply.error!.message, /maxPerPrincipal/);
    assert.match(reply.error!.message, /\b1\b/);
  });

  it('once the live task ends, the owner gets tasks again', async () => {
    const cancel = await rpc(server.url, 'tasks/cancel', { taskId: held });
    assert.equal(cancel.result?.['resultType'], 'complete', JSON.stringify(cancel));
    await waitFor(server.url, held, (task) => task['status'] === 'cancelled');
    const reply = await rpc(server.url, 'tools/call', { name: 'must_task', arguments: {} });
    assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply));
  });
});
