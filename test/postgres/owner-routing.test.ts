// The path past one PostgreSQL (docs/scale-out.md, "Past one PostgreSQL: Citus by owner"): with
// the tasks and their journal distributed by owner, a statement that names the owner key goes to
// one shard, and one that does not goes to every shard. So every statement the request path sends
// to the distributed tables must filter by the owner key of the request, or its store method is
// listed below as crossing owners, with what it becomes on Citus. The statements are taken from the
// store's own connections as each store method runs (one method at a time, so each statement is
// attributed to the method that sent it), and checked with their parameters: `owner_key = $n`
// must compare with the request's owner key, not any value.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { newTaskId, ownerKey, type NewTask, type TaskOwner, type TaskRecord } from '@mcp-tasks/core';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';

/**
 * Store methods whose statements cross owners, each with its answer on Citus (the design in
 * docs/scale-out.md). Anything else the request path sends names its owner.
 */
const CROSS_OWNER: Readonly<Record<string, string>> = {
  claim: 'a claim by the owner its claimable NOTIFY names (one shard); the walk over owners only as the backstop poll, shard by shard',
  countLive: "a gateway's count of an upstream's live tasks over every owner: a per-tool counter row, or the leader's cluster_stats",
};

/** The store's methods that are not the request path: connecting, closing, the readiness ping. */
const NOT_REQUEST_PATH = new Set(['constructor', 'close', 'ping']);

/** Tables distributed by owner, and the create function (distributed by its p_owner_key argument). */
const DISTRIBUTED = /"(tasks|task_steps|task_events)"|create_durable_task/;

interface Sent {
  readonly method: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * Why `statement` is not routed to the shard of `key`, or undefined when it is: it touches no
 * distributed table, or it compares owner_key with a parameter that is `key` (or, for a batch of
 * refs, joins on an array of owner keys), or it passes `key` to the create function.
 */
function unrouted(statement: Pick<Sent, 'text' | 'values'>, key: string): string | undefined {
  const { values } = statement;
  // An aggregate's FILTER picks rows after they are read: it routes nothing.
  const text = statement.text.replace(/FILTER\s*\(\s*WHERE[^)]*\)/gi, '');
  if (!DISTRIBUTED.test(text)) return undefined;
  for (const match of text.matchAll(/owner_key\s*=\s*\$(\d+)/g)) if (values[Number(match[1]) - 1] === key) return undefined;
  if (/owner_key\s*=\s*r\.owner_key/.test(text) && values.some((v) => Array.isArray(v) && v.length > 0 && v.every((k) => k === key))) return undefined;
  if (/create_durable_task"?\s*\(/.test(text) && values.includes(key)) return undefined;
  return 'no owner_key filter on the request owner';
}

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresTaskStore;
const sent: Sent[] = [];
let current: string | undefined;

before(async () => {
  database = await createTestDatabase();
  pool = testPool({ connectionString: database.url, max: 2 });
  // kysely calls client.query(text, values); prepared statements pass { name, text, values }.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string; values?: unknown[] };
      const text = typeof first === 'string' ? first : (first.text ?? '');
      const values = (typeof first === 'string' ? args[1] : first.values) ?? [];
      if (current !== undefined) sent.push({ method: current, text, values: values as unknown[] });
      return query(...args);
    };
  });
  store = await PostgresTaskStore.connect({ pool });
});

after(async () => {
  await store?.close();
  await pool?.end();
  await database?.drop();
});

/** Runs one store method with its statements attributed to it. */
async function as<T>(method: string, work: () => Promise<T>): Promise<T> {
  current = method;
  try {
    return await work();
  } finally {
    current = undefined;
  }
}

const ownerOf = (name: string): TaskOwner => ({ subject: `${name}-${randomUUID()}`, server: 'routing', clientId: 'client', resource: '' });
const newTask = (owner: TaskOwner, nodeId: string | null): NewTask => ({
  taskId: newTaskId(),
  owner,
  tool: 'export',
  scopes: [],
  ttlMs: 600_000,
  pollIntervalMs: 1_000,
  nodeId,
  args: { n: 1 },
  resumable: true,
});

