import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskStore } from '@mcp-tasks/postgres';
import { postgresReadiness } from '../../packages/gateway/src/http/readiness.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { listeningNode } from '../support/listening-node.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../support/tcp-proxy.js';

let database: TestDatabase;
let proxy: TcpProxy;
before(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
});
after(async () => {
  await proxy?.close();
  await database?.drop();
});

async function get(url: string): Promise<{ status: number; body: any; ms: number }> {
  const start = Date.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json(), ms: Date.now() - start };
}

describe('readiness', { timeout: 90_000 }, () => {
  it('a node\'s /readyz is 503 with the reason while PostgreSQL does not answer, and ready again after; /healthz stays a cheap 200', async (t) => {
    let node: DemoProcess | undefined;
    t.after(() => {
      proxy.thaw();
      node?.child.kill('SIGKILL');
    });
    node = await spawnDemoNode('ready-1', { DATABASE_URL: throughProxy(database.url, proxy) });
    assert.deepEqual((await get(`${node.base}/readyz`)).body, { status: 'ready', listener: 'listening' });
    proxy.freeze();
    const down = await get(`${node.base}/readyz`);
    assert.equal(down.status, 503);
    assert.equal(down.body.status, 'not ready');
    // The node listens from the start (it claims queued tasks), so its listener may be what is down first.
    assert.match(down.body.reason, /PostgreSQL did not answer SELECT 1 within 2000 ms|Connection terminated|the control listener is reconnecting/);
    assert.ok(down.ms < 5_000, `the check is bounded (${down.ms} ms)`);
    const live = await get(`${node.base}/healthz`);
    assert.equal(live.status, 200);
    assert.ok(live.ms < 1_000, `liveness does not wait on PostgreSQL (${live.ms} ms)`);
    proxy.thaw();
    await eventually(async () => (await get(`${node!.base}/readyz`)).status === 200, 20_000, '/readyz ready again');
  });

  it('a store whose control listener lost its connection is not ready until it listens again', async (t) => {
    const quiet = { warn: () => undefined, error: () => undefined };
    const store = await PostgresTaskStore.connect({ connectionString: throughProxy(database.url, proxy), logger: quiet });
    const node = await listeningNode(store, { listener: { reconnectBaseMs: 50, reconnectMaxMs: 200 }, logger: quiet });
    t.after(async () => {
      proxy.thaw();
      await node.stop();
      await store.close();
    });
    const check = postgresReadiness(store, node, 1_000);
    // Not needed yet: a node that follows nothing does not listen.
    assert.equal(node.listener!.state, 'idle');
    assert.equal(await check(), undefined);
    const unwatch = node.watch('some-task', () => undefined);
    t.after(unwatch);
    await eventually(async () => node.listener!.state === 'listening', 10_000, 'the listener listens');
    assert.equal(await check(), undefined);
    proxy.freeze();
    await eventually(async () => /the control listener is (reconnecting|connecting)/.test((await check()) ?? ''), 10_000, 'not ready: listener down');
    proxy.thaw();
    await eventually(async () => (await check()) === undefined, 20_000, 'ready once it listens again');
  });
});
