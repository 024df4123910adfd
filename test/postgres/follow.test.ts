import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { newTaskId, type NewTask, type TaskOutcome, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskNode } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { listeningNode } from '../support/listening-node.js';
import { testClient } from '../support/pg-clients.js';

const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'follow', clientId: 'client', resource: '' });
const newTask = (): NewTask => ({ taskId: newTaskId(), owner: owner(), tool: 't', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'a' });
const DONE: TaskOutcome = { status: 'completed', result: { content: [] } };

describe('following tasks across nodes', () => {
  let database: TestDatabase;
  let writer: PostgresTaskStore;
  let follower: PostgresTaskStore;
  let followerNode: PostgresTaskNode;
  let raw: pg.Client;
  const notifications: string[] = [];

  before(async () => {
    database = await createTestDatabase();
    writer = await PostgresTaskStore.connect({ connectionString: database.url });
    follower = await PostgresTaskStore.connect({ connectionString: database.url });
    followerNode = await listeningNode(follower);
    raw = testClient({ connectionString: database.url });
    await raw.connect();
    raw.on('notification', (n) => notifications.push(n.payload ?? ''));
    await raw.query(`LISTEN ${writer.schema}_control`);
  });

  after(async () => {
    await raw.end();
    await followerNode.stop();
    await writer.close();
    await follower.close();
    await database.drop();
  });

  test('a follower on another node hears input_required, working and the terminal status', async () => {
    const task = newTask();
    await writer.create(task, { maxLive: Infinity });
    const ref: TaskRef = task;
    const seen: string[] = [];
    let pings = 0;
    const unfollow = await followerNode.follow(ref, () => {
      pings += 1;
      void follower.get(ref).then((t) => t && seen.push(t.status));
    });
    assert.ok(unfollow);
    await followerNode.listener!.testSignals.listening.waitOnce();
    await writer.requestInput(ref, 'k', { method: 'elicitation/create', params: { message: '?' } });
    await until(() => seen.includes('input_required'));
    await writer.answerInput(ref, { k: { action: 'accept', content: {} } });
    await until(() => seen.includes('working'));
    await writer.finish(ref, DONE);
    await until(() => seen.includes('completed'));
    unfollow();
    assert.ok(pings >= 3);
  });

  test('creating and completing a task nobody follows sends no NOTIFY; a followed one does', async () => {
    notifications.length = 0;
    const quiet = newTask();
    await writer.create(quiet, { maxLive: 100 });
    await writer.setStatusMessage(quiet, '1/2');
    await writer.finish(quiet, DONE);
    const followed = newTask();
    await writer.create(followed, { maxLive: 100 });
    const unfollow = await followerNode.follow(followed, () => {});
    await writer.finish(followed, DONE);
    await until(() => notifications.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(notifications.map((p) => JSON.parse(p)), [{ op: 'status', taskId: followed.taskId }]);
    unfollow?.();
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
