// What one owner can make a node hold is bounded (issue 37, points 2, 5 and 10): a task stores
// only the capability members its run reads; task tool calls have a per-owner rate and a share of
// the calls under way (inline runs held open included), and the node bounds them all; a
// 2025-11-25 client's POSTed answers meet the owner's rate and in-flight share; what an owner's
// tasks keep until they expire (finished ones included) is bounded in bytes. Without an
// authenticated subject no per-owner bound applies (the node's, and one database-wide pool of
// stored bytes, do), and `rateLimit: false` turns off every per-owner rate. Through an McpTasks
// handler's two paths (direct, then SDK), on a real PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { taskTools } from '@mcp-tasks/demo';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, McpTasks, type McpTasksHandler, type McpTasksOptions } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import pg from 'pg';
import * as z from 'zod';
import { envelope, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { within } from '../support/within.js';
import { testPool } from '../support/pg-clients.js';
import { bodyMessages } from '../support/sse.js';

const SERVER = 'bounds';
let db: TestDatabase;
let store: PostgresTaskStore;
let pool: pg.Pool;
const opened: McpTasksHandler[] = [];
const instances: McpTasks[] = [];

before(async () => {
  db = await createTestDatabase();
  store = await PostgresTaskStore.connect({ connectionString: db.url, logger: { warn: () => {}, error: () => {} } });
  pool = testPool({ connectionString: db.url, max: 2 });
  pool.on('error', () => {});
});

after(async () => {
  for (const handler of opened) await handler.close();
  for (const tasks of instances) await tasks.close().catch(() => {});
  await pool?.end();
  await db?.drop();
});

/** A tool that takes a document, as many real tools do: what it stores is what the client sends. */
const ingest = defineTool({
  name: 'ingest',
  task: 'optional',
  input: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ content: [{ type: 'text', text: `ingested ${text.length} characters` }] }),
});
const ingestRequired = defineTool({ ...ingest, name: 'ingest_required', task: 'required' });
/** A tool whose result is as large as asked: its bytes are charged when it finishes. */
const report = defineTool({
  name: 'report',
  task: 'required',
  input: z.object({ bytes: z.number().int().min(0).max(4 * 1024 * 1024) }),
  execute: async ({ bytes }) => ({ content: [{ type: 'text', text: randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes) }] }),
});
const TOOLS = [...taskTools, ingest, ingestRequired, report];

/** The whole endpoint of an McpTasks of its own (its own limits) on the shared store. */
function serve(options: Omit<McpTasksOptions, 'store'> = {}): McpTasksHandler {
  // One McpTasks closes the shared store: only the first is given it to close.
  const tasks = new McpTasks({ store: instances.length === 0 ? store : wrapStore(), maxPerPrincipal: 10_000, ...options });
  instances.push(tasks);
  const handler = tasks.handler({ name: SERVER, version: '1.0.0', tools: TOOLS, onerror: () => {} });
  opened.push(handler);
  return handler;
}

/** The shared store behind a `close` that leaves it open. */
function wrapStore(): PostgresTaskStore {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'close') return async () => {};
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const authOf = (sub: string): AuthInfo => ({ token: `token-${sub}`, clientId: 'app', scopes: ['export'], extra: { sub } });

interface Reply {
  readonly status: number;
  readonly body: any;
}

let nextId = 1;

/** Sends `message` as the demo edge does: the direct path first, then the SDK path. */
async function send(handler: McpTasksHandler, message: Record<string, unknown>, auth: AuthInfo | undefined, headers: Record<string, string>): Promise<Reply> {
  const text = JSON.stringify(message);
  const toRequest = () => new Request('http://localhost/mcp', { method: 'POST', headers, body: text });
  const direct = await handler.serveDirect({ method: 'POST', header: (name) => headers[name], body: message, bodyBytes: text.length, authInfo: auth, toRequest });
  if (direct) return { status: direct.status, body: JSON.parse(direct.body) };
  const response = await handler.fetch(toRequest(), { parsedBody: message, ...(auth ? { authInfo: auth } : {}) });
  const body = await response.text();
  const messages = bodyMessages(body);
  return { status: response.status, body: messages.find((m) => 'result' in m || 'error' in m) ?? {} };
}

