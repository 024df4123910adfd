// A gateway node (a real demo process on PostgreSQL) in front of an upstream of this test's own
// (test/fixtures/busy-upstream.fixture.ts, a real process): one that answers 429 with
// Retry-After past its rate, lists a backtracking pattern and answers 400 MB. What the gateway
// does about it is its own: the upstream's limits stay as they are.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { authRpc } from '../support/auth-client.js';
import { rpc } from '../support/server-raw-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { testPool } from '../support/pg-clients.js';
import { gatewayBeforeBusyUpstream, spawnBusyUpstream } from '../support/busy-upstream.js';

/** Resident memory of a process (Linux), in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** A proxied task call, retried (as a client that behaves retries) while the gateway says the upstream is busy. */
async function startTask(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    const created = await within(rpc(url, 'tools/call', { name, arguments: args }), 30_000, `tools/call ${name}`);
    if (created.result?.['resultType'] === 'task') return created.result['taskId'] as string;
    if (attempt >= 20) assert.fail(`no task: ${JSON.stringify(created.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const GATEWAY_ENV = {
  MCP_TASKS_MAX_PER_PRINCIPAL: 'Infinity',
  MCP_TASKS_RATE_LIMIT: 'off',
  MCP_TASKS_MAX_IN_FLIGHT: 'off',
  MCP_TASKS_MAX_RUNS: '300',
};

describe('a gateway in front of a busy, hostile upstream', { timeout: 240_000 }, () => {
  let db: TestDatabase;
  let admin: pg.Pool;
  let upstream: Awaited<ReturnType<typeof spawnBusyUpstream>>;
  let gateway: DemoProcess;

  before(async () => {
    db = await createTestDatabase();
    admin = testPool({ connectionString: db.url, max: 1 });
    admin.on('error', () => undefined);
    upstream = await spawnBusyUpstream({ UPSTREAM_RATE: '50' });
    gateway = await spawnDemoNode('busy-gateway', { ...GATEWAY_ENV, DATABASE_URL: db.url, MCP_TASKS_UPSTREAM_URL: upstream.url });
  });

  after(async () => {
    gateway?.child.kill('SIGKILL');
    upstream?.child.kill('SIGKILL');
    await Promise.all([gateway?.exited, upstream && new Promise((resolve) => (upstream.child.exitCode === null ? upstream.child.once('exit', resolve) : resolve(undefined)))]);
    await admin?.end();
    await db?.drop();
  });

  it('a backtracking upstream pattern and a 32-character argument are checked in linear time, while another call completes', async (t) => {
    const other = startTask(gateway.url, 'upstream_slow_compute', { seconds: 1 });
    const started = Date.now();
    const refused = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_redos', arguments: { text: `${'a'.repeat(32)}b` } }), 10_000, 'the redos call');
    const elapsed = Date.now() - started;
    assert.equal(refused.error?.['code'], -32602, JSON.stringify(refused.body));
    assert.match(String(refused.error?.['message']), /Invalid arguments for tool upstream_redos/);
    t.diagnostic(`the 32-character argument was refused in ${elapsed} ms`);
    assert.ok(elapsed < 2_000, `checked in ${elapsed} ms`);
    const ok = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_redos', arguments: { text: 'a'.repeat(32) } }, { tasks: false }), 10_000, 'a matching call');
    assert.equal(ok.result?.['content']?.[0]?.['text'], 'matched', JSON.stringify(ok.body));
    const taskId = await other;
    await eventually(async () => (await rpc(gateway.url, 'tasks/get', { taskId })).result?.['status'] === 'completed', 20_000, 'the other caller task completes');
  });

  it('a 400 MB upstream answer is cut at the 8 MiB limit while it streams, with the gateway memory bounded', async (t) => {
    const before = await rssMiB(gateway.child.pid!);
    let peak = before;
    const sampling = setInterval(() => void rssMiB(gateway.child.pid!).then((rss) => (peak = Math.max(peak, rss)), () => undefined), 20);
    let answer: Awaited<ReturnType<typeof rpc>>;
    try {
      answer = await within(rpc(gateway.url, 'tools/call', { name: 'upstream_huge', arguments: {} }, { tasks: false }), 30_000, 'the huge call');
    } finally {
      clearInterval(sampling);
    }
    await eventually(async () => (await upstream.state()).hugeOpen === 0, 10_000, 'the gateway dropped the connection');
    const { hugeSent } = await upstream.state();
    t.diagnostic(`RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB; the upstream wrote ${(hugeSent / 1048576).toFixed(1)} MiB`);
    assert.ok(hugeSent < 100 * 1024 * 1024, `the upstream wrote ${hugeSent} bytes before the gateway hung up`);
    assert.ok(peak - before < 100, `RSS grew from ${before.toFixed(0)} to ${peak.toFixed(0)} MiB`);
    assert.equal(answer.error?.['code'], -32603, JSON.stringify(answer.body).slice(0, 300));
    assert.match(String(answer.error?.['message']), /Upstream upstream: tools\/call answered more than 8388608 bytes/);
  });

  it('100 proxied tasks cancelled once each leave no upstream task working within 20 s, though the upstream answers 429', async (t) => {
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      ids.push(...(await Promise.all(Array.from({ length: 10 }, () => startTask(gateway.url, 'upstream_slow_compute', { seconds: 300 })))));
    }
    await eventually(async () => (await upstream.state()).working === 100, 20_000, 'the upstream works on 100 tasks');
    const cancels = await Promise.all(ids.map((taskId) => within(rpc(gateway.url, 'tasks/cancel', { taskId }), 30_000, 'tasks/cancel')));
    for (const cancel of cancels) assert.ok(cancel.result && !cancel.error, JSON.stringify(cancel.body));
    const cancelledAt = Date.now();
    await eventually(async () => (await upstream.state()).working === 0, 20_000, 'no upstream task still works 20 s after the cancels');
    const took = Date.now() - cancelledAt;
    t.diagnostic(`no upstream task working ${took} ms after the cancels; the upstream refused ${(await upstream.state()).refused} requests with 429`);
    assert.ok((await upstream.state()).refused > 0, 'the upstream did refuse requests with 429');
    // Every cancel was kept until the upstream acknowledged it.
    const { rows } = await admin.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM mcp_tasks.upstream_cancels GROUP BY state');
    assert.deepEqual(Object.fromEntries(rows.map((row) => [row.state, Number(row.n)])), { acknowledged: 100 }, `after ${took} ms`);
    // What each task's history shows of its upstream cancel: requested, each attempt's time and count, the last refusal, acknowledged.
    const history = await admin.query<{ n: string; refused: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE last_error LIKE '%HTTP 429%') AS refused FROM mcp_tasks.upstream_cancels
        WHERE attempts >= 1 AND created_at <= last_attempt_at AND last_attempt_at <= settled_at AND settled_at IS NOT NULL`,
    );
    assert.equal(Number(history.rows[0]!.n), 100, 'every cancel records its request, attempts and acknowledgement');
    t.diagnostic(`${history.rows[0]!.refused} of the 100 cancels were refused at least once before the upstream took them`);
    await eventually(async () => (await metric(gateway.base, 'mcp_tasks_proxy_upstream_cancels_owed')) === 0, 5_000, 'the owed gauge is back to 0');
    assert.ok((await metric(gateway.base, 'mcp_tasks_proxy_upstream_cancels_total')) >= 100);
  });
});

