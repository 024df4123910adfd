// A caller that sends its next request as soon as a limit refused the last one gets its refusals
// back paced: past a small prompt share per owner a refusal is answered after a hold, so a retry
// loop sends about one request per hold, not one per refusal. What the hold keeps is bounded (per
// owner, per node, small requests only), no owner's refusals hold another owner's requests, and a
// node that drains answers what it holds at once. Against demo node processes for the loop.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { refusalHoldFromEnv } from '@mcp-tasks/gateway';
import { McpTasks, RefusalHold } from '@mcp-tasks/server';
import { authRpc, type AuthReply } from '../support/auth-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

/** Resolves `promise` with the milliseconds it took. */
async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}

describe('the refusal hold', { timeout: 30_000 }, () => {
  it('answers an owner\'s refusals at once within its prompt share and holds the next for half to one and a half times holdMs', async () => {
    const hold = new RefusalHold({ holdMs: 400, promptPerSecond: 1, promptBurst: 3, random: () => 0 });
    for (let i = 0; i < 3; i += 1) {
      const { value, ms } = await timed(hold.hold('mallory', 100, 'rateLimit', `prompt ${i}`));
      assert.equal(value, `prompt ${i}`);
      assert.ok(ms < 100, `a refusal within the prompt share is answered at once (${ms.toFixed(0)} ms)`);
    }
    const held = await timed(within(hold.hold('mallory', 100, 'rateLimit', 'held'), 5_000, 'a held refusal'));
    assert.equal(held.value, 'held');
    assert.ok(held.ms >= 190, `past its prompt share a refusal waits at least half the hold (${held.ms.toFixed(0)} ms)`);
    const longest = new RefusalHold({ holdMs: 200, promptPerSecond: 1, promptBurst: 1, random: () => 0.999 });
    await longest.hold('mallory', 100, 'rateLimit', 'prompt');
    const late = await timed(within(longest.hold('mallory', 100, 'rateLimit', 'held'), 5_000, 'a held refusal'));
    assert.ok(late.ms >= 290 && late.ms < 1_000, `and at most one and a half times it (${late.ms.toFixed(0)} ms)`);
    assert.equal(longest.size, 0, 'an answered refusal is no longer held');
  });

  it('keeps each owner\'s prompt share and held count on its own, so one owner\'s refusals never hold another\'s', async () => {
    const hold = new RefusalHold({ holdMs: 10_000, promptPerSecond: 1, promptBurst: 1, maxPerOwner: 2 });
    await hold.hold('mallory', 100, 'rateLimit', 'prompt');
    const mallory = [hold.hold('mallory', 100, 'rateLimit', 'held'), hold.hold('mallory', 100, 'rateLimit', 'held')];
    assert.equal(hold.size, 2);
    const third = await timed(hold.hold('mallory', 100, 'rateLimit', 'past the owner cap'));
    assert.ok(third.ms < 100, 'past the owner\'s cap a refusal is answered at once, as without the hold');
    const alice = await timed(hold.hold('alice', 100, 'rateLimit', 'alice'));
    assert.ok(alice.ms < 100, 'another owner\'s first refusal is in its own prompt share');
    hold.stop();
    assert.deepEqual(await within(Promise.all(mallory), 1_000, 'stop answers what is held'), ['held', 'held']);
    assert.equal(hold.size, 0);
    const later = await timed(hold.hold('mallory', 100, 'rateLimit', 'after stop'));
    assert.ok(later.ms < 100, 'once stopped, a refusal is answered at once');
  });

  it('holds at most maxPerNode refusals and only requests of a known length up to maxRequestBytes', async () => {
    const hold = new RefusalHold({ holdMs: 10_000, promptPerSecond: 1, promptBurst: 1, maxPerOwner: 5, maxPerNode: 5, maxRequestBytes: 1_000 });
    const owners = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const owner of owners) await hold.hold(owner, 100, 'rateLimit', 'prompt');
    const held = owners.slice(0, 5).map((owner) => hold.hold(owner, 100, 'rateLimit', owner));
    assert.equal(hold.size, 5);
    for (const [bytes, what] of [[100, 'past the node cap'], [undefined, 'no Content-Length']] as const) {
      const answer = await timed(hold.hold('f', bytes, 'rateLimit', what));
      assert.ok(answer.ms < 100, `${what}: answered at once`);
    }
    const large = await timed(hold.hold('a', 1_001, 'rateLimit', 'too large'));
    assert.ok(large.ms < 100, 'a request larger than maxRequestBytes is answered at once (the hold would keep its body)');
    hold.stop();
    await within(Promise.all(held), 1_000, 'the held refusals');
    assert.equal(hold.size, 0);
  });

  it('refuses options that are not positive, through McpTasks too', () => {
    for (const holdMs of [0, -1, Number.NaN, Infinity]) assert.throws(() => new RefusalHold({ holdMs }), /refusalHold\.holdMs must be a positive number/);
    for (const maxPerOwner of [0, 1.5]) assert.throws(() => new RefusalHold({ maxPerOwner }), /refusalHold\.maxPerOwner must be a positive integer/);
    assert.throws(() => new McpTasks({ refusalHold: { promptPerSecond: 0 } }), /refusalHold\.promptPerSecond/);
    const defaults = new RefusalHold();
    assert.deepEqual([defaults.holdMs, defaults.maxPerOwner, defaults.maxPerNode, defaults.maxRequestBytes], [1_000, 256, 1_000, 16 * 1024]);
  });

  it('reads MCP_TASKS_REFUSAL_HOLD_MS as milliseconds or off, and refuses anything else', () => {
    assert.equal(refusalHoldFromEnv(undefined), undefined);
    assert.equal(refusalHoldFromEnv(' '), undefined);
    assert.equal(refusalHoldFromEnv('off'), false);
    assert.deepEqual(refusalHoldFromEnv('250'), { holdMs: 250 });
    for (const raw of ['0', '-5', 'soon', 'Infinity']) assert.throws(() => refusalHoldFromEnv(raw), /MCP_TASKS_REFUSAL_HOLD_MS must be "off" or a positive number/);
  });
});

