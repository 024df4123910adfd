// Callers kept apart upstream: a gateway node (a real demo process on PostgreSQL, bearer tokens
// for alice and bob) whose upstream (test/fixtures/busy-upstream.fixture.ts, a real process)
// counts its quota per Authorization header and finds a task only for its owner. With
// MCP_TASKS_UPSTREAM_IDENTITY a JSON object of upstream tokens by subject, each caller is its own
// owner upstream: alice at her upstream quota leaves bob's untouched, and her relays and cancels
// act as her (a wrong credential would not find her tasks).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authRpc } from '../support/auth-client.js';
import { gatewayBeforeBusyUpstream } from '../support/busy-upstream.js';
import { eventually } from '../support/demo-process.js';
import { within } from '../support/within.js';

describe('a gateway that carries each caller identity upstream (per-subject upstream tokens)', { timeout: 120_000 }, () => {
  const f = gatewayBeforeBusyUpstream('identity-gateway', { UPSTREAM_RATE: '1000', UPSTREAM_MAX_LIVE: '3' }, (url) => ({
    MCP_TASKS_RATE_LIMIT: 'off',
    MCP_TASKS_MAX_IN_FLIGHT: 'off',
    MCP_TASKS_UPSTREAM_URL: url,
    MCP_TASKS_UPSTREAM_TOKEN: 'gateway-own',
    MCP_TASKS_UPSTREAM_IDENTITY: JSON.stringify({ alice: 'up-alice', bob: 'up-bob' }),
  }));

  it("each caller is its own owner upstream: alice's quota there is hers, her relays follow and her cancels land as her", async () => {
    const call = (token: string, seconds: number) => within(authRpc(f.gateway.url, token, 'tools/call', { name: 'upstream_slow_compute', arguments: { seconds } }), 30_000, `${token}'s call`);
    const alices: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const reply = await call('alice', 120);
      assert.equal(reply.result?.['resultType'], 'task', JSON.stringify(reply.body));
      alices.push(reply.result!['taskId'] as string);
    }
    // The upstream's refusal is of alice's own quota there.
    const refused = await call('alice', 120);
    assert.equal(refused.error?.['code'], -32600, JSON.stringify(refused.body));
    assert.match(String(refused.error?.['message']), /^Upstream upstream refused the task: .*already has 3/);
    // Bob, his own owner upstream, is not affected: his task works there under his credential.
    const bobs = await call('bob', 2);
    assert.equal(bobs.result?.['resultType'], 'task', JSON.stringify(bobs.body));
    await eventually(async () => (await f.upstream.state()).workingByOwner['Bearer up-bob'] === 1, 5_000, 'bob task works upstream as bob');
    assert.deepEqual((await f.upstream.state()).workingByOwner, { 'Bearer up-alice': 3, 'Bearer up-bob': 1 });
    // His relay follows it as him (the upstream finds it only for its owner) to its result.
    await eventually(async () => (await authRpc(f.gateway.url, 'bob', 'tasks/get', { taskId: bobs.result!['taskId'] })).result?.['status'] === 'completed', 15_000, 'bob task completes');
    // Alice's cancels are delivered as her: her upstream tasks stop.
    for (const taskId of alices) assert.ok((await authRpc(f.gateway.url, 'alice', 'tasks/cancel', { taskId })).result);
    await eventually(async () => (await f.upstream.state()).working === 0, 15_000, "alice's upstream tasks are cancelled");
  });
});
