// How much a gateway's relays cost their upstream. A gateway node (a real PostgreSQL store)
// mounts one upstream (this project's own server, on a memory store, counting the requests it
// receives by method) twice: once following its relayed tasks on `subscriptions/listen` (the
// default where the upstream offers it), once polling them (`follow: { listen: false }`, what
// every relay did before). 100 relayed tasks each way, measured side by side.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MemoryTaskStore } from '@mcp-tasks/core';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks, proxyUpstream, type TaskListenHandler } from '@mcp-tasks/server';
import * as z from 'zod';
import { rpc } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/demo-process.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';
import { within } from '../support/within.js';

const TASKS = 100;

/** Sleeps `ms` unless cancelled, then answers. */
const nap = defineTool({
  name: 'nap',
  task: 'optional',
  input: z.object({ ms: z.number().min(0).max(120_000) }),
  async execute({ ms }, ctx) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return { content: [{ type: 'text', text: `napped ${ms} ms` }] };
  },
});

let db: TestDatabase;
let upstreamTasks: McpTasks;
let upstreamHandler: TaskListenHandler;
let upstreamHttp: Server;
const received = new Map<string, number>();
let gatewayTasks: McpTasks;
let gateway: TaskListenHandler;
let gatewayHttp: Server;
let url: string;

function count(method: string): number {
  return received.get(method) ?? 0;
}

before(async () => {
  db = await createTestDatabase();
  upstreamTasks = new McpTasks({ store: new MemoryTaskStore(), maxPerPrincipal: Infinity, rateLimit: false, admission: false, toolRuns: false, inFlight: false, listenStreams: false });
  upstreamHandler = upstreamTasks.handler({ name: 'upstream', version: '1.0.0', tools: [nap] });
  const counting = {
    fetch: (request: Request, options?: never) => {
      const method = request.headers.get('mcp-method') ?? '';
      received.set(method, (received.get(method) ?? 0) + 1);
      return upstreamHandler.fetch(request, options);
    },
  };
  const served = await serveOnLoopback(counting as never);
  upstreamHttp = served.http;
  const store = await PostgresTaskStore.connect({ connectionString: db.url });
  const node = await PostgresTaskNode.start(store, { nodeId: 'listening-gateway' });
  gatewayTasks = new McpTasks({ store, node, maxPerPrincipal: Infinity, rateLimit: false, admission: false, toolRuns: false, inFlight: false });
  gateway = gatewayTasks.handler({
    name: 'gateway',
    version: '1.0.0',
    upstreams: [proxyUpstream({ name: 'listened', url: served.url }), proxyUpstream({ name: 'polled', url: served.url, follow: { listen: false } })],
  });
  ({ http: gatewayHttp, url } = await serveOnLoopback(gateway));
});

after(async () => {
  await closeLoopback(gatewayHttp);
  await gateway?.close();
  await gatewayTasks?.close();
  await closeLoopback(upstreamHttp);
  await upstreamHandler?.close();
  await upstreamTasks?.close();
  await db?.drop();
});

/** Starts `TASKS` relayed tasks of `tool`, ten at a time. */
async function startMany(tool: string, ms: number): Promise<string[]> {
  const ids: string[] = [];
  for (let batch = 0; batch < TASKS / 10; batch += 1) {
    const created = await Promise.all(Array.from({ length: 10 }, () => within(rpc(url, 'tools/call', { name: tool, arguments: { ms } }), 30_000, `tools/call ${tool}`)));
    for (const reply of created) {
      assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
      ids.push(reply.result!['taskId'] as string);
    }
  }
  return ids;
}

/** Upstream requests a second that follow the tasks (tasks/get and subscriptions/listen) over `ms`. */
async function followRate(ms: number): Promise<number> {
  const from = count('tasks/get') + count('subscriptions/listen');
  const startedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return ((count('tasks/get') + count('subscriptions/listen') - from) * 1_000) / (Date.now() - startedAt);
}

async function allStatus(ids: readonly string[], status: string): Promise<boolean> {
  const replies = await Promise.all(ids.map((taskId) => rpc(url, 'tasks/get', { taskId })));
  return replies.every((reply) => reply.result?.['status'] === status);
}

describe('the relays of 100 tasks, followed on one listen stream or polled', { timeout: 180_000 }, () => {
  it('one listen stream follows all 100 relayed tasks to their results, at a small fraction of the polls', async (t) => {
    // Polled (before): each relay asks tasks/get every pollIntervalMs (1 s).
    const polled = await startMany('polled_nap', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const pollRate = await followRate(4_000);
    t.diagnostic(`100 polled relays: ${pollRate.toFixed(1)} upstream requests a second`);
    await Promise.all(polled.map((taskId) => rpc(url, 'tasks/cancel', { taskId })));

    // Listened (after): the node's relays of the upstream share one stream.
    const listensBefore = count('subscriptions/listen');
    const getsBefore = count('tasks/get');
    const listened = await startMany('listened_nap', 12_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const listenRate = await followRate(4_000);
    t.diagnostic(`100 relayed tasks: polled ${pollRate.toFixed(1)} upstream requests a second, on a listen stream ${listenRate.toFixed(1)}`);
    assert.ok(pollRate >= 20, `polling relays asked ${pollRate.toFixed(1)} times a second`);
    assert.ok(listenRate <= 2 && listenRate * 10 <= pollRate, `the listening relays cost the upstream ${listenRate.toFixed(1)} requests a second`);
    // Every result comes on the stream: the tasks complete with the upstream's result.
    await eventually(() => allStatus(listened, 'completed'), 30_000, 'every listened task completes');
    const done = await rpc(url, 'tasks/get', { taskId: listened[0] });
    assert.equal(done.result?.['result']?.['content']?.[0]?.['text'], 'napped 12000 ms', JSON.stringify(done.body));
    const listens = count('subscriptions/listen') - listensBefore;
    const gets = count('tasks/get') - getsBefore;
    t.diagnostic(`following 100 tasks from creation to result: ${listens} listen requests, ${gets} tasks/get`);
    assert.ok(listens <= 20, `${listens} listen requests`);
    assert.ok(gets <= 10, `${gets} tasks/get`);
  });

  it('a cancel of one listened task leaves the stream following the others', async () => {
    const [first, second] = await Promise.all([
      within(rpc(url, 'tools/call', { name: 'listened_nap', arguments: { ms: 60_000 } }), 30_000, 'first'),
      within(rpc(url, 'tools/call', { name: 'listened_nap', arguments: { ms: 1_500 } }), 30_000, 'second'),
    ]);
    const cancelled = await rpc(url, 'tasks/cancel', { taskId: first.result!['taskId'] });
    assert.ok(cancelled.result, JSON.stringify(cancelled.body));
    await eventually(async () => (await rpc(url, 'tasks/get', { taskId: second.result!['taskId'] })).result?.['status'] === 'completed', 15_000, 'the other task completes');
  });
});
