// Every kind of message the 2026-07-28 extension defines, as the server really sends it, conforms
// to the official schema (vendor/ext-tasks/2026-07-28): on both request paths (direct, SDK) and
// both stores (memory, PostgreSQL), a CreateTaskResult, `tasks/get` in each status (working,
// input_required with its inputRequests, completed, failed, cancelled), the `tasks/update` and
// `tasks/cancel` acks, JSON-RPC errors (unknown task, missing extension, malformed answer) and the
// `notifications/tasks` frames of a listen. The raw clients check each one as it arrives
// (test/support/ext-tasks-schema.ts); the assertions here say the case was reached.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { JsonRpcError, MemoryTaskStore, type TaskNode, type TaskStore } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks, type McpTasksHandler } from '@mcp-tasks/server';
import * as z from 'zod';
import { listen } from '../support/notifications-client.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { listeningNode } from '../support/listening-node.js';
import { closeLoopback, serveOnLoopback } from '../support/loopback-http.js';

const asks = defineTool({
  name: 'asks',
  task: 'required',
  input: z.object({}),
  execute: async (_args, ctx) => {
    const answer = await ctx.elicit('ok', { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    return { content: [{ type: 'text', text: `answer: ${answer.action}` }] };
  },
});
const fails = defineTool({
  name: 'fails',
  task: 'required',
  input: z.object({}),
  execute: async () => {
    throw new JsonRpcError(-32050, 'The job failed on purpose', { reason: 'test' });
  },
});
const waits = defineTool({
  name: 'waits',
  task: 'required',
  input: z.object({}),
  execute: async (_args, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    return { content: [] };
  },
});

interface Backing {
  readonly store: TaskStore;
  /** What delivers a shared store's changes to the listen stream. */
  readonly node?: TaskNode;
  close(): Promise<void>;
}

const STORES: Record<string, () => Promise<Backing>> = {
  memory: async () => {
    const store = new MemoryTaskStore();
    return { store, close: () => store.close() };
  },
  PostgreSQL: async () => {
    const db: TestDatabase = await createTestDatabase();
    const store = await PostgresTaskStore.connect({ connectionString: db.url });
    const node = await listeningNode(store, { rescuer: false });
    return { store, node, close: async () => (await node.stop(), await store.close(), await db.drop()) };
  },
};

for (const [storeName, open] of Object.entries(STORES)) {
  for (const direct of [true, false]) {
    describe(`the server's 2026-07-28 messages conform to the official schema (${storeName} store, ${direct ? 'direct' : 'SDK'} path)`, { timeout: 60_000 }, () => {
      let backing: Backing;
      let tasks: McpTasks;
      let handler: McpTasksHandler;
      let http: Server;
      let url: string;
      before(async () => {
        backing = await open();
        tasks = new McpTasks({ store: backing.store, ...(backing.node ? { node: backing.node } : {}), pollIntervalMs: 50, rateLimit: false });
        handler = tasks.handler({ name: 'schema-live', version: '1', tools: [asks, fails, waits], directTasks: direct });
        ({ http, url } = await serveOnLoopback(handler));
      });
      after(async () => {
        await closeLoopback(http);
        await handler?.close();
        await tasks?.close();
        await backing?.close();
      });

      const create = async (name: string): Promise<string> => {
        const created = await rpc(url, 'tools/call', { name, arguments: {} });
        assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
        return created.result!['taskId'] as string;
      };

      it('a task asking for input, answered, completes: every answer on the way conforms, and so do the listen frames', async () => {
        const taskId = await create('asks');
        const stream = await listen(url, [taskId]);
        try {
          const waiting = await waitFor(url, taskId, (task) => task['status'] === 'input_required');
          assert.ok(waiting['inputRequests']?.['ok'], 'inputRequests carries the key');
          const malformed = await rpc(url, 'tasks/update', { taskId, inputResponses: { ok: { method: 'elicitation/create', result: { action: 'accept' } } } });
          assert.equal(malformed.error?.code, -32602);
          const ack = await rpc(url, 'tasks/update', { taskId, inputResponses: { ok: { action: 'accept', content: { ok: true } } } });
          assert.equal(ack.result?.['resultType'], 'complete');
          const done = await waitFor(url, taskId, (task) => task['status'] === 'completed');
          assert.ok(done['result'], 'the result is inlined');
          await stream.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks' && m['params']?.['status'] === 'completed'), 10_000, 'the completed frame');
          assert.ok(stream.tasks().some((task) => task['status'] === 'input_required'), 'an input_required frame was checked too');
        } finally {
          stream.abort();
        }
      });

      it('a failed task, a cancelled one and the errors conform', async () => {
        const failed = await waitFor(url, await create('fails'), (task) => task['status'] === 'failed');
        assert.equal(failed['error']?.['code'], -32050);
        const waiting = await create('waits');
        assert.equal((await rpc(url, 'tasks/cancel', { taskId: waiting })).result?.['resultType'], 'complete');
        await waitFor(url, waiting, (task) => task['status'] === 'cancelled');
        assert.equal((await rpc(url, 'tasks/get', { taskId: 'x'.repeat(24) })).error?.code, -32602);
        assert.equal((await rpc(url, 'tasks/get', { taskId: waiting }, { tasks: false })).error?.code, -32021);
      });
    });
  }
}
