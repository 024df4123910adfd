// Group commit: the creates and the finishes that arrive while one of their kind is under way go to
// PostgreSQL together, one statement and one commit, and each is answered as it would be alone:
// a refused row (quota, id taken, lost compare-and-set, a value PostgreSQL cannot store) fails
// only its own request, the quota stays exact, one task's writes keep their order, and a batch
// whose connection dies before its commit acknowledges nothing it lost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InvalidTaskValueError, QuotaExceededError, StoredBytesExceededError, TASK_ROW_BYTES, newTaskId, outcomeChargeOf, ownerKey, type NewTask, type TaskOwner, type TaskRecord, type TaskRef } from '@mcp-tasks/core';
import { PostgresTaskStore, controlChannelOf } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testClient, testPool } from '../support/pg-clients.js';
import { within } from '../support/within.js';

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;
/** Statements the store sent through the pool's query (its prepared hot statements), by name. */
const sent: string[] = [];

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 6, application_name: 'group-commit-store' });
  store = await PostgresTaskStore.connect({ pool });
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
    const name = (config as { name?: unknown } | null)?.name;
    if (typeof name === 'string') sent.push(name.replace(/_[0-9a-f]{16}$/, ''));
    return query(config, ...rest);
  };
});

after(async () => {
  await store?.close();
  await pool?.end();
  await database?.drop();
});

let owners = 0;
const freshOwner = (): TaskOwner => ({ subject: `owner-${++owners}`, server: 'group-commit', clientId: '', resource: '' });
const task = (owner: TaskOwner, nodeId: string | null = 'n'): NewTask => ({ taskId: newTaskId(), owner, tool: 'export', scopes: ['export'], ttlMs: 60_000, pollIntervalMs: 1_000, nodeId });
const refOf = (record: TaskRecord): TaskRef => ({ taskId: record.taskId, owner: record.owner });

/** What each promise came to: its value, or the class name of its error. */
async function settled<T>(promises: Promise<T>[]): Promise<(T | string)[]> {
  const results = await within(Promise.allSettled(promises), 20_000, 'the writes');
  return results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).constructor.name));
}

async function rowsOf(ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; status: string }>('SELECT id, status FROM mcp_tasks.tasks WHERE id = ANY($1::text[])', [ids]);
  return new Map(rows.map((row) => [row.id, row.status]));
}

describe('creates asked together', { timeout: 60_000 }, () => {
  it('go out as one statement behind the first, and a refused row fails only its own create', async () => {
    const full = freshOwner();
    await store.create(task(full), { maxLive: 1 });
    const taken = task(freshOwner());
    await store.create(taken, { maxLive: Infinity });
    const ok = [task(freshOwner()), task(freshOwner()), task(freshOwner(), null)];
    sent.length = 0;
    const results = await settled([
      store.create(ok[0]!, { maxLive: 10 }),
      store.create(task(full), { maxLive: 1 }),
      store.create(ok[1]!, { maxLive: Infinity }),
      store.create(taken, { maxLive: Infinity }),
      store.create({ ...task(freshOwner()), statusMessage: 'holds a NUL \u0000' }, { maxLive: Infinity }),
      store.create(ok[2]!, { maxLive: 10 }),
    ]);
    assert.deepEqual(sent.slice(0, 2), ['mcp_tasks_create_task', 'mcp_tasks_create_tasks'], 'the first at once, the five asked meanwhile in one statement');
    assert.equal((results[0] as TaskRecord).taskId, ok[0]!.taskId);
    assert.equal(results[1], QuotaExceededError.name);
    assert.equal((results[2] as TaskRecord).taskId, ok[1]!.taskId);
    assert.equal(results[3], InvalidTaskValueError.name, 'an id already taken');
    assert.equal(results[4], InvalidTaskValueError.name, 'a value PostgreSQL cannot store (the batch is retried row by row)');
    assert.equal((results[5] as TaskRecord).taskId, ok[2]!.taskId);
    assert.equal((results[5] as TaskRecord).status, 'working');
    const stored = await rowsOf(ok.map((t) => t.taskId));
    assert.equal(stored.size, 3, 'every acknowledged create is stored');
  });

  it('keep each owner\'s quota exact, however many of one owner arrive in one batch, from two stores at once', async () => {
    const second = testPool({ connectionString: database.url, max: 6 });
    const other = await PostgresTaskStore.connect({ pool: second });
    try {
      const crowd = Array.from({ length: 6 }, freshOwner);
      const limit = 4;
      const creates: Promise<TaskRecord>[] = [];
      sent.length = 0;
      for (let i = 0; i < 120; i += 1) creates.push((i % 2 === 0 ? store : other).create(task(crowd[i % crowd.length]!), { maxLive: limit }));
      const results = await settled(creates);
      const { rows } = await pool.query<{ owner_key: string; live: number }>(
        "SELECT owner_key, count(*)::int AS live FROM mcp_tasks.tasks WHERE owner_key = ANY($1::text[]) AND status IN ('working', 'input_required') GROUP BY owner_key",
        [crowd.map(ownerKey)],
      );
      assert.ok(sent.includes('mcp_tasks_create_tasks'), 'the creates went in batches');
      assert.deepEqual(rows.map((row) => row.live), crowd.map(() => limit), 'each owner holds exactly its limit');
      assert.equal(results.filter((result) => typeof result !== 'string').length, crowd.length * limit, 'exactly the stored ones were acknowledged');
      assert.equal(results.filter((result) => result === QuotaExceededError.name).length, 120 - crowd.length * limit, 'every other create refused by the quota');
    } finally {
      await other.close();
      await second.end();
    }
  });
});

