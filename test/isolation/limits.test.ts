// One owner's traffic is bounded by its own share: a per-owner rate limit on tasks/* and listens,
// caps on open task listen streams per owner and per node, and task-only listens that do not
// need one of the SDK's subscriptions (which every caller shares).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newTaskId } from '@mcp-tasks/core';
import { taskTools } from '@mcp-tasks/demo';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks, type McpTasksOptions, type TaskListenHandler } from '@mcp-tasks/server';
import { createMcpHandler, McpServer, type AuthInfo } from '@modelcontextprotocol/server';
import pg from 'pg';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { answerOf, readMessages } from '../support/sse.js';

const quiet = { warn: () => {}, error: () => {} };
const SERVER = 'limits';
let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;
let node: PostgresTaskNode;
/** Connections the store's pool handed out: one per statement outside a transaction. */
let checkouts = 0;
const opened: { tasks: McpTasks; handler: TaskListenHandler }[] = [];

/** A handler of its own McpTasks (its own limits) on the shared store. */
function serve(options: Omit<McpTasksOptions, 'store' | 'node'>, handlerOptions: { maxSubscriptions?: number } = {}): TaskListenHandler {
  const tasks = new McpTasks({ store, node, pollIntervalMs: 60_000, ...options });
  const handler = tasks.listen(
    createMcpHandler(
      (context) => {
        const server = new McpServer({ name: SERVER, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
        tasks.register(server, taskTools, context);
        return server;
      },
      { ...handlerOptions, onerror: () => {} },
    ),
    { serverName: SERVER },
  );
  opened.push({ tasks, handler });
  return handler;
}

const authOf = (sub: string): AuthInfo => ({ token: `token-${sub}`, clientId: 'app', scopes: ['export'], extra: { sub } });

function request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Request {
  return new Request('http://localhost/mcp', { method: 'POST', headers: requestHeaders(method, params), body: requestBody(method, params, true), ...(signal ? { signal } : {}) });
}

const call = (handler: TaskListenHandler, sub: string, method: string, params: Record<string, unknown>, signal?: AbortSignal) =>
  handler.fetch(request(method, params, signal), { authInfo: authOf(sub) });

/** The first SSE message of `response` (bounded), leaving the stream open. */
async function firstMessage(response: Response, timeoutMs = 5_000): Promise<any> {
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) throw new Error(`not a stream: ${response.status} ${await response.text()}`);
  const [message] = await readMessages(response, 1, { timeoutMs, keepOpen: true });
  if (!message) throw new Error('the stream ended before a message');
  return message;
}

async function createTask(handler: TaskListenHandler, sub: string): Promise<string> {
  const response = await call(handler, sub, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } });
  const text = await response.text();
  const message = answerOf(text);
  assert.equal(message.result?.resultType, 'task', text);
  return message.result.taskId;
}