function toolCall(handler: McpTasksHandler, auth: AuthInfo | undefined, name: string, args: Record<string, unknown>, options: { tasks?: boolean; capabilities?: Record<string, unknown> } = {}): Promise<Reply> {
  const params = { name, arguments: args };
  const message = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { ...params, _meta: envelope(options.tasks ?? true, options.capabilities) } };
  return send(handler, message, auth, requestHeaders('tools/call', params));
}

const LEGACY_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

describe('what a task stores of the client capabilities', () => {
  it('keeps only the members its run checks, however much the client declared', async () => {
    const handler = serve();
    const junk = 'x'.repeat(200 * 1024);
    const reply = await toolCall(handler, authOf('capable'), 'confirm_delete', { filename: 'a.txt' }, {
      capabilities: { elicitation: { form: {}, padding: junk }, sampling: { tools: {}, more: junk }, experimental: { junk: { padding: junk } }, roots: { listChanged: true } },
    });
    assert.equal(reply.body.result?.resultType, 'task', JSON.stringify(reply.body).slice(0, 300));
    const { rows } = await pool.query('SELECT client_capabilities FROM mcp_tasks.tasks WHERE id = $1', [reply.body.result.taskId]);
    assert.deepEqual(rows[0].client_capabilities, { elicitation: { form: {} }, sampling: { tools: {} }, roots: {} });
  });
});

describe('task tool calls of one owner', { timeout: 60_000 }, () => {
  it('are rate limited per authenticated owner past a burst of 100 (429 naming toolRuns.createsPerSecond), while another owner creates at once', async () => {
    const handler = serve({ toolRuns: { createsPerSecond: 1, createBurst: 20 } });
    const replies: Reply[] = [];
    for (let i = 0; i < 30; i += 1) replies.push(await toolCall(handler, authOf('creator'), 'slow_compute', { seconds: 0 }));
    const refused = replies.filter((reply) => reply.status === 429);
    assert.ok(refused.length >= 9, `past the burst the calls are refused: ${replies.map((r) => r.status).join(',')}`);
    assert.deepEqual(refused[0]!.body.error.data.limit, 'toolRuns.createsPerSecond');
    assert.match(refused[0]!.body.error.message, /rate of task tool calls/);
    assert.equal((await toolCall(handler, authOf('other'), 'slow_compute', { seconds: 0 })).body.result?.resultType, 'task', 'another owner is not refused');
  });

  it('default to a burst of 100 per owner (then 10 a second), and 16 under way at once', async () => {
    const handler = serve();
    const replies = await within(Promise.all(Array.from({ length: 150 }, () => toolCall(handler, authOf('default-creator'), 'slow_compute', { seconds: 0 }))), 30_000, '150 calls at once');
    const byLimit = (limit: string) => replies.filter((reply) => reply.status === 429 && reply.body.error?.data?.limit === limit).length;
    assert.ok(byLimit('toolRuns.createsPerSecond') >= 45, `past the burst of 100 the calls are refused by the rate: ${byLimit('toolRuns.createsPerSecond')}`);
    assert.ok(replies.filter((reply) => reply.status === 200).length >= 16, 'the share under way is served');
  });

  it('meet no per-owner rate without an authenticated subject, nor with rateLimit: false', async () => {
    for (const [handler, auth] of [
      [serve({ toolRuns: { createsPerSecond: 1, createBurst: 2 } }), undefined],
      [serve({ rateLimit: false, toolRuns: { createsPerSecond: 1, createBurst: 2 } }), authOf('unlimited')],
    ] as const) {
      const replies: Reply[] = [];
      for (let i = 0; i < 10; i += 1) replies.push(await toolCall(handler, auth, 'slow_compute', { seconds: 0 }));
      assert.deepEqual(replies.map((reply) => reply.status), Array(10).fill(200), JSON.stringify(replies.find((reply) => reply.status !== 200)?.body));
    }
  });

  it("count inline runs against the owner's share until they end, and against the node's bound without a subject (503)", async () => {
    const handler = serve({ toolRuns: { maxPerOwner: 2, maxPerNode: 3 } });
    // Without the extension a task tool runs inline: the answer comes when the run ends.
    const inline = (auth: AuthInfo | undefined) => toolCall(handler, auth, 'slow_compute', { seconds: 1.5 }, { tasks: false });
    const mallory = Array.from({ length: 5 }, () => inline(authOf('mallory')));
    const replies = await within(Promise.all(mallory), 20_000, "mallory's inline runs");
    const refused = replies.filter((reply) => reply.status === 429);
    assert.equal(replies.filter((reply) => reply.status === 200 && reply.body.result).length, 2, 'two run, one at a time per slot');
    assert.equal(refused.length, 3, `the queued ones wait past 1 s and are refused: ${replies.map((r) => r.status).join(',')}`);
    assert.equal(refused[0]!.body.error.data.limit, 'toolRuns.maxPerOwner');

    const open = Array.from({ length: 4 }, () => inline(undefined));
    const statuses = (await within(Promise.all(open), 20_000, 'inline runs without a subject')).map((reply) => reply.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 503], 'past the node bound, the node is saturated');
  });
});