describe('queued creates in one batch', { timeout: 60_000 }, () => {
  it('announce themselves to the claiming nodes with one NOTIFY for the batch', async () => {
    const listener = testClient(database.url);
    listener.on('error', () => undefined);
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => {
      if (message.payload && JSON.parse(message.payload).op === 'claimable') heard.push(JSON.parse(message.payload).taskId);
    });
    try {
      await listener.query(`LISTEN ${controlChannelOf('mcp_tasks')}`);
      const running = task(freshOwner());
      const queued = [task(freshOwner(), null), task(freshOwner(), null), task(freshOwner(), null)];
      sent.length = 0;
      // The first goes alone (a run of this node: no announcement); the three queued ones go together.
      await within(Promise.all([running, ...queued].map((t) => store.create(t, { maxLive: 10 }))), 10_000, 'the creates');
      assert.deepEqual(sent, ['mcp_tasks_create_task', 'mcp_tasks_create_tasks']);
      await within(
        (async () => {
          while (heard.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
        10_000,
        'the claimable announcement',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(heard.length, 1, 'one NOTIFY for the batch');
      assert.ok(queued.some((t) => t.taskId === heard[0]), 'naming one of its queued tasks');
    } finally {
      await listener.end();
    }
  });
});

describe('the window', { timeout: 60_000 }, () => {
  it('is never open when idle: a write with none of its kind under way is sent at once, alone', async () => {
    const t = task(freshOwner());
    sent.length = 0;
    const creating = store.create(t, { maxLive: 10 });
    assert.deepEqual(sent, ['mcp_tasks_create_task'], 'sent before create() returned, not at the end of the turn');
    const record = await within(creating, 10_000, 'the create');
    sent.length = 0;
    const finishing = store.finish(refOf(record), { status: 'completed', result: { content: [] } });
    assert.deepEqual(sent, ['mcp_tasks_finish_task']);
    assert.equal((await within(finishing, 10_000, 'the finish'))?.status, 'completed');
  });

  it('holds 64 writes at most: more asked in one turn are all answered, in batches', async () => {
    const tasks = Array.from({ length: 150 }, () => task(freshOwner()));
    sent.length = 0;
    const records = await within(Promise.all(tasks.map((t) => store.create(t, { maxLive: 10 }))), 20_000, 'the creates');
    assert.deepEqual(records.map((record) => record.taskId), tasks.map((t) => t.taskId));
    assert.deepEqual(sent, ['mcp_tasks_create_task', 'mcp_tasks_create_tasks', 'mcp_tasks_create_tasks', 'mcp_tasks_create_tasks'], 'the first, then 149 in batches of 64');
    assert.equal((await rowsOf(tasks.map((t) => t.taskId))).size, 150);
  });
});

describe('finishes asked together', { timeout: 60_000 }, () => {
  it('go out as one statement, and a lost compare-and-set or a bad value fails only its own finish', async () => {
    const records = await Promise.all(Array.from({ length: 6 }, () => store.create(task(freshOwner()), { maxLive: Infinity })));
    const [first, second, cancelled, superseded, bad, last] = records.map(refOf) as [TaskRef, TaskRef, TaskRef, TaskRef, TaskRef, TaskRef];
    await store.cancel(cancelled);
    const done = (text: string) => ({ status: 'completed' as const, result: { content: [{ type: 'text' as const, text }] } });
    sent.length = 0;
    const results = await settled([
      store.finish(first, done('first')),
      store.finish(second, { status: 'failed', error: { code: -32000, message: 'no' }, statusMessage: 'it failed' }),
      store.finish(cancelled, done('too late')),
      store.finish(superseded, done('stale run'), { nodeId: 'n', attempt: 7 }),
      store.finish(bad, done('a NUL \u0000')),
      store.finish(last, done('last'), { nodeId: 'n', attempt: 1 }),
    ]);
    assert.deepEqual(sent.slice(0, 2), ['mcp_tasks_finish_task', 'mcp_tasks_finish_tasks']);
    assert.equal((results[0] as TaskRecord).status, 'completed');
    assert.equal((results[1] as TaskRecord).status, 'failed');
    assert.equal((results[1] as TaskRecord).statusMessage, 'it failed');
    assert.equal(results[2], undefined, 'a cancel won');
    assert.equal(results[3], undefined, 'the run no longer holds it');
    assert.equal(results[4], InvalidTaskValueError.name);
    assert.equal((results[5] as TaskRecord).status, 'completed');
    const stored = await rowsOf(records.map((record) => record.taskId));
    assert.deepEqual([...records.map((record) => stored.get(record.taskId))], ['completed', 'failed', 'cancelled', 'working', 'working', 'completed']);
  });

  it('of one task keep their order: the first written wins, the later one finds it ended', async () => {
    const busy = await Promise.all(Array.from({ length: 3 }, () => store.create(task(freshOwner()), { maxLive: Infinity })));
    const [a, b, c] = busy.map(refOf) as [TaskRef, TaskRef, TaskRef];
    const done = (text: string) => ({ status: 'completed' as const, result: { content: [{ type: 'text' as const, text }] } });
    sent.length = 0;
    const results = await settled([store.finish(a, done('a')), store.finish(b, done('b1')), store.finish(c, done('c')), store.finish(b, done('b2')), store.finish(b, done('b3'))]);
    assert.deepEqual(
      results.map((result) => (result === undefined ? undefined : ((result as TaskRecord).result as { content: { text: string }[] }).content[0]!.text)),
      ['a', 'b1', 'c', undefined, undefined],
    );
    assert.ok(sent.filter((name) => name === 'mcp_tasks_finish_tasks').length >= 1, 'some went together');
    const read = await store.get(b);
    assert.deepEqual(read?.result, done('b1').result);
  });
});

describe('a batch whose connection dies before its commit', { timeout: 60_000 }, () => {
  it('acknowledges none of its creates, and none of them is stored; the store goes on', async () => {
    const blocked = freshOwner();
    const holder = testClient(database.url);
    holder.on('error', () => undefined);
    await holder.connect();
    try {
      // The batch waits on the owner's quota lock, its rows before it inserted and not committed.
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [ownerKey(blocked)]);
      const tasks = [task(blocked), ...Array.from({ length: 8 }, () => task(freshOwner())), task(blocked)];
      const creates = tasks.map((t) => store.create(t, { maxLive: 100 }).then(() => 'acknowledged', () => 'failed'));
      await within(
        (async () => {
          for (;;) {
            const { rows } = await holder.query<{ waiting: number }>(
              "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE application_name = 'group-commit-store' AND wait_event_type = 'Lock'",
            );
            if (rows[0]!.waiting === 2) return;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
        10_000,
        'the lone create and the batch waiting on the lock',
      );
      await holder.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'group-commit-store' AND wait_event_type = 'Lock'");
      const outcomes = await within(Promise.all(creates), 10_000, 'the creates');
      const stored = await rowsOf(tasks.map((t) => t.taskId));
      tasks.forEach((t, i) => assert.equal(stored.has(t.taskId), outcomes[i] === 'acknowledged', `task ${i}: stored exactly when acknowledged`));
      assert.deepEqual(outcomes, tasks.map(() => 'failed'), 'the connection died before any commit');
    } finally {
      await holder.end();
    }
    const after = await within(store.create(task(blocked), { maxLive: 100 }), 10_000, 'a create after');
    assert.equal(after.status, 'working');
  });
});

describe('progress written together', { timeout: 60_000 }, () => {
  it('goes out as one statement; a task that ended or is not held settles only its own write, and one task\'s messages land in order', async () => {
    const records = await Promise.all(Array.from({ length: 4 }, () => store.create(task(freshOwner()), { maxLive: Infinity })));
    const [a, b, ended, stale] = records.map(refOf) as [TaskRef, TaskRef, TaskRef, TaskRef];
    await store.cancel(ended);
    sent.length = 0;
    const results = await settled([
      store.setStatusMessage(a, 'a 1/3', { nodeId: 'n', attempt: 1 }),
      store.setStatusMessage(b, 'b 1/2'),
      store.setStatusMessage(ended, 'too late'),
      store.setStatusMessage(stale, 'stale run', { nodeId: 'elsewhere', attempt: 1 }),
      store.setStatusMessage(a, 'a 2/3'),
      store.setStatusMessage(b, 'b 2/2'),
      store.setStatusMessage(a, 'a 3/3'),
    ]);
    assert.deepEqual(
      results.map((result) => (result === undefined ? undefined : (result as TaskRecord).statusMessage)),
      ['a 1/3', 'b 1/2', undefined, undefined, 'a 2/3', 'b 2/2', 'a 3/3'],
    );
    assert.ok(sent.includes('mcp_tasks_set_status_messages'), 'some went together');
    assert.equal((await store.get(a))?.statusMessage, 'a 3/3', 'the last asked is the last written');
    assert.equal((await store.get(b))?.statusMessage, 'b 2/2');
    assert.equal((await store.get(stale))?.statusMessage, null);
  });
});

describe('journal writes together', { timeout: 60_000 }, () => {
  it('step starts and results of several tasks go out as one statement each; a run that lost its task settles only its own', async () => {
    const records = await Promise.all(Array.from({ length: 4 }, () => store.create(task(freshOwner()), { maxLive: Infinity })));
    const refs = records.map(refOf);
    const held = { nodeId: 'n', attempt: 1 };
    const lost = { nodeId: 'n', attempt: 2 };
    await store.cancel(refs[3]!);
    sent.length = 0;
    const begins = await settled([
      store.beginStep(refs[0]!, held, 'fetch'),
      store.beginStep(refs[1]!, held, 'fetch'),
      store.beginStep(refs[2]!, lost, 'fetch'),
      store.beginStep(refs[3]!, held, 'fetch'),
    ]);
    assert.deepEqual(begins, [{ state: 'run', starts: 1 }, { state: 'run', starts: 1 }, { state: 'lost' }, { state: 'lost' }]);
    const results = await settled([
      store.finishStep(refs[0]!, held, 'fetch', { rows: 1 }),
      store.finishStep(refs[1]!, held, 'fetch', { rows: 2 }),
      store.finishStep(refs[2]!, held, 'fetch', { rows: 3 }),
      store.finishStep(refs[1]!, held, 'fetch', { text: 'a NUL \u0000' }),
    ]);
    assert.deepEqual(results, [true, true, false, InvalidTaskValueError.name], 'a step never begun journals nothing; a bad value fails only its own');
    assert.ok(sent.includes('mcp_tasks_begin_steps') && sent.includes('mcp_tasks_finish_steps'), 'both went in batches');
    const again = await settled([store.beginStep(refs[0]!, held, 'fetch'), store.beginStep(refs[1]!, held, 'fetch'), store.beginStep(refs[1]!, held, 'store')]);
    assert.deepEqual(again, [
      { state: 'done', result: { rows: 1 } },
      { state: 'done', result: { rows: 2 } },
      { state: 'run', starts: 1 },
    ]);
  });
});

describe('storage charges in batches', { timeout: 60_000 }, () => {
  it('a full pool refuses only the create past it, and the finishes of one owner in one batch charge their large outcomes once each', async () => {
    const owner = freshOwner();
    const storage = { pool: 'owner' as const, maxBytes: 3 * TASK_ROW_BYTES };
    const first = await store.create(task(owner), { maxLive: Infinity, storage });
    sent.length = 0;
    const creates = await settled([store.create(task(owner), { maxLive: Infinity, storage }), store.create(task(owner), { maxLive: Infinity, storage }), store.create(task(owner), { maxLive: Infinity, storage })]);
    assert.ok(sent.includes('mcp_tasks_create_tasks'), 'the creates went together');
    // Concurrent creates of one owner: which one finds the pool full is theirs to race for.
    assert.deepEqual(creates.map((c) => (typeof c === 'string' ? c : 'created')).sort(), ['created', 'created', StoredBytesExceededError.name].sort());
    const made = creates.filter((c): c is TaskRecord => typeof c !== 'string');
    const kept = async () =>
      Number((await pool.query<{ bytes: string }>('SELECT coalesce(sum(bytes), 0) AS bytes FROM mcp_tasks.task_storage WHERE storage_key = $1', [ownerKey(owner)])).rows[0]!.bytes);
    assert.equal(await kept(), 3 * TASK_ROW_BYTES);
    const large = (n: number) => ({ status: 'completed' as const, result: { content: [{ type: 'text' as const, text: 'x'.repeat(n) }] } });
    const outcomes = [large(3_000), large(5_000), large(100)];
    const refs = [first, ...made].map(refOf);
    sent.length = 0;
    const finished = await settled(refs.map((ref, i) => store.finish(ref, outcomes[i]!)));
    assert.ok(sent.includes('mcp_tasks_finish_tasks'), 'the finishes went together');
    assert.deepEqual(finished.map((f) => (f as TaskRecord).status), ['completed', 'completed', 'completed']);
    assert.equal(await kept(), 3 * TASK_ROW_BYTES + outcomes.reduce((sum, outcome) => sum + outcomeChargeOf(outcome), 0));
  });
});

describe('create batches charging the shared pool side by side', { timeout: 60_000 }, () => {
  it('never deadlock: each batch takes its counter rows in the counter table\'s order', async () => {
    // Two stores of their own pools (named, so their server processes can be waited out: a backend
    // reports its deadlocks to pg_stat_database at the latest when it exits).
    const names = ['group-commit-shared-a', 'group-commit-shared-b'];
    const pools = names.map((name) => testPool({ connectionString: database.url, max: 4, application_name: name }));
    const stores = await Promise.all(pools.map((p) => PostgresTaskStore.connect({ pool: p })));
    const deadlocks = async () => Number((await pool.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n);
    const before = await deadlocks();
    try {
      // Callers without a subject share one pool ('*'), spread over shard rows; TTLs a minute
      // apart put the rows of one batch on several counter rows.
      const storage = { pool: 'shared' as const, maxBytes: 1e12 };
      const creates: Promise<TaskRecord>[] = [];
      for (let i = 0; i < 400; i += 1) {
        creates.push(stores[i % 2]!.create({ ...task(freshOwner()), ttlMs: 60_000 * (1 + (i % 5)) }, { maxLive: Infinity, storage }));
      }
      const results = await settled(creates);
      assert.equal(results.filter((result) => typeof result === 'string').length, 0, `every create is stored: ${results.filter((r) => typeof r === 'string').slice(0, 3).join(', ')}`);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await Promise.all(pools.map((p) => p.end()));
    }
    await within(
      (async () => {
        while (Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = ANY($1::text[])', [names])).rows[0]!.n) > 0) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })(),
      10_000,
      'the stores\' server processes to exit',
    );
    assert.equal((await deadlocks()) - before, 0, 'no create batch deadlocked (each would have waited deadlock_timeout, then been retried row by row)');
  });
});