describe('one owner\'s share of a node', () => {
  before(async () => {
    database = await createTestDatabase();
    pool = testPool({ connectionString: database.url, max: 4 });
    pool.on('acquire', () => (checkouts += 1));
    store = await PostgresTaskStore.connect({ pool, logger: quiet });
    node = await PostgresTaskNode.start(store, { logger: quiet, lease: false, reaper: false, sweeper: false });
  });

  after(async () => {
    for (const { handler, tasks } of opened) {
      await handler.close();
      await tasks.runtime.close();
    }
    await node.stop();
    await store.close();
    await pool.end();
    await database.drop();
  });

  describe('the per-owner rate limit', () => {
    it('a burst past an owner\'s limit is refused with -32000 and retryAfterMs before any query, while another owner is served', { timeout: 30_000 }, async () => {
      const handler = serve({ rateLimit: { requestsPerSecond: 1, burst: 5 } });
      const unknown = newTaskId();
      for (let i = 0; i < 5; i += 1) {
        const reply = (await (await call(handler, 'mallory', 'tasks/get', { taskId: unknown })).json()) as any;
        assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
      }
      checkouts = 0;
      const refused = await call(handler, 'mallory', 'tasks/get', { taskId: unknown });
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      const body = (await refused.json()) as any;
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /rate limit.*retry after \d+ ms/);
      assert.ok(body.error.data.retryAfterMs > 0 && body.error.data.retryAfterMs <= 1_000, JSON.stringify(body));
      const listen = await call(handler, 'mallory', 'subscriptions/listen', { notifications: { taskIds: [unknown] } });
      assert.equal(((await listen.json()) as any).error.code, -32000, 'a listen counts against the same bucket');
      assert.equal(checkouts, 0, 'a refused request reads nothing');

      const other = (await (await call(handler, 'alice', 'tasks/get', { taskId: unknown })).json()) as any;
      assert.equal(other.error?.code, -32602, `another owner is served: ${JSON.stringify(other)}`);
    });

    it('a refused owner is served again once its bucket refilled', { timeout: 30_000 }, async () => {
      const handler = serve({ rateLimit: { requestsPerSecond: 2, burst: 1 } });
      const unknown = newTaskId();
      assert.equal(((await (await call(handler, 'dave', 'tasks/get', { taskId: unknown })).json()) as any).error.code, -32602);
      const refused = (await (await call(handler, 'dave', 'tasks/get', { taskId: unknown })).json()) as any;
      assert.equal(refused.error.code, -32000);
      await new Promise((resolve) => setTimeout(resolve, refused.error.data.retryAfterMs + 20));
      assert.equal(((await (await call(handler, 'dave', 'tasks/get', { taskId: unknown })).json()) as any).error.code, -32602);
    });
  });

  describe('the caps on task listen streams', () => {
    it('an owner at its stream cap is refused naming the cap, while another owner still opens streams, up to the node\'s cap', { timeout: 30_000 }, async () => {
      const handler = serve({ rateLimit: false, listenStreams: { maxPerOwner: 2, maxPerNode: 3 } });
      const aliceTask = await createTask(handler, 'alice');
      const bobTask = await createTask(handler, 'bob');
      const carolTask = await createTask(handler, 'carol');
      const aborts: AbortController[] = [];
      const open = async (sub: string, taskId: string) => {
        const abort = new AbortController();
        aborts.push(abort);
        return call(handler, sub, 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, abort.signal);
      };
      try {
        for (let i = 0; i < 2; i += 1) assert.deepEqual((await firstMessage(await open('alice', aliceTask))).params.notifications.taskIds, [aliceTask]);
        checkouts = 0;
        const refused = await open('alice', aliceTask);
        assert.equal(refused.status, 429);
        const body = (await refused.json()) as any;
        assert.equal(body.error.code, -32000);
        assert.deepEqual(body.error.data, { limit: 'listenStreams.maxPerOwner', max: 2 });
        assert.match(body.error.message, /at most 2 \(listenStreams\.maxPerOwner\)/);
        assert.equal(checkouts, 0, 'a refused listen reads nothing');

        assert.deepEqual((await firstMessage(await open('bob', bobTask))).params.notifications.taskIds, [bobTask], 'another owner still opens a stream');
        const full = (await (await open('carol', carolTask)).json()) as any;
        assert.deepEqual(full.error.data, { limit: 'listenStreams.maxPerNode', max: 3 });

        // A stream that ends gives its slot back.
        aborts[0]!.abort();
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(handler.openStreams, 2);
        assert.deepEqual((await firstMessage(await open('carol', carolTask))).params.notifications.taskIds, [carolTask]);
      } finally {
        for (const abort of aborts) abort.abort();
        for (const taskId of [aliceTask, bobTask, carolTask]) await call(handler, taskId === aliceTask ? 'alice' : taskId === bobTask ? 'bob' : 'carol', 'tasks/cancel', { taskId });
      }
    });

    it('an owner that keeps opening listens past its stream cap gets its refusals held once past its prompt share', { timeout: 30_000 }, async () => {
      const handler = serve({ rateLimit: false, listenStreams: { maxPerOwner: 1 }, refusalHold: { holdMs: 400, promptPerSecond: 1, promptBurst: 1, random: () => 0 } });
      const taskId = await createTask(handler, 'mallory');
      const abort = new AbortController();
      // With its Content-Length, as a node:http host's request has it: a hold keeps only requests of a known, small size.
      const listen = () => {
        const params = { notifications: { taskIds: [taskId] } };
        const body = requestBody('subscriptions/listen', params, true);
        const headers = { ...requestHeaders('subscriptions/listen', params), 'content-length': String(Buffer.byteLength(body)) };
        return handler.fetch(new Request('http://localhost/mcp', { method: 'POST', headers, body, signal: abort.signal }), { authInfo: authOf('mallory') });
      };
      try {
        await firstMessage(await listen());
        const prompt = performance.now();
        assert.equal((await listen()).status, 429);
        assert.ok(performance.now() - prompt < 150, 'the first refusal is in the prompt share');
        const held = performance.now();
        const refused = await listen();
        assert.ok(performance.now() - held >= 190, `the next one is held (${(performance.now() - held).toFixed(0)} ms)`);
        assert.equal(refused.status, 429);
        assert.deepEqual(((await refused.json()) as any).error.data, { limit: 'listenStreams.maxPerOwner', max: 1 }, 'a held refusal is the cap\'s own answer');
      } finally {
        abort.abort();
        await call(handler, 'mallory', 'tasks/cancel', { taskId });
      }
    });

    it('a per-owner cap that is not below the node\'s is refused at construction', () => {
      assert.throws(() => new McpTasks({ store, listenStreams: { maxPerOwner: 10, maxPerNode: 10 } }), /maxPerOwner \(10\) must be below maxPerNode \(10\)/);
    });

    it('a task-only listen is served while other callers hold every one of the SDK\'s subscriptions', { timeout: 30_000 }, async () => {
      const handler = serve({ rateLimit: false }, { maxSubscriptions: 2 });
      const taskId = await createTask(handler, 'alice');
      const aborts: AbortController[] = [];
      try {
        for (let i = 0; i < 2; i += 1) {
          const abort = new AbortController();
          aborts.push(abort);
          const held = await call(handler, 'mallory', 'subscriptions/listen', { notifications: { toolsListChanged: true } }, abort.signal);
          assert.deepEqual((await firstMessage(held)).params.notifications, { toolsListChanged: true });
        }
        const abort = new AbortController();
        aborts.push(abort);
        const mine = await call(handler, 'alice', 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, abort.signal);
        const ack = await firstMessage(mine);
        assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
        assert.deepEqual(ack.params.notifications, { taskIds: [taskId] });
      } finally {
        for (const abort of aborts) abort.abort();
        await call(handler, 'alice', 'tasks/cancel', { taskId });
      }
    });
  });
});