describe("a 2025-11-25 client's POSTed answers", { timeout: 30_000 }, () => {
  it("meet its owner's rate limit (429 past the burst)", async () => {
    const handler = serve({ rateLimit: { requestsPerSecond: 0.5, burst: 3 }, refusalHold: false });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const answer = { jsonrpc: '2.0', id: `task-AAAAAAAAAAAAAAAAAAAAAAAA-key-${i}`, result: { action: 'accept', content: {} } };
      statuses.push((await send(handler, answer, authOf('answerer'), LEGACY_HEADERS)).status);
    }
    assert.ok(statuses.slice(3).every((status) => status === 429), statuses.join(','));
    assert.ok(statuses.slice(0, 3).every((status) => status !== 429), statuses.join(','));
  });
});

/** About `bytes` of text that does not compress (TOAST would shrink a repeated one to nothing). */
const document = (bytes: number) => randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64').slice(0, bytes);

const tasksTableBytes = async () => Number((await pool.query("SELECT pg_total_relation_size('mcp_tasks.tasks') AS bytes")).rows[0].bytes);

/** Bytes the owner `sub`'s tasks keep, by the table's own measure of what each row stores. */
async function storedBytesOfOwner(sub: string): Promise<{ tasks: number; bytes: number }> {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS tasks, coalesce(sum(pg_column_size(t.*)), 0)::bigint AS bytes FROM mcp_tasks.tasks t WHERE owner_subject = $1`,
    [sub],
  );
  return { tasks: rows[0].tasks, bytes: Number(rows[0].bytes) };
}

describe('what an owner keeps until its tasks expire', { timeout: 90_000 }, () => {
  const MiB = 1024 * 1024;

  it("is bounded in bytes: 8 loops of 200 KiB documents stop at the owner's bound (-32600 naming it), finished tasks count, another owner creates at once", async (t) => {
    // The finding: 8 loops of slow_compute, each declaring a 232 KiB clientCapabilities, made 1 328
    // tasks in 15 s and grew the database from 11 MB to 353 MB. The capabilities are no longer
    // stored; what a client can still make a task keep is its arguments, here 200 KiB a task, with
    // every per-owner rate off so that only the stored-bytes bound stands in the way.
    const bound = 4 * MiB;
    const handler = serve({ rateLimit: false, toolRuns: false, maxStoredBytesPerOwner: bound });
    const before = await tasksTableBytes();
    const text = document(200 * 1024);
    const refusals: Reply[] = [];
    let created = 0;
    const loop = async () => {
      for (let sent = 0; sent < 20; sent += 1) {
        const reply = await toolCall(handler, authOf('hoarder'), 'ingest_required', { text });
        if (reply.body.result?.resultType === 'task') created += 1;
        else refusals.push(reply);
      }
    };
    await within(Promise.all(Array.from({ length: 8 }, loop)), 60_000, "the hoarder's 8 loops");
    const grown = (await tasksTableBytes()) - before;
    const kept = await storedBytesOfOwner('hoarder');
    t.diagnostic(`8 loops x 20 calls of 200 KiB: ${created} tasks created, ${160 - created} refused; tasks table grew ${(grown / MiB).toFixed(1)} MiB; the owner's rows keep ${(kept.bytes / MiB).toFixed(1)} MiB`);
    assert.ok(created >= 15 && created <= 20, `about the bound's worth of tasks is created (4 MiB of 201 KiB tasks): ${created}`);
    assert.equal(refusals.length, 160 - created);
    assert.equal(refusals[0]!.body.error?.code, -32600, JSON.stringify(refusals[0]!.body).slice(0, 300));
    assert.match(refusals[0]!.body.error.message, /^Too much stored: this owner's tasks keep 3\.\d MiB until they expire, at most 4\.0 MiB \(maxStoredBytesPerOwner\); room frees as they expire, the first in about \d+ s$/);
    assert.equal(refusals[0]!.body.error.data?.limit, 'maxStoredBytesPerOwner');
    assert.ok(kept.bytes <= bound, `the owner's rows keep at most the bound: ${kept.bytes}`);
    assert.ok(grown <= bound + 2 * MiB, `the tasks table grew by about the bound, not by 160 documents (31 MiB): ${grown}`);

    // Its tasks end (slow_compute-like: at once), and still count until they expire.
    await within(waitUntil(async () => (await pool.query("SELECT count(*)::int AS n FROM mcp_tasks.tasks WHERE owner_subject = 'hoarder' AND status = 'working'")).rows[0].n === 0), 10_000, 'the tasks end');
    assert.equal((await toolCall(handler, authOf('hoarder'), 'ingest_required', { text })).body.error?.code, -32600, 'finished tasks still count');
    // An optional tool over the bound runs inline, as over the quota: nothing is stored.
    const inline = await toolCall(handler, authOf('hoarder'), 'ingest', { text });
    assert.deepEqual(inline.body.result?.content, [{ type: 'text', text: `ingested ${text.length} characters` }], JSON.stringify(inline.body).slice(0, 300));
    assert.equal((await storedBytesOfOwner('hoarder')).tasks, kept.tasks);
    // Another owner is not refused.
    assert.equal((await toolCall(handler, authOf('neighbour'), 'ingest_required', { text })).body.result?.resultType, 'task');
  });

  it('counts a result by its bytes when its task finishes: the task completes, and the next create is refused', async () => {
    const handler = serve({ maxStoredBytesPerOwner: 1 * MiB });
    const big = await toolCall(handler, authOf('reporter'), 'report', { bytes: 2 * MiB });
    assert.equal(big.body.result?.resultType, 'task');
    await within(waitUntil(async () => (await pool.query("SELECT status FROM mcp_tasks.tasks WHERE id = $1", [big.body.result.taskId])).rows[0].status === 'completed'), 20_000, 'the report completes');
    const next = await toolCall(handler, authOf('reporter'), 'report', { bytes: 10 });
    assert.equal(next.body.error?.code, -32600, JSON.stringify(next.body).slice(0, 300));
    assert.match(next.body.error.message, /keep 2\.0 MiB until they expire, at most 1\.0 MiB/);
  });

  it('without an authenticated subject, is one database-wide pool (maxStoredBytesWithoutSubject), while authenticated owners keep their own', async () => {
    const handler = serve({ maxStoredBytesWithoutSubject: 2 * MiB });
    const text = document(200 * 1024);
    const replies: Reply[] = [];
    for (let i = 0; i < 16; i += 1) replies.push(await toolCall(handler, undefined, 'ingest_required', { text }));
    const refused = replies.filter((reply) => reply.body.error);
    assert.ok(refused.length >= 6, `past 2 MiB the creates are refused: ${refused.length}`);
    assert.equal(refused[0]!.body.error.code, -32600);
    assert.match(refused[0]!.body.error.message, /the tasks of callers without an authenticated subject keep .* \(maxStoredBytesWithoutSubject\)/);
    assert.equal((await toolCall(handler, authOf('with-token'), 'ingest_required', { text })).body.result?.resultType, 'task', 'an authenticated owner is not refused');
  });

  it('never refuses a polite client on the defaults: 16 tasks at a time, 96 in 6 s, with and without a subject', async () => {
    const handler = serve({ maxPerPrincipal: 100 });
    for (const auth of [authOf('polite'), undefined]) {
      for (let round = 0; round < 6; round += 1) {
        const replies = await Promise.all(Array.from({ length: 16 }, () => toolCall(handler, auth, 'slow_compute', { seconds: 0, label: document(200) })));
        assert.deepEqual(replies.map((reply) => reply.body.result?.resultType), Array(16).fill('task'), JSON.stringify(replies.find((reply) => !reply.body.result)?.body));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  });
});

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}
