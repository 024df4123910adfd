// What one owner can make a node hold is bounded (issue 37, points 2, 5 and 10): a task stores
// only the capability members its run reads; task tool calls have a per-owner rate and a share of
// the calls under way (inline runs held open included), and the node bounds them all; a
// 2025-11-25 client's POSTed answers meet the owner's rate and in-flight share. Without an
// authenticated subject no per-owner bound applies, and `rateLimit: false` turns off every
// per-owner rate. Through an McpTasks handler's two paths (direct, then SDK), on a real PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { taskTools } from '@mcp-tasks/demo';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { McpTasks, type McpTasksHandler, type McpTasksOptions } from '@mcp-tasks/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import pg from 'pg';
import { envelope, requestHeaders } from './server-raw-client.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { within } from './support/within.js';
import { testPool } from './support/pg-clients.js';

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

/** The whole endpoint of an McpTasks of its own (its own limits) on the shared store. */
function serve(options: Omit<McpTasksOptions, 'store'> = {}): McpTasksHandler {
  // One McpTasks closes the shared store: only the first is given it to close.
  const tasks = new McpTasks({ store: instances.length === 0 ? store : wrapStore(), maxPerPrincipal: 10_000, ...options });
  instances.push(tasks);
  const handler = tasks.handler({ name: SERVER, version: '1.0.0', tools: taskTools, onerror: () => {} });
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
  if (body.startsWith('{')) return { status: response.status, body: JSON.parse(body) };
  const messages = body.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
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