describe('two callers of a gateway that is one owner upstream', { timeout: 120_000 }, () => {
  // The upstream lets the gateway's credential hold 10 tasks; the gateway is told so.
  const f = gatewayBeforeBusyUpstream('fair-gateway', { UPSTREAM_RATE: '1000', UPSTREAM_MAX_LIVE: '10' }, (url) => ({ ...GATEWAY_ENV, MCP_TASKS_UPSTREAM_URL: url, MCP_TASKS_UPSTREAM_MAX_TASKS: '10' }));

  it('with one caller holding all it may, another caller call becomes a task working upstream within 2 s, and the refusal names the upstream capacity', async () => {
    const call = (token: string) => within(authRpc(f.gateway.url, token, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds: 120 } }), 30_000, `${token}'s call`);
    const alices: string[] = [];
    let refusal: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 15 && !refusal; i += 1) {
      const reply = await call('alice');
      if (reply.result?.['resultType'] === 'task') alices.push(reply.result['taskId'] as string);
      else refusal = reply;
    }
    assert.ok(refusal, 'alice is refused at some point');
    assert.equal(refusal.error?.['code'], -32600, JSON.stringify(refusal.body));
    assert.match(String(refusal.error?.['message']), /^Upstream upstream has no task slot for this call: this caller holds 9 of the 10 upstream tasks/);
    assert.equal(alices.length, 9, 'alice holds all but the slot kept for callers that hold none');
    const started = Date.now();
    const bobs = await call('bob');
    assert.equal(bobs.result?.['resultType'], 'task', JSON.stringify(bobs.body));
    await eventually(async () => (await f.upstream.state()).working === 10, 2_000 - (Date.now() - started), 'bob task works upstream');
    const task = await authRpc(f.gateway.url, 'bob', 'tasks/get', { taskId: bobs.result!['taskId'] });
    assert.equal(task.result?.['status'], 'working');
    await Promise.all(alices.map((taskId) => authRpc(f.gateway.url, 'alice', 'tasks/cancel', { taskId })));
  });
});

