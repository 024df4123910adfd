// A rolling upgrade, expand first: nodes of the previous release keep running beside this
// release's on a schema migrated to the end. The previous release's own statements
// (test/fixtures/previous-release-statements.ts) run on a pool of their own as its node would send
// them, beside this release's PostgresTaskStore; each side must read and write what the other did.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newTaskId, ownerKey, type TaskOwner } from '@mcp-tasks/core';
import { controlChannelOf, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ANSWER, CANCEL, CREATE, FINISH_COMPLETED, GET, SET_STATUS_MESSAGE } from '../fixtures/previous-release-statements.js';
import { testPool } from '../support/pg-clients.js';

const CHANNEL = controlChannelOf('mcp_tasks');
const OLD_NODE = 'previous-release-node';
const REQUEST = { method: 'elicitation/create', params: { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } } } as const;

describe('a node of the previous release beside this release, on the migrated schema', () => {
  let database: TestDatabase;
  let store: PostgresTaskStore;
  let old: pg.Pool;

  before(async () => {
    database = await createTestDatabase();
    // This release migrates (0001 to the last); the previous release's node keeps its statements.
    store = await PostgresTaskStore.connect({ connectionString: database.url, poolSize: 2 });
    old = testPool({ connectionString: database.url, max: 2 });
  });

  after(async () => {
    await store?.close();
    await old?.end();
    await database?.drop();
  });

  const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'upgrade', clientId: 'client', resource: '' });
  const oldCreate = async (who: TaskOwner, tool = 'export') => {
    const taskId = newTaskId();
    const { rows } = await old.query(CREATE, [taskId, who.subject, who.server, who.clientId, who.resource, ownerKey(who), tool, [], null, 60_000, 1_000, OLD_NODE, 100]);
    assert.equal(rows.length, 1, 'the previous release creates its task');
    return { taskId, owner: who };
  };

  it('a task the previous release creates, runs and finishes reads on this release as one attempt of a tool that is not resumable', async () => {
    const ref = await oldCreate(owner());
    const created = await store.get(ref);
    assert.deepEqual([created?.status, created?.nodeId, created?.attempt, created?.handovers, created?.resumable, created?.args], ['working', OLD_NODE, 1, 0, false, null]);
    const key = ownerKey(ref.owner);
    assert.equal((await old.query(SET_STATUS_MESSAGE, ['1/2', ref.taskId, key, OLD_NODE, CHANNEL])).rowCount, 1);
    assert.equal((await store.get(ref))?.statusMessage, '1/2');
    const result = { content: [{ type: 'text', text: 'done' }] };
    assert.equal((await old.query(FINISH_COMPLETED, [JSON.stringify(result), ref.taskId, key, OLD_NODE, CHANNEL])).rowCount, 1);
    const finished = await store.get(ref);
    assert.deepEqual([finished?.status, finished?.result], ['completed', result]);
    // This release's fenced write of the same node finds the attempt the migration gave it.
    assert.equal(await store.setStatusMessage(ref, 'late', { nodeId: OLD_NODE, attempt: 1 }), undefined, 'a finished task takes no write');
  });

  it('a task queued by this release is none of the previous release\'s: its run writes miss it, and it reads it as working', async () => {
    const who = owner();
    const queued = await store.create({ taskId: newTaskId(), owner: who, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: null }, { maxLive: 100 });
    const key = ownerKey(who);
    assert.equal((await old.query(FINISH_COMPLETED, ['{}', queued.taskId, key, OLD_NODE, CHANNEL])).rowCount, 0);
    const { rows } = await old.query(GET, [queued.taskId, key]);
    assert.deepEqual([rows[0].status, rows[0].node_id], ['working', null]);
    // Its quota count (create_task()) still counts this release's live tasks.
    const limited = newTaskId();
    const refused = await old.query(CREATE, [limited, who.subject, who.server, who.clientId, who.resource, key, 'export', [], null, 60_000, 1_000, OLD_NODE, 1]).catch((error: { code?: string }) => error.code);
    assert.equal(refused, 'MTQ01', 'the owner is at its limit of one live task');
  });

  it('an answer written by the previous release to a task parked by this release makes it claimable, and this release claims it', async () => {
    const who = owner();
    const tool = `ask-${randomUUID()}`;
    const task = await store.create({ taskId: newTaskId(), owner: who, tool, scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'new-node', resumable: true }, { maxLive: 100 });
    const ref = { taskId: task.taskId, owner: who };
    const claim = { nodeId: 'new-node', attempt: task.attempt };
    assert.equal((await store.requestInput(ref, 'go', REQUEST, claim)).state, 'pending');
    assert.equal(await store.park(ref, claim, 'go'), true);
    assert.equal(await store.claim('new-node', [tool]), undefined, 'waiting for its answer, it is not claimable');
    // The previous release's tasks/update: its locked read decided 'working' with every key answered.
    const answered = { go: { request: REQUEST, response: { action: 'accept', content: {} } } };
    assert.equal((await old.query(ANSWER, [JSON.stringify(answered), 'working', ref.taskId, CHANNEL])).rowCount, 1);
    const claimed = await store.claim('new-node', [tool]);
    assert.equal(claimed?.taskId, ref.taskId);
    assert.deepEqual([claimed?.attempt, claimed?.handovers], [2, 1], 'the wait used no attempt');
    assert.equal((await store.readInput(ref, 'go')).state, 'answered');
  });

  it('a cancel from the previous release ends a task this release runs, and fences its run off', async () => {
    const who = owner();
    const task = await store.create({ taskId: newTaskId(), owner: who, tool: 'export', scopes: [], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId: 'new-node', resumable: true }, { maxLive: 100 });
    const ref = { taskId: task.taskId, owner: who };
    assert.equal((await old.query(CANCEL, [ref.taskId, ownerKey(who), CHANNEL])).rowCount, 1);
    assert.equal(await store.finish(ref, { status: 'completed', result: { content: [] } }, { nodeId: 'new-node', attempt: task.attempt }), undefined);
    assert.equal((await store.get(ref))?.status, 'cancelled');
  });
});
