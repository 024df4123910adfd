// Reads asked while a read is under way go to PostgreSQL together, as one statement (polling
// clients are the hot path); a read with none under way goes at once. Each still gets exactly its
// own owner's answer: what a read alone would give.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newTaskId, type NewTask, type TaskOwner, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';
import { recordStatementNames, testPool } from '../support/pg-clients.js';

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;
/** Statements the store sent through the pool's query (its prepared hot statements), by name. */
let sent: string[] = [];

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 4 });
  store = await PostgresTaskStore.connect({ pool });
  sent = recordStatementNames(pool);
});

after(async () => {
  await store?.close();
  await pool?.end();
  await database?.drop();
});

const ownerNamed = (subject: string): TaskOwner => ({ subject, server: 'batch', clientId: '', resource: '' });
const alice = ownerNamed('alice');
const bob = ownerNamed('bob');
const task = (owner: TaskOwner, ttlMs: number | null = 60_000): NewTask => ({ taskId: newTaskId(), owner, tool: 'export', scopes: ['export'], ttlMs, pollIntervalMs: 1_000, nodeId: 'n' });

async function created(owner: TaskOwner, ttlMs?: number | null): Promise<TaskRef> {
  const t = task(owner, ttlMs);
  await store.create(t, { maxLive: Infinity });
  return { taskId: t.taskId, owner };
}

describe('reads asked together', { timeout: 60_000 }, () => {
  it('go out as one statement behind the first, and each gets what it would get alone: its own, none of another owner\'s, nothing expired', async () => {
    const a1 = await created(alice);
    const a2 = await created(alice);
    const b1 = await created(bob);
    const gone = await created(alice, 1);
    await store.finish(a2, { status: 'completed', result: { content: [{ type: 'text', text: 'a2' }] } });
    await store.requestInput(b1, 'ok', { method: 'elicitation/create', params: { mode: 'form', message: 'Go?', requestedSchema: { type: 'object', properties: {} } } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const refs: TaskRef[] = [a1, a2, b1, { taskId: b1.taskId, owner: alice }, { taskId: newTaskId(), owner: alice }, gone, a1];
    const alone = [];
    for (const ref of refs) alone.push(await store.read(ref));
    sent.length = 0;
    const together = await within(Promise.all(refs.map((ref) => store.read(ref))), 10_000, 'the reads');
    assert.deepEqual(sent, ['mcp_tasks_read_task', 'mcp_tasks_read_task_batch'], 'the first at once, the six asked meanwhile in one statement');
    assert.deepEqual(together, alone);
    assert.deepEqual(
      together.map((snapshot) => snapshot?.status),
      ['working', 'completed', 'input_required', undefined, undefined, undefined, 'working'],
    );
    assert.notEqual(together[0], together[6], 'a task read twice is two objects');
    assert.equal(together[2]?.inputs['ok']?.request.method, 'elicitation/create');
  });

  it('a read with none under way is the single-row statement, sent at once (not at the end of the turn)', async () => {
    const ref = await created(alice);
    sent.length = 0;
    const read = store.read(ref);
    assert.deepEqual(sent, ['mcp_tasks_read_task'], 'sent before read() returned');
    assert.equal((await within(read, 10_000, 'the read'))?.status, 'working');
  });

  it('an owner with control characters in its name reads nothing, and fails no read beside it', async () => {
    const ref = await created(alice);
    const odd = { taskId: ref.taskId, owner: ownerNamed('mallory\u0000\n') };
    sent.length = 0;
    const [good, strange, again] = await within(Promise.all([store.read(ref), store.read(odd), store.read(ref)]), 10_000, 'the reads');
    assert.deepEqual(sent, ['mcp_tasks_read_task', 'mcp_tasks_read_task_batch']);
    assert.equal(good?.status, 'working');
    assert.equal(strange, undefined);
    assert.equal(again?.status, 'working');
  });

  it('more reads than one batch holds are all answered', async () => {
    const refs = await Promise.all(Array.from({ length: 10 }, () => created(bob)));
    const many = Array.from({ length: 150 }, (_, i) => refs[i % refs.length]!);
    sent.length = 0;
    const snapshots = await within(Promise.all(many.map((ref) => store.read(ref))), 10_000, 'the reads');
    assert.deepEqual(snapshots.map((s) => s?.taskId), many.map((ref) => ref.taskId));
    assert.deepEqual(sent, ['mcp_tasks_read_task', 'mcp_tasks_read_task_batch', 'mcp_tasks_read_task_batch', 'mcp_tasks_read_task_batch'], 'the first, then 149 in batches of 64');
  });
});