describe('two callers of a gateway told nothing of the upstream quota', { timeout: 120_000 }, () => {
  // The upstream lets the gateway hold 10 tasks; the gateway has no MCP_TASKS_UPSTREAM_MAX_TASKS.
  const f = gatewayBeforeBusyUpstream('learning-gateway', { UPSTREAM_RATE: '1000', UPSTREAM_MAX_LIVE: '10' }, (url) => ({ ...GATEWAY_ENV, MCP_TASKS_UPSTREAM_URL: url }));

  it("the quota in the upstream's refusal becomes the share: the caller that held them all cannot take the last slot back, another caller gets it", async () => {
    const call = (token: string) => within(authRpc(f.gateway.url, token, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds: 120 } }), 30_000, `${token}'s call`);
    const alices: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const reply = await call('alice');
      assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
      alices.push(reply.result!['taskId'] as string);
    }
    // The upstream refuses the 11th, saying its quota.
    const refused = await call('alice');
    assert.equal(refused.error?.['code'], -32600, JSON.stringify(refused.body));
    assert.match(String(refused.error?.['message']), /^Upstream upstream refused the task: .*already has 10/);
    // Two of alice's end: she may take one back, not the last one, which stays for a caller holding none.
    await Promise.all(alices.splice(0, 2).map((taskId) => authRpc(f.gateway.url, 'alice', 'tasks/cancel', { taskId })));
    await eventually(async () => (await f.upstream.state()).working === 8, 20_000, 'the two cancels land upstream');
    const again = await call('alice');
    assert.equal(again.result?.['resultType'], 'task', JSON.stringify(again.body));
    alices.push(again.result!['taskId'] as string);
    const past = await call('alice');
    assert.equal(past.error?.['code'], -32600, JSON.stringify(past.body));
    assert.match(String(past.error?.['message']), /^Upstream upstream has no task slot for this call: this caller holds 9 of the 10 upstream tasks/);
    const started = Date.now();
    const bobs = await call('bob');
    assert.equal(bobs.result?.['resultType'], 'task', JSON.stringify(bobs.body));
    await eventually(async () => (await f.upstream.state()).working === 10, 2_000 - (Date.now() - started), 'bob task works upstream');
    await Promise.all(alices.map((taskId) => authRpc(f.gateway.url, 'alice', 'tasks/cancel', { taskId })));
  });
});

