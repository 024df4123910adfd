// One owner's requests under way on a node are capped (inFlight.maxPerOwner): past the cap its
// task operations wait briefly in the owner's queue, then are refused with -32000 and HTTP 429,
// while another owner's request on the same node is still taken. Against a demo node process whose PostgreSQL answers are held
// back, so the owner's requests stay in flight for as long as the test needs.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InFlightLimitError } from '@mcp-tasks/core';
import { inFlightFromEnv } from '@mcp-tasks/gateway';
import { McpTasks, OwnerInFlightCap } from '@mcp-tasks/server';
import { authRpc, type AuthReply } from '../support/auth-client.js';
import { requestBody, requestHeaders } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { within } from '../support/within.js';

describe('the per-owner in-flight cap', () => {
  it("queues an owner's request past its cap, refuses it past the queue naming the cap, and hands a slot given back to the next in line", async () => {
    const cap = new OwnerInFlightCap({ maxPerOwner: 2, maxQueuedPerOwner: 1, maxWaitMs: 5_000 });
    const first = cap.enter('mallory') as () => void;
    cap.enter('mallory');
    const queued = cap.enter('mallory');
    assert.ok(queued instanceof Promise, 'the third waits');
    await assert.rejects(
      Promise.resolve(cap.enter('mallory')),
      (error: unknown) => error instanceof InFlightLimitError && error.code === -32000 && error.max === 2 && /at most 2 \(inFlight\.maxPerOwner\)/.test(error.message),
    );
    first();
    first();
    const third = await within(queued, 1_000, 'the queued request gets the slot given back');
    assert.equal(cap.inFlight('mallory'), 2, 'a slot given back twice is given back once, and passed on');
    third();
    assert.equal(cap.inFlight('mallory'), 1);
  });

  it('refuses a queued request once it waited maxWaitMs', async () => {
    const cap = new OwnerInFlightCap({ maxPerOwner: 1, maxQueuedPerOwner: 4, maxWaitMs: 30 });
    cap.enter('mallory');
    const started = Date.now();
    await assert.rejects(Promise.resolve(cap.enter('mallory')), InFlightLimitError);
    assert.ok(Date.now() - started >= 25, 'it waited first');
  });

  it('counts each owner on its own, so a full owner leaves every other owner its whole share', async () => {
    const cap = new OwnerInFlightCap({ maxPerOwner: 2, maxQueuedPerOwner: 0 });
    const mallory = [cap.enter('mallory'), cap.enter('mallory')] as Array<() => void>;
    await assert.rejects(Promise.resolve(cap.enter('mallory')), InFlightLimitError);
    assert.equal(typeof cap.enter('alice'), 'function', "another owner's request is taken at once");
    assert.equal(typeof cap.enter('alice'), 'function');
    for (const release of mallory) release();
    assert.equal(cap.inFlight('mallory'), 0);
    assert.equal(cap.owners, 1, 'an owner with nothing in flight holds no entry');
  });

  it('defaults to 8 per owner, 128 queued for at most 2 s, and refuses a cap that is not a positive integer', () => {
    const cap = new OwnerInFlightCap();
    assert.deepEqual([cap.maxPerOwner, cap.maxQueuedPerOwner, cap.maxWaitMs], [8, 128, 2_000]);
    for (const maxPerOwner of [0, -1, 1.5, Number.NaN]) assert.throws(() => new OwnerInFlightCap({ maxPerOwner }), /inFlight\.maxPerOwner must be an integer of at least 1/);
    assert.throws(() => new McpTasks({ inFlight: { maxPerOwner: 0 } }), /inFlight\.maxPerOwner/);
  });

  it('reads MCP_TASKS_MAX_IN_FLIGHT as a positive integer or off, and refuses anything else', () => {
    assert.equal(inFlightFromEnv(undefined), undefined);
    assert.equal(inFlightFromEnv(''), undefined);
    assert.equal(inFlightFromEnv('off'), false);
    assert.deepEqual(inFlightFromEnv('12'), { maxPerOwner: 12 });
    for (const raw of ['0', '-3', '2.5', 'many']) assert.throws(() => inFlightFromEnv(raw), /MCP_TASKS_MAX_IN_FLIGHT must be "off" or a positive integer/);
  });
});

