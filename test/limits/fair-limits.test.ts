// A client that behaves is never refused (issue 26): on the default configuration, with and
// without authorization, polite polling at the task's interval, 32 reads at once and a sequential
// probe meet no limit; without an authenticated subject one caller's idle streams take nothing
// from the others. Over real HTTP, against in-process demo nodes on one PostgreSQL database.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authFromEnv, configFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { newTaskId } from '@mcp-tasks/core';
import { listen, type ListenStream } from '../support/notifications-client.js';
import { post, requestBody, requestHeaders, type RpcReply } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { answerOf } from '../support/sse.js';

const RESOURCE = 'https://mcp.example.test/mcp';
const TOKENS = {
  polite: { sub: 'polite', clientId: 'app', scopes: ['export'], resource: RESOURCE },
  many: { sub: 'many', clientId: 'app', scopes: ['export'], resource: RESOURCE },
  follower: { sub: 'follower', clientId: 'app', scopes: ['export'], resource: RESOURCE },
  looper: { sub: 'looper', clientId: 'app', scopes: ['export'], resource: RESOURCE },
};

let db: TestDatabase;
let open: DemoServer;
let authed: DemoServer;

before(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-fair-'));
  const tokensFile = path.join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(TOKENS));
  // The default configuration: nothing but the database and a port.
  open = await startDemoServer(configFromEnv({ DATABASE_URL: db.url, PORT: '0', NODE_ID: 'fair-open' }));
  authed = await startDemoServer({ ...configFromEnv({ DATABASE_URL: db.url, PORT: '0', NODE_ID: 'fair-auth' }), auth: authFromEnv({ MCP_TASKS_TOKENS: tokensFile }) });
});

after(async () => {
  await Promise.all([open?.close(1_000), authed?.close(1_000)]);
  await db?.drop();
});

function call(url: string, token: string | undefined, method: string, params: Record<string, unknown>): Promise<RpcReply> {
  const headers = requestHeaders(method, params);
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  return post(url, requestBody(method, params, true), headers);
}

/** A task that stays live (it waits for a confirmation nobody gives). */
async function liveTask(url: string, token?: string): Promise<string> {
  const reply = await call(url, token, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } });
  assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
  return reply.result!['taskId'] as string;
}

/** The JSON-RPC answer of a JSON or SSE body. */
function jsonRpcOf(text: string): any {
  return answerOf(text);
}

/** Whether a reply is a refusal by any limit: an owner's 429 or a node's 503 alike. */
const refused = (reply: RpcReply) => reply.status === 429 || reply.status === 503 || reply.error !== undefined;
const describeRefusals = (replies: RpcReply[]) => JSON.stringify([...new Set(replies.filter(refused).map((reply) => `${reply.status} ${reply.error?.message}`))]);

/** `clients` each polling their own task once per second, together, for `seconds` rounds. */
async function pollTogether(url: string, token: string | undefined, taskIds: readonly string[], seconds: number): Promise<RpcReply[]> {
  const replies: RpcReply[] = [];
  for (let round = 0; round < seconds; round += 1) {
    const started = Date.now();
    replies.push(...(await Promise.all(taskIds.map((taskId) => call(url, token, 'tasks/get', { taskId })))));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (Date.now() - started))));
  }
  return replies;
}

/** 32 reads of one task at once, `rounds` times a second apart. */
async function burstsOf32(url: string, token: string | undefined, taskId: string, rounds: number): Promise<RpcReply[]> {
  const replies: RpcReply[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = Date.now();
    replies.push(...(await Promise.all(Array.from({ length: 32 }, () => call(url, token, 'tasks/get', { taskId })))));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (Date.now() - started))));
  }
  return replies;
}

