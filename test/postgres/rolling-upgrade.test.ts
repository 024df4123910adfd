// A rolling upgrade, expand first: nodes of the previous release keep running beside this
// release's on a schema migrated to the end. The previous release's own statements
// (test/fixtures/previous-release-statements.ts) run on a pool of their own as its node would send
// them, beside this release's PostgresTaskStore; each side must read and write what the other did.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newTaskId, ownerKey, type TaskOwner } from '@mcp-tasks/core';
import { controlChannelOf, loadMigrations, migrate, PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ANSWER, CANCEL, CREATE, CREATE_BATCH, FINISH_COMPLETED, GET, SET_STATUS_MESSAGE, SWEEP } from '../fixtures/previous-release-statements.js';
import { horizonReady } from '../support/partition-horizon.js';
import { testPool } from '../support/pg-clients.js';
import { within } from '../support/within.js';

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

describe('a node of the previous release across the cut-over to the partitioned table (migration 0032)', () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  // One connection: the statements it prepares before the cut-over are the ones it runs after.
  let old: pg.Pool;
  let store: PostgresTaskStore | undefined;
  let node: PostgresTaskNode | undefined;

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    // The expand steps: everything before the cut-over.
    await migrate(admin, 'mcp_tasks', (await loadMigrations()).filter((migration) => migration.version < 32));
    old = testPool({ connectionString: database.url, max: 1 });
  });

  after(async () => {
    await node?.stop();
    await store?.close();
    await old?.end();
    await admin?.end();
    await database?.drop();
  });

  const owner = (): TaskOwner => ({ subject: `user-${randomUUID()}`, server: 'cut-over', clientId: 'client', resource: '' });
  const partitionOf = async (taskId: string): Promise<string | undefined> =>
    (await admin.query<{ p: string }>('SELECT tableoid::regclass::text AS p FROM mcp_tasks.tasks WHERE id = $1', [taskId])).rows[0]?.p;

  it('statements prepared before the cut-over run after it, on rows created on both sides of it', { timeout: 30_000 }, async () => {
    const who = owner();
    const key = ownerKey(who);
    const run = (name: string, text: string, values: unknown[]) => old.query({ name, text, values });
    const create = (taskId: string, ttlMs: number) =>
      run('create', CREATE, [taskId, who.subject, who.server, who.clientId, who.resource, key, 'export', [], null, ttlMs, 1_000, OLD_NODE, 100]);
    const createBatch = (taskId: string, ttlMs: number) =>
      run('create_batch', CREATE_BATCH, [
        [taskId], [who.subject], [who.server], [who.clientId], [who.resource], [key], ['export'], ['[]'], [null],
        [ttlMs], [1_000], [OLD_NODE], [100], [null], [null], [false], [3], [null], [false], [null], [null], CHANNEL,
      ]);

    // Before the cut-over: a create of each kind, and every statement prepared once.
    const a = newTaskId();
    const b = newTaskId();
    assert.equal((await create(a, 3_600_000)).rowCount, 1);
    assert.equal((await createBatch(b, 3_600_000)).rows[0]?.id, b);
    assert.equal((await run('get', GET, [a, key])).rowCount, 1);
    assert.equal((await run('status', SET_STATUS_MESSAGE, ['1/2', a, key, OLD_NODE, CHANNEL])).rowCount, 1);
    assert.equal((await run('finish', FINISH_COMPLETED, ['{}', 'none', key, OLD_NODE, CHANNEL])).rowCount, 0);
    assert.equal((await run('cancel', CANCEL, ['none', key, CHANNEL])).rowCount, 0);
    assert.equal((await run('answer', ANSWER, ['{}', 'working', 'none', CHANNEL])).rowCount, 0);
    await run('sweep', SWEEP, ['-infinity', 100]);
    const prepared = ['create', 'create_batch', 'get', 'status', 'finish', 'cancel', 'answer', 'sweep'];

    // The cut-over, by this release's node at its start, and its first partitions.
    store = await PostgresTaskStore.connect({ connectionString: database.url, poolSize: 2 });
    node = new PostgresTaskNode(store, { lease: false, reaper: false, listener: false, rescuer: false, stats: false, sweeper: false });
    assert.ok((await within(node.partitioner!.runOnce(), 10_000, 'a partition round')).made > 0);
    await horizonReady(admin);
    const { rows: kind } = await admin.query<{ relkind: string }>(`SELECT relkind FROM pg_class WHERE oid = 'mcp_tasks.tasks'::regclass`);
    assert.equal(kind[0]?.relkind, 'p', 'tasks is partitioned');
    assert.equal(await partitionOf(a), 'mcp_tasks.tasks_unbounded', 'rows of before the cut-over stay in the old table');

    // After: the rows of before, through the statements prepared before.
    assert.equal((await run('get', GET, [a, key])).rows[0]?.status_message, '1/2');
    assert.equal((await run('finish', FINISH_COMPLETED, ['{}', a, key, OLD_NODE, CHANNEL])).rowCount, 1);
    assert.equal((await store.get({ taskId: a, owner: who }))?.status, 'completed');
    assert.equal((await run('status', SET_STATUS_MESSAGE, ['2/2', b, key, OLD_NODE, CHANNEL])).rowCount, 1);
    assert.equal((await store.get({ taskId: b, owner: who }))?.statusMessage, '2/2');

    // Rows created after, by either release, go to their hour; each release reads and writes the other's.
    const c = newTaskId();
    const d = newTaskId();
    assert.equal((await create(c, 3_600_000)).rowCount, 1);
    assert.equal((await createBatch(d, 3_600_000)).rows[0]?.id, d);
    assert.match((await partitionOf(c)) ?? '', /^mcp_tasks\.tasks_p\d{10}$/);
    assert.match((await partitionOf(d)) ?? '', /^mcp_tasks\.tasks_p\d{10}$/);
    // The history of a task the previous release created goes to its hour too (the trigger writes the key, migration 0035).
    const { rows: history } = await admin.query<{ p: string }>('SELECT DISTINCT tableoid::regclass::text AS p FROM mcp_tasks.task_events WHERE task_id = $1', [c]);
    assert.deepEqual(history.map((row) => row.p), [(await partitionOf(c))!.replace('.tasks_p', '.task_events_p')]);
    assert.equal((await run('cancel', CANCEL, [d, key, CHANNEL])).rowCount, 1);
    assert.equal((await store.get({ taskId: d, owner: who }))?.status, 'cancelled');
    const e = await store.create({ taskId: newTaskId(), owner: who, tool: 'export', scopes: [], ttlMs: 3_600_000, pollIntervalMs: 1_000, nodeId: 'new-node' }, { maxLive: 100 });
    assert.equal((await run('get', GET, [e.taskId, key])).rows[0]?.node_id, 'new-node');
    assert.equal((await run('answer', ANSWER, ['{}', 'working', e.taskId, CHANNEL])).rowCount, 1);
    assert.equal((await store.get({ taskId: c, owner: who }))?.nodeId, OLD_NODE);

    // The previous release's sweep on the partitioned table deletes only expired rows, and takes
    // their steps and events along (the foreign keys' cascade is a trigger now).
    const expiring = newTaskId();
    assert.equal((await create(expiring, 1)).rowCount, 1);
    await admin.query(`INSERT INTO mcp_tasks.task_steps (task_id, name) VALUES ($1, 'file-1')`, [expiring]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await run('sweep', SWEEP, ['-infinity', 100])).rows[0]?.deleted, 1);
    const { rows: left } = await admin.query<{ steps: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM mcp_tasks.task_steps WHERE task_id = $1) AS steps, (SELECT count(*)::int FROM mcp_tasks.task_events WHERE task_id = $1) AS events`,
      [expiring],
    );
    assert.deepEqual(left[0], { steps: 0, events: 0 });
    for (const id of [a, b, c, d, e.taskId]) assert.ok(await partitionOf(id), `${id} stays`);

    // And every one of them ran prepared, on the connection that prepared it before the cut-over.
    const { rows: names } = await old.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    assert.deepEqual(names.map((row) => row.name), [...prepared].sort());
  });
});