test('every statement of the request path names the owner key, or its method is listed as crossing owners', { timeout: 60_000 }, async () => {
  const owner = ownerOf('routed');
  const key = ownerKey(owner);
  const storage = { pool: 'owner' as const, maxBytes: 1_000_000 };

  // A queued task claimed by a node, through its journal, an input asked, parked, answered,
  // claimed again, finished; a second task cancelled; and every read of the protocol.
  const queued = await as('create', () => store.create(newTask(owner, null), { maxLive: 10, storage }));
  const ref = { taskId: queued.taskId, owner };
  const claimed = (await as('claim', () => store.claim('node-a', ['export']))) as TaskRecord;
  assert.equal(claimed.taskId, queued.taskId);
  const claim = { nodeId: 'node-a', attempt: claimed.attempt ?? 1 };
  await as('beginStep', () => store.beginStep(ref, claim, 'fetch'));
  await as('finishStep', () => store.finishStep(ref, claim, 'fetch', { rows: 3 }));
  await as('setStatusMessage', () => store.setStatusMessage(ref, 'fetched', claim));
  await as('requestInput', () => store.requestInput(ref, 'confirm', { method: 'elicitation/create', params: { message: 'go?' } }, claim));
  await as('readInput', () => store.readInput(ref, 'confirm'));
  assert.equal(await as('park', () => store.park(ref, claim, 'confirm')), true);
  await as('answerInput', () => store.answerInput(ref, { confirm: { action: 'accept' } }));
  const again = (await as('claim', () => store.claim('node-b', ['export']))) as TaskRecord;
  const claimAgain = { nodeId: 'node-b', attempt: again.attempt ?? 2 };
  await as('release', () => store.release(ref, claimAgain));
  const third = (await as('claim', () => store.claim('node-b', ['export']))) as TaskRecord;
  await as('finish', () => store.finish(ref, { status: 'completed', result: { content: [] } }, { nodeId: 'node-b', attempt: third.attempt ?? 3 }));

  const other = await as('create', () => store.create(newTask(owner, 'node-a'), { maxLive: 10 }));
  const otherRef = { taskId: other.taskId, owner };
  await as('markFollowed', () => store.markFollowed(otherRef));
  await as('markFollowedMany', () => store.markFollowedMany(owner, [other.taskId, queued.taskId]));
  await as('controlStates', () => store.controlStates([otherRef]));
  await as('cancel', () => store.cancel(otherRef));
  await as('get', () => store.get(ref));
  await as('read', () => store.read(ref));
  await as('list', () => store.list(owner, { limit: 1 }));
  await as('steps', () => store.steps(ref));
  await as('countLive', () => store.countLive(['export'], owner));

  // Every method of the store ran here: a new one must be added above (and routed, or listed).
  const methods = Object.entries(Object.getOwnPropertyDescriptors(PostgresTaskStore.prototype))
    .filter(([name, descriptor]) => typeof descriptor.value === 'function' && !NOT_REQUEST_PATH.has(name))
    .map(([name]) => name);
  const ran = new Set(sent.map((s) => s.method));
  assert.deepEqual(methods.filter((name) => !ran.has(name)), [], 'store methods this check does not run');

  const offending = sent
    .filter((s) => !(s.method in CROSS_OWNER))
    .map((s) => ({ method: s.method, why: unrouted(s, key), text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter((s) => s.why !== undefined);
  assert.deepEqual(offending, [], 'statements of the request path that would go to every shard');
  // And the listed ones really do cross owners (a listing that became routed is stale).
  for (const method of Object.keys(CROSS_OWNER)) {
    assert.ok(sent.some((s) => s.method === method && unrouted(s, key) !== undefined), `${method} is listed as crossing owners but names its owner`);
  }
});

test('the check refuses a hot statement without the owner filter, or with another owner', () => {
  const key = ownerKey(ownerOf('self'));
  const routed = { text: 'SELECT * FROM "mcp_tasks"."tasks" WHERE id = $1 AND owner_key = $2', values: ['t1', key] };
  assert.equal(unrouted(routed, key), undefined);
  assert.match(unrouted({ text: 'SELECT * FROM "mcp_tasks"."tasks" WHERE id = $1', values: ['t1'] }, key) ?? '', /no owner_key filter/);
  assert.match(unrouted({ ...routed, values: ['t1', ownerKey(ownerOf('other'))] }, key) ?? '', /no owner_key filter/);
  assert.match(unrouted({ text: 'UPDATE "mcp_tasks"."task_steps" SET done = true WHERE task_id = $1', values: ['t1'] }, key) ?? '', /no owner_key filter/);
  assert.match(unrouted({ text: 'SELECT count(*) FILTER (WHERE owner_key = $1) FROM "mcp_tasks"."tasks"', values: [key] }, key) ?? '', /no owner_key filter/);
  assert.equal(unrouted({ text: 'UPDATE "mcp_tasks"."nodes" SET lease_expires_at = now() WHERE node_id = $1', values: ['n'] }, key), undefined);
});