describe('without authorization, the default limits refuse no client that behaves', { timeout: 90_000 }, () => {
  let shared: string;
  before(async () => {
    shared = await liveTask(open.url);
  });

  it('one client reading one task 32 times at once, 5 rounds a second apart: none refused', async () => {
    const replies = await burstsOf32(open.url, undefined, shared, 5);
    assert.equal(replies.filter(refused).length, 0, describeRefusals(replies));
  });

  it('a latency probe of 500 sequential tasks/get: none refused', async () => {
    const replies: RpcReply[] = [];
    for (let i = 0; i < 500; i += 1) replies.push(await call(open.url, undefined, 'tasks/get', { taskId: shared }));
    assert.equal(replies.filter(refused).length, 0, describeRefusals(replies));
  });

  it('90 clients, each polling its own task once per pollIntervalMs (1 s), together, for 8 s: none refused', async () => {
    const taskIds = await Promise.all(Array.from({ length: 90 }, () => liveTask(open.url)));
    try {
      const replies = await pollTogether(open.url, undefined, taskIds, 8);
      assert.equal(replies.length, 720);
      assert.equal(replies.filter(refused).length, 0, describeRefusals(replies));
      // The node's admission is visible: its queue depth and how long requests waited.
      const metrics = await (await fetch(new URL('/metrics', open.url))).text();
      assert.match(metrics, /^mcp_tasks_admission_queue_depth(\{[^}]*\})? \d+/m);
      assert.match(metrics, /^mcp_tasks_admission_wait_seconds_count(\{[^}]*\})? [1-9]\d*/m);
    } finally {
      for (const taskId of taskIds) await call(open.url, undefined, 'tasks/cancel', { taskId });
    }
  });

  it("16 idle listens of one caller take neither another caller's listen nor a 2025-11-25 tasks/result", async () => {
    const streams: ListenStream[] = [];
    try {
      for (let i = 0; i < 16; i += 1) {
        const stream = await listen(open.url, [shared]);
        streams.push(stream);
        assert.equal(stream.status, 200, JSON.stringify(stream.json));
      }
      const other = await listen(open.url, [shared]);
      streams.push(other);
      assert.equal(other.status, 200, JSON.stringify(other.json));

      const legacyTask = await fetch(open.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename: 'y.txt' }, task: {} } }),
      }).then(async (response) => jsonRpcOf(await response.text()));
      const legacyTaskId = legacyTask.result?.task?.taskId as string;
      assert.ok(legacyTaskId, JSON.stringify(legacyTask));
      const abort = new AbortController();
      const result = await fetch(open.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId: legacyTaskId } }),
        signal: abort.signal,
      });
      try {
        assert.equal(result.status, 200, result.status === 200 ? '' : await result.text());
        assert.match(result.headers.get('content-type') ?? '', /text\/event-stream/);
      } finally {
        abort.abort();
        await call(open.url, undefined, 'tasks/cancel', { taskId: legacyTaskId });
      }
    } finally {
      for (const stream of streams) stream.abort();
    }
  });
});

describe('with authorization, the default limits refuse no client that behaves', { timeout: 90_000 }, () => {
  it('one client reading one task 32 times at once, 5 rounds a second apart: none refused', async () => {
    const taskId = await liveTask(authed.url, 'polite');
    const replies = await burstsOf32(authed.url, 'polite', taskId, 5);
    assert.equal(replies.filter(refused).length, 0, describeRefusals(replies));
  });

  it('an owner polling each of its 100 live tasks (the quota) once per pollIntervalMs for 7 s: none refused', async () => {
    const taskIds: string[] = [];
    for (let i = 0; i < 100; i += 1) taskIds.push(await liveTask(authed.url, 'many'));
    const replies = await pollTogether(authed.url, 'many', taskIds, 7);
    assert.equal(replies.length, 700);
    assert.equal(replies.filter(refused).length, 0, describeRefusals(replies));
  });

  it('a client that reopens its listen of 100 tasks four times a second for 3 s is never refused', async () => {
    const taskIds = Array.from({ length: 100 }, () => newTaskId());
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      const started = Date.now();
      const stream = await listen(authed.url, taskIds, { token: 'follower' });
      statuses.push(stream.status);
      stream.abort();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 250 - (Date.now() - started))));
    }
    assert.deepEqual(statuses, Array(12).fill(200));
  });

  it('a loop opening listens of 100 task ids pays for their work: its rate admits a dozen, not all 30', async () => {
    // Found in bench scenario 10: at one token a listen, a flood's 64 loops opened 55 streams a
    // second within the base rate (50/s), each the work of about five tasks/get.
    const taskIds = Array.from({ length: 100 }, () => newTaskId());
    const statuses: number[] = [];
    const refusals = new Set<string>();
    const started = performance.now();
    for (let i = 0; i < 30; i += 1) {
      const stream = await listen(authed.url, taskIds, { token: 'looper' });
      statuses.push(stream.status);
      if (stream.status !== 200) refusals.add(`${stream.status} ${stream.json?.error?.message}`);
      stream.abort();
    }
    const seconds = (performance.now() - started) / 1_000;
    const acked = statuses.filter((status) => status === 200).length;
    // The bucket holds 200 tokens and refills 50 a second: on a slow machine the loop takes longer
    // and earns more, never more than what the elapsed time paid for (at one token a listen, all 30).
    const paidFor = Math.floor((200 + 50 * seconds) / 15) + 1;
    assert.ok(acked >= 10 && acked <= Math.min(29, paidFor), `a burst of 200 tokens at 15 a listen, refilled 50/s over ${seconds.toFixed(2)} s: ${acked} acked`);
    assert.deepEqual([...new Set([...refusals].map((refusal) => refusal.replace(/after .*$/, 'after …')))], ["429 Too many requests: this owner's rate limit is reached; retry after …"]);
  });
});
