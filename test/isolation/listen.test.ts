// A listen resolves all its task ids in one query, whoever's they are, and names at most 100:
// per-request database work is bounded, so no caller can queue a node's pool behind its listens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newTaskId } from '@mcp-tasks/core';
import { taskTools } from '@mcp-tasks/demo';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks, type TaskListenHandler } from '@mcp-tasks/server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import pg from 'pg';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { answerOf, readMessages } from '../support/sse.js';

const quiet = { warn: () => {}, error: () => {} };
let database: TestDatabase;
let pool: pg.Pool;
let tasks: McpTasks;
let handler: TaskListenHandler;
/** Connections the store's pool handed out: one per statement outside a transaction. */
let checkouts = 0;

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 4 });
  pool.on('acquire', () => (checkouts += 1));
  const store = await PostgresTaskStore.connect({ pool, logger: quiet });
  const node = await PostgresTaskNode.start(store, { logger: quiet, lease: false, reaper: false, sweeper: false });
  tasks = new McpTasks({ store, node, pollIntervalMs: 60_000 });
  handler = tasks.listen(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'listen-cost', version: '1.0.0' });
      tasks.register(server, taskTools);
      return server;
    }),
    { serverName: 'listen-cost' },
  );
});

after(async () => {
  await handler.close();
  await tasks.close();
  await pool.end();
  await database.drop();
});

function request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Request {
  return new Request('http://localhost/mcp', { method: 'POST', headers: requestHeaders(method, params), body: requestBody(method, params, true), ...(signal ? { signal } : {}) });
}

async function createTask(): Promise<string> {
  const response = await handler.fetch(request('tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } }));
  const text = await response.text();
  const message = answerOf(text);
  assert.equal(message.result.resultType, 'task', text);
  return message.result.taskId;
}

describe('the cost of a listen', () => {
  it('a listen of 100 ids, own and unknown, resolves them in one query and sends the own ones\' states from it', { timeout: 30_000 }, async () => {
    const own = [await createTask(), await createTask(), await createTask()];
    const unknown = Array.from({ length: 97 }, () => newTaskId());
    // Let the runs reach their elicitation, so nothing else is using the pool.
    await new Promise((resolve) => setTimeout(resolve, 500));
    checkouts = 0;
    const response = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: [...unknown, ...own] } }));
    const seen = await readMessages(response, 1 + own.length);
    assert.equal(checkouts, 1, `the listen took ${checkouts} statements`);
    assert.equal(seen[0].method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual([...seen[0].params.notifications.taskIds].sort(), [...own].sort());
    assert.deepEqual(seen.slice(1).map((m) => m.params.taskId).sort(), [...own].sort());
    for (const taskId of own) await handler.fetch(request('tasks/cancel', { taskId }));
  });

  it('a listen of 101 ids is refused with -32602 naming the cap, before any query', { timeout: 30_000 }, async () => {
    checkouts = 0;
    const response = await handler.fetch(request('subscriptions/listen', { notifications: { taskIds: Array.from({ length: 101 }, () => newTaskId()) } }));
    const reply = (await response.json()) as { error: { code: number; message: string } };
    assert.equal(reply.error.code, -32602);
    assert.match(reply.error.message, /at most 100/);
    assert.equal(checkouts, 0);
  });
});
