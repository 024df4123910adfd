// Internal details never reach clients: a PostgreSQL or JavaScript error answers -32603 with a
// generic message and a reference, and the details are logged under that reference; answers are
// looked up by own keys only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultLogger, setDefaultLogger } from '@mcp-tasks/core';
import { taskTools } from '@mcp-tasks/demo';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks } from '@mcp-tasks/server';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import pg from 'pg';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testClient } from '../support/pg-clients.js';
import { answerOf } from '../support/sse.js';

const quiet = { warn: () => {}, error: () => {} };
let database: TestDatabase;
let tasks: McpTasks;
let handler: McpHttpHandler;

before(async () => {
  database = await createTestDatabase();
  const store = await PostgresTaskStore.connect({ connectionString: database.url, logger: quiet });
  tasks = new McpTasks({ store, pollIntervalMs: 60_000 });
  handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'internal-errors', version: '1.0.0' });
    tasks.register(server, taskTools);
    return server;
  });
});

after(async () => {
  await handler.close();
  await tasks.close();
  await database.drop();
});

async function rpc(method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await handler.fetch(new Request('http://localhost/mcp', { method: 'POST', headers: requestHeaders(method, params), body: requestBody(method, params, true) }));
  const text = await response.text();
  return answerOf(text);
}

/** A confirm_delete task waiting for its `confirm` answer. */
async function waitingTask(): Promise<string> {
  const created = await rpc('tools/call', { name: 'confirm_delete', arguments: { filename: 'notes.txt' } });
  const taskId = created.result?.taskId as string;
  assert.ok(taskId, JSON.stringify(created));
  const deadline = Date.now() + 5_000;
  while ((await rpc('tasks/get', { taskId })).result?.status !== 'input_required') {
    if (Date.now() > deadline) throw new Error('the task never asked');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return taskId;
}

describe('internal errors', () => {
  it('a PostgreSQL error answers -32603 "Internal error (ref …)" and the details go to the log under that reference', { timeout: 30_000 }, async () => {
    const taskId = await waitingTask();
    const logged: unknown[][] = [];
    const original = defaultLogger();
    const admin = testClient({ connectionString: database.url });
    await admin.connect();
    let reply;
    try {
      // The table is gone for a moment: every read fails with PostgreSQL's "relation … does not exist".
      await admin.query('ALTER TABLE mcp_tasks.tasks RENAME TO tasks_away');
      setDefaultLogger({ ...original, error: (fields, message) => void logged.push([message, JSON.stringify(fields)]) });
      reply = await rpc('tasks/get', { taskId });
    } finally {
      setDefaultLogger(original);
      await admin.query('ALTER TABLE mcp_tasks.tasks_away RENAME TO tasks');
      await admin.end();
    }
    assert.equal(reply.error?.code, -32603, JSON.stringify(reply));
    const match = /^Internal error \(ref ([0-9a-f]{12})\)$/.exec(reply.error!.message);
    assert.ok(match, reply.error!.message);
    assert.doesNotMatch(JSON.stringify(reply), /relation|tasks_away|mcp_tasks/);
    const entry = logged.find((args) => args.map(String).join(' ').includes(match[1]!));
    assert.ok(entry, 'the details are logged under the reference');
    assert.match(entry.map(String).join(' '), /relation .* does not exist/);
    assert.equal((await rpc('tasks/get', { taskId })).result?.status, 'input_required', 'nothing changed');
    await rpc('tasks/cancel', { taskId });
  });

  it('an answer that is not Unicode text is bad input (-32602), refused before PostgreSQL sees it, and stores nothing', { timeout: 30_000 }, async () => {
    const taskId = await waitingTask();
    const reply = await rpc('tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: '\ud800' } } } });
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
    assert.doesNotMatch(reply.error!.message, /json|syntax/i);
    assert.equal((await rpc('tasks/get', { taskId })).result?.status, 'input_required', 'nothing was stored');
    await rpc('tasks/cancel', { taskId });
  });

  it('inputResponses keys like constructor and toString are ignored: the task keeps waiting for its own key', { timeout: 30_000 }, async () => {
    const taskId = await waitingTask();
    const answer = { action: 'accept', content: { confirm: true } };
    const reply = await rpc('tasks/update', { taskId, inputResponses: { constructor: answer, toString: answer, hasOwnProperty: answer, valueOf: answer } });
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    assert.equal(reply.result?.resultType, 'complete');
    const task = (await rpc('tasks/get', { taskId })).result;
    assert.equal(task?.status, 'input_required');
    assert.deepEqual(Object.keys(task?.inputRequests ?? {}), ['confirm']);
    await rpc('tasks/cancel', { taskId });
  });
});
