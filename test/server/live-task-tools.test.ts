// A handler given LiveTaskTools serves the list of the moment: a tool put in is listed and runs as
// a task (the fast path and the SDK path alike), a tool taken out is an unknown tool, and a list
// that names one of the handler's own tools again is refused whole (the list before stays).
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defineTool, LiveTaskTools, McpTasks, type McpTasksHandler } from '@mcp-tasks/server';
import * as z from 'zod';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const tool = (name: string) =>
  defineTool({ name, task: 'optional', input: z.object({}), execute: async () => ({ content: [{ type: 'text' as const, text: `ran ${name}` }] }) });

const live = new LiveTaskTools([tool('first')]);
let tasks: McpTasks;
/** The direct path's handler first, then one that sends every request through the SDK. */
const served: Array<{ handler: McpTasksHandler; http: Server; url: string }> = [];

async function listed(url = served[0]!.url): Promise<string[]> {
  const reply = await rpc(url, 'tools/list', {});
  return (reply.result?.['tools'] as Array<{ name: string }>).map((entry) => entry.name).sort();
}

before(async () => {
  tasks = new McpTasks({});
  const authInfo = { token: 't', clientId: 'app', scopes: [], extra: { sub: 'live-owner' } };
  for (const directTasks of [true, false]) {
    const handler = tasks.handler({ name: `live-${directTasks}`, version: '1.0.0', tools: [tool('own')], liveTools: live, directTasks });
    served.push({ handler, ...(await serveOnLoopback({ fetch: (request, options) => handler.fetch(request, { ...options, authInfo }) })) });
  }
});

after(async () => {
  for (const { http, handler } of served) {
    await closeLoopback(http);
    await handler.close();
  }
  await tasks.close();
});

describe('LiveTaskTools', { timeout: 30_000 }, () => {
  it('serves the list of the moment: a tool put in runs as a task, a tool taken out is unknown', async () => {
    assert.deepEqual(await listed(), ['first', 'own']);
    live.replace([tool('second')]);
    for (const { url } of served) {
      assert.deepEqual(await listed(url), ['own', 'second']);
      const created = await rpc(url, 'tools/call', { name: 'second', arguments: {} });
      assert.equal(created.result?.['resultType'], 'task', `${url}: ${JSON.stringify(created.body)}`);
      const done = await waitFor(url, created.result!['taskId'] as string, (task) => task['status'] === 'completed');
      assert.match(JSON.stringify(done), /ran second/);
      const inline = await rpc(url, 'tools/call', { name: 'second', arguments: {} }, { tasks: false });
      assert.match(JSON.stringify(inline.result), /ran second/);
      for (const declareTasks of [true, false]) {
        const refused = await rpc(url, 'tools/call', { name: 'first', arguments: {} }, { tasks: declareTasks });
        const said = refused.error?.message ?? (refused.result?.['isError'] === true ? JSON.stringify(refused.result) : undefined);
        assert.match(String(said), /first/, JSON.stringify(refused.body));
      }
    }
  });

  it('a list that names a tool of the handler again is refused whole, and the list before stays', () => {
    assert.throws(() => live.replace([tool('third'), tool('own')]), /two task tools are named own/);
    assert.deepEqual(live.current().map((entry) => entry.name), ['second']);
    assert.throws(() => live.replace([tool('x'), tool('x')]), /two task tools are named x/);
  });

  it('after a refused list the handlers still serve the one before', async () => {
    for (const { url } of served) assert.deepEqual(await listed(url), ['own', 'second']);
  });
});