const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAAAA';
const LOOPS = 8;
const LOOP_MS = 3_000;

describe('a demo node with the refusal hold', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let dir: string;
  const nodes: DemoProcess[] = [];

  const start = async (name: string, env: Record<string, string>) => {
    const node = await spawnDemoNode(name, { DATABASE_URL: db.url, MCP_TASKS_TOKENS: path.join(dir, 'tokens.json'), MCP_TASKS_RATE_LIMIT: '1,1', ...env });
    nodes.push(node);
    return node;
  };

  /** `LOOPS` loops that send mallory's next tasks/get as soon as the last is answered, for `LOOP_MS`: every reply. */
  async function retryLoops(url: string): Promise<AuthReply[]> {
    const replies: AuthReply[] = [];
    const deadline = performance.now() + LOOP_MS;
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while (performance.now() < deadline) replies.push(await within(authRpc(url, 'mallory', 'tasks/get', { taskId: UNKNOWN_ID }), 10_000, 'a tasks/get'));
      }),
    );
    return replies;
  }

  before(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'mcp-tasks-refusal-hold-'));
    writeFileSync(path.join(dir, 'tokens.json'), JSON.stringify({ mallory: { sub: 'mallory', clientId: 'app', scopes: [] }, alice: { sub: 'alice', clientId: 'app', scopes: [] } }));
  });

  after(async () => {
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => within(node.exited, 10_000, `${node.name} exits`)));
    await db?.drop();
  });

  it('paces a retry loop past the rate limit to about one request per hold, with the same refusal, while another owner is served at once', async () => {
    const paced = await start('refusal-hold', { MCP_TASKS_REFUSAL_HOLD_MS: '400' });
    const unpaced = await start('refusal-hold-off', { MCP_TASKS_REFUSAL_HOLD_MS: 'off' });
    const alice = (async () => {
      await new Promise((resolve) => setTimeout(resolve, LOOP_MS / 2));
      return timed(within(authRpc(paced.url, 'alice', 'tasks/get', { taskId: UNKNOWN_ID }), 10_000, 'alice\'s tasks/get'));
    })();
    const [replies, aliceRead] = await Promise.all([retryLoops(paced.url), alice]);
    const refused = replies.filter((reply) => reply.status === 429);
    // The prompt share (burst 20, then 10 a second) and the loops' holds (each at least 200 ms), the rate limit's few passes.
    const most = 20 + (10 * LOOP_MS) / 1000 + (LOOPS * LOOP_MS) / 200 + 10;
    assert.ok(replies.length <= most, `${replies.length} requests in ${LOOP_MS} ms from ${LOOPS} loops: at most ${most} with the hold`);
    assert.ok(refused.length >= replies.length - 10, 'past the rate limit, requests are refused');
    for (const reply of refused) {
      assert.equal(reply.error?.code, -32000);
      assert.ok(typeof reply.error?.data?.['retryAfterMs'] === 'number', 'a held refusal is the rate limit\'s own answer');
    }
    assert.equal(aliceRead.value.error?.code, -32602, `another owner is served: ${JSON.stringify(aliceRead.value.body)}`);
    assert.ok(aliceRead.ms < 150, `another owner's request is not held (${aliceRead.ms.toFixed(0)} ms)`);
    // The node counts its refusals by limit and by whether they were held (refusals are never logged).
    const metrics = await within(fetch(`${paced.base}/metrics`).then((response) => response.text()), 10_000, 'the node\'s metrics');
    const samples = [...metrics.matchAll(/^mcp_tasks_limit_refusals_total\{([^}]*)\} (\S+)$/gm)].map(([, labels, value]) => ({ labels: labels!, value: Number(value) }));
    const refusals = (held: boolean) => samples.filter((sample) => sample.labels.includes(`mcp_tasks_refusal_held="${held}"`)).reduce((sum, sample) => sum + sample.value, 0);
    assert.ok(samples.some((sample) => sample.labels.includes('mcp_tasks_limit="rateLimit"')), `refusals are counted by limit: ${JSON.stringify(samples)}`);
    assert.ok(refusals(false) >= 20, `the prompt share's refusals are counted as not held: ${refusals(false)}`);
    assert.ok(refusals(true) >= 1 && refusals(true) + refusals(false) === refused.length, `every refusal is counted once (held ${refusals(true)}, prompt ${refusals(false)}, refused ${refused.length})`);

    // The same loops against a node without the hold: what the hold saves.
    // Compared with the paced run and the hold itself, not with a fixed count: a loaded machine
    // answers fewer requests in LOOP_MS either way (CI once saw 465 where a quiet one sees 1 500).
    const unpacedStarted = performance.now();
    const unpacedReplies = await retryLoops(unpaced.url);
    const meanMs = (LOOPS * (performance.now() - unpacedStarted)) / unpacedReplies.length;
    assert.ok(unpacedReplies.length > 1.5 * replies.length, `without the hold the loops sent ${unpacedReplies.length} requests, with it ${replies.length}`);
    assert.ok(meanMs < 200, `without the hold a refusal is answered at once (a loop's mean round trip ${meanMs.toFixed(0)} ms; a held one waits at least 200 ms)`);
  });

  it('answers its held refusals at once when it drains', async () => {
    const node = await start('refusal-hold-drain', { MCP_TASKS_REFUSAL_HOLD_MS: '20000' });
    // At once, past the rate limit and the prompt share (burst 20): the refusals past it are held 10 to 30 s.
    const replies = Array.from({ length: 40 }, () => timed(authRpc(node.url, 'mallory', 'tasks/get', { taskId: UNKNOWN_ID })));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    node.child.kill('SIGTERM');
    const answers = await within(Promise.all(replies), 8_000, 'every request once the node drains');
    const held = answers.filter(({ ms }) => ms >= 1_000);
    assert.ok(held.length >= 5, `${held.length} of the refusals were held until the drain`);
    for (const { value } of held) assert.equal(value.status, 429);
    assert.equal(await within(node.exited, 15_000, 'the drained node exits'), 0);
  });
});
