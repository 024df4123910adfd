// Input a 2025-11-25 upstream asks for over its tasks/result side channel, relayed: the upstream
// is a demo node (in-memory store) that a gateway demo node on PostgreSQL mounts as a 2025-11-25
// upstream (MCP_TASKS_UPSTREAM_REVISION), so the upstream's confirm_delete asks its elicitation
// as a server-to-client request on the gateway's tasks/result stream and takes the answer as a
// POSTed response.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectLegacyClient, type LegacyClient } from '../support/legacy-client.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const BOUND_MS = 30_000;

describe('a gateway relaying the side-channel input of a 2025-11-25 upstream', { timeout: 120_000 }, () => {
  let upstream: DemoProcess;
  let gateway: DemoProcess;
  let database: TestDatabase;
  const clients: LegacyClient[] = [];

  before(async () => {
    upstream = await spawnDemoNode('side-channel-upstream', { MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity', MCP_TASKS_POLL_INTERVAL_MS: '200' });
    database = await createTestDatabase();
    gateway = await spawnDemoNode('side-channel-gateway', {
      DATABASE_URL: database.url,
      MCP_TASKS_UPSTREAM_URL: upstream.url,
      MCP_TASKS_UPSTREAM_REVISION: '2025-11-25',
      MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity',
      MCP_TASKS_POLL_INTERVAL_MS: '500',
    });
  });

  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    for (const node of [gateway, upstream]) node?.child.kill('SIGKILL');
    await Promise.all([gateway, upstream].filter(Boolean).map((node) => node.exited));
    await database?.drop();
  });

  it("a 2026-07-28 client sees the upstream's elicitation as its task's input request, and its tasks/update answer reaches the upstream, which completes", async () => {
    const created = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_confirm_delete', arguments: { filename: 'side.txt' } }), BOUND_MS, 'tools/call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const taskId = created.result!['taskId'] as string;
    const asking = await waitFor(gateway.url, taskId, (task) => task['status'] !== 'working', 20_000);
    assert.equal(asking['status'], 'input_required', JSON.stringify(asking));
    const entries = Object.entries(asking['inputRequests'] as Record<string, any>);
    assert.equal(entries.length, 1, JSON.stringify(asking));
    const [key, request] = entries[0]!;
    assert.match(key, /^upstream-[A-Za-z0-9_-]{22}$/, 'a key of the gateway, not the upstream request id');
    assert.equal(request['method'], 'elicitation/create');
    assert.equal(request['params']['message'], 'Delete side.txt?');
    assert.equal(request['params']['_meta'], undefined, "the upstream's related-task _meta is not shown");
    const updated = await rpc(gateway.url, 'tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { confirm: true } } } });
    assert.ok(updated.result, JSON.stringify(updated.body));
    const done = await waitFor(gateway.url, taskId, (task) => task['status'] !== 'working' && task['status'] !== 'input_required', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(done['result']?.['content']?.[0]?.['text'], 'Deleted side.txt.');
  });

  it('a declined answer is forwarded as declined', async () => {
    const created = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_confirm_delete', arguments: { filename: 'keep.txt' } }), BOUND_MS, 'tools/call');
    const taskId = created.result!['taskId'] as string;
    const asking = await waitFor(gateway.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    const [key] = Object.keys(asking['inputRequests']);
    assert.ok((await rpc(gateway.url, 'tasks/update', { taskId, inputResponses: { [key!]: { action: 'decline' } } })).result);
    const done = await waitFor(gateway.url, taskId, (task) => task['status'] !== 'working' && task['status'] !== 'input_required', 20_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done));
    assert.equal(done['result']?.['content']?.[0]?.['text'], 'Kept keep.txt.');
  });

  it('a cancel while the upstream task waits for its answer cancels the upstream task (its run stops)', async () => {
    const created = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_confirm_delete', arguments: { filename: 'gone.txt' } }), BOUND_MS, 'tools/call');
    const taskId = created.result!['taskId'] as string;
    await waitFor(gateway.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.equal(await metric(upstream.base, 'mcp_tasks_running'), 1);
    assert.ok((await rpc(gateway.url, 'tasks/cancel', { taskId })).result);
    await eventually(async () => (await metric(upstream.base, 'mcp_tasks_running')) === 0, 10_000, 'the upstream run stops');
    assert.equal((await rpc(gateway.url, 'tasks/get', { taskId })).result?.['status'], 'cancelled');
  });

  it("a 2025-11-25 client through the gateway answers the 2025-11-25 upstream's elicitation with its own handler", async () => {
    const client = await within(connectLegacyClient({ route: () => gateway.url }), BOUND_MS, 'the 1.x client connects');
    clients.push(client);
    const asked: Array<Record<string, any>> = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, any>);
      return { action: 'accept', content: { confirm: true } } as ElicitResult;
    });
    let result = '';
    const run = async () => {
      for await (const message of client.experimental.tasks.callToolStream({ name: 'upstream_confirm_delete', arguments: { filename: 'chain.txt' } }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'result') result = JSON.stringify(message.result.content);
        if (message.type === 'error') assert.fail(message.error.message);
      }
    };
    await within(run(), BOUND_MS, 'the chained call ends');
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.equal(asked[0]!['message'], 'Delete chain.txt?');
    assert.match(result, /Deleted chain\.txt\./);
  });
});