describe('a gateway in front of an upstream with a long tool list, and one told its rate', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  const children: ChildProcess[] = [];
  let listed: Awaited<ReturnType<typeof spawnBusyUpstream>>;
  let paced: Awaited<ReturnType<typeof spawnBusyUpstream>>;
  let listGateway: DemoProcess;
  let pacedGateway: DemoProcess;

  before(async () => {
    db = await createTestDatabase();
    [listed, paced] = await Promise.all([spawnBusyUpstream({ UPSTREAM_RATE: '1000', UPSTREAM_TOOLS: '8011' }), spawnBusyUpstream({ UPSTREAM_RATE: '1000' })]);
    children.push(listed.child, paced.child);
    [listGateway, pacedGateway] = await Promise.all([
      spawnDemoNode('list-gateway', { ...GATEWAY_ENV, DATABASE_URL: db.url, MCP_TASKS_UPSTREAM_URL: listed.url }),
      // The upstream allows 20 requests a second: this node's relays take at most half of them.
      spawnDemoNode('paced-gateway', { ...GATEWAY_ENV, DATABASE_URL: db.url, MCP_TASKS_UPSTREAM_URL: paced.url, MCP_TASKS_UPSTREAM_RATE: '20' }),
    ]);
    children.push(listGateway.child, pacedGateway.child);
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([listGateway?.exited, pacedGateway?.exited]);
    await db?.drop();
  });

  it('an upstream tool list of 8 011 tools (57 MB) is not served to every caller: tools/list stays small', async () => {
    const started = Date.now();
    const reply = await fetch(listGateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const text = await reply.text();
    assert.ok(text.length < 1024 * 1024, `tools/list answered ${text.length} bytes in ${Date.now() - started} ms`);
    assert.doesNotMatch(text, /upstream_filler_/);
    assert.match(text, /"name":"export"/, 'the node still lists its own tools');
  });

  it("the relays of 30 tasks poll no faster than their share of the upstream's rate", async (t) => {
    const ids = await Promise.all(Array.from({ length: 30 }, () => startTask(pacedGateway.url, 'upstream_slow_compute', { seconds: 60 })));
    await eventually(async () => (await paced.state()).working === 30, 20_000, 'the upstream works on 30 tasks');
    const from = await paced.state();
    const startedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const to = await paced.state();
    const perSecond = ((to.gets - from.gets) * 1_000) / (Date.now() - startedAt);
    t.diagnostic(`the relays polled ${perSecond.toFixed(1)} times a second`);
    // Unpaced, 30 relays at the upstream's pollIntervalMs of 1 s poll 30 times a second.
    assert.ok(perSecond <= 11, `the relays polled ${perSecond.toFixed(1)} times a second`);
    // No lower bound: the relays follow this upstream (a node of ours) on one listen stream now,
    // and poll only what the stream does not carry (test/proxy/upstream-listen.test.ts).
    await Promise.all(ids.map((taskId) => rpc(pacedGateway.url, 'tasks/cancel', { taskId })));
  });
});

describe('a cancel owed by a gateway node that dies', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let upstream: Awaited<ReturnType<typeof spawnBusyUpstream>>;
  const nodes: DemoProcess[] = [];

  before(async () => {
    db = await createTestDatabase();
    upstream = await spawnBusyUpstream({ UPSTREAM_RATE: '1000' });
    const env = { ...GATEWAY_ENV, DATABASE_URL: db.url, MCP_TASKS_UPSTREAM_URL: upstream.url, MCP_TASKS_LEASE_MS: '1500' };
    nodes.push(...(await Promise.all([spawnDemoNode('owing-a', env), spawnDemoNode('owing-b', env)])));
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    upstream?.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await db?.drop();
  });

  it('is delivered by another node once the upstream takes requests again', async () => {
    const [a] = nodes;
    const taskId = await startTask(a!.url, 'upstream_slow_compute', { seconds: 300 });
    await eventually(async () => (await upstream.state()).working === 1, 10_000, 'the upstream works on it');
    await upstream.refuseAll(true);
    const cancel = await within(rpc(a!.url, 'tasks/cancel', { taskId }), 10_000, 'tasks/cancel');
    assert.ok(cancel.result && !cancel.error, JSON.stringify(cancel.body));
    // Node A tries, is refused, and dies owing it.
    await eventually(async () => (await upstream.state()).refused > 0, 10_000, 'node A tried the cancel');
    a!.child.kill('SIGKILL');
    await a!.exited;
    assert.equal((await upstream.state()).working, 1, 'the upstream task still works');
    await upstream.refuseAll(false);
    // Node A may die between claiming the cancel (its attempt holds it for the claim lease, 30 s:
    // an attempt may take the upstream timeout) and recording the 429 (due again in 1 s); then
    // node B may take it only once the claim lease has run out.
    await eventually(async () => (await upstream.state()).working === 0, 45_000, 'node B delivered the cancel');
  });
});