const CAP = 3;
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAAAA';

describe('a demo node with a per-owner in-flight cap', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let node: DemoProcess;

  before(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(db.url).port || 5432));
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-in-flight-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ mallory: { sub: 'mallory', clientId: 'app', scopes: [] }, alice: { sub: 'alice', clientId: 'app', scopes: [] } }));
    node = await spawnDemoNode('in-flight', {
      DATABASE_URL: throughProxy(db.url, proxy),
      MCP_TASKS_TOKENS: tokens,
      MCP_TASKS_MAX_IN_FLIGHT: String(CAP),
      MCP_TASKS_RATE_LIMIT: 'off',
    });
  });

  after(async () => {
    proxy?.release();
    node?.child.kill('SIGKILL');
    if (node) await within(node.exited, 10_000, 'the demo node exits');
    await proxy?.close();
    await db?.drop();
  });

  it('answers an owner\'s requests past its cap with 429 and -32000 once their wait is over, while another owner\'s request is taken', { timeout: 120_000 }, async () => {
    // A first read, so the node's pool has its connections before the answers are held back.
    assert.equal((await within(authRpc(node.url, 'mallory', 'tasks/get', { taskId: UNKNOWN_ID }), 20_000, 'a first tasks/get')).error?.code, -32602);
    proxy.hold();
    let replies: AuthReply[] = [];
    try {
      const mallory = Array.from({ length: CAP + 3 }, () => authRpc(node.url, 'mallory', 'tasks/get', { taskId: UNKNOWN_ID }));
      const settled: AuthReply[] = [];
      for (const reply of mallory) void reply.then((r) => settled.push(r), () => {});
      // The requests past the cap are answered (after their wait in the queue) while the others still wait on the database.
      const start = Date.now();
      while (settled.length < 3 && Date.now() - start < 20_000) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.equal(settled.length, 3, `requests past the cap are refused while the database holds the others: ${JSON.stringify(settled.map((r) => r.body))}`);
      for (const refused of settled) {
        assert.equal(refused.status, 429);
        assert.equal(refused.error?.code, -32000);
        assert.deepEqual(refused.error?.data, { limit: 'inFlight.maxPerOwner', max: CAP });
        assert.match(refused.error!.message, /in flight.*at most 3 \(inFlight\.maxPerOwner\)/);
      }

      // A listen counts against the same share (it is served on another path than tasks/get), and
      // does not wait for it: it is refused at once, well before a queued request's 2 s.
      const listen = { notifications: { taskIds: [UNKNOWN_ID] } };
      const listenSent = performance.now();
      const raw = await within(
        fetch(node.url, { method: 'POST', headers: { ...requestHeaders('subscriptions/listen', listen), authorization: 'Bearer mallory' }, body: requestBody('subscriptions/listen', listen, true) }),
        20_000,
        'a listen past the cap',
      );
      assert.equal(raw.status, 429);
      assert.ok(performance.now() - listenSent < 1_500, `the listen is refused without waiting (${(performance.now() - listenSent).toFixed(0)} ms)`);
      assert.equal(raw.headers.get('retry-after'), '1');
      assert.deepEqual(((await raw.json()) as any).error?.data, { limit: 'inFlight.maxPerOwner', max: CAP });

      // Another owner's request is taken (it waits on the same database, and is not refused).
      const alice = authRpc(node.url, 'alice', 'tasks/get', { taskId: UNKNOWN_ID });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled.length, 3, 'mallory\'s requests within the cap are still waiting');
      proxy.release();
      replies = await within(Promise.all([...mallory, alice]), 30_000, 'every request is answered once the database answers');
      const aliceReply = replies.at(-1)!;
      assert.equal(aliceReply.error?.code, -32602, `another owner is served: ${JSON.stringify(aliceReply.body)}`);
      assert.equal(replies.slice(0, -1).filter((r) => r.error?.code === -32602).length, CAP, 'the requests within the cap are served');

      // Answered, they gave their slots back.
      assert.equal((await within(authRpc(node.url, 'mallory', 'tasks/get', { taskId: UNKNOWN_ID }), 20_000, 'a later tasks/get')).error?.code, -32602);
    } finally {
      proxy.release();
    }
  });
});
