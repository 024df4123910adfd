// The demo's `stubborn` tool sleeps through its cancel. On a node with one run slot
// (MCP_TASKS_MAX_RUNS=1) the cancel still frees the slot once MCP_TASKS_ABORT_GRACE_MS has passed:
// the next task runs at once instead of queueing behind a run that will not stop, /metrics counts
// the run that ignored its abort, and the cancelled task stays cancelled when the sleeper wakes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configFromEnv } from '@mcp-tasks/gateway';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { rpc } from '../support/server-raw-client.js';

const GRACE_MS = 300;

describe('a stubborn run on a one-slot demo node', { timeout: 60_000 }, () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer(configFromEnv({ PORT: '0', MCP_TASKS_MAX_RUNS: '1', MCP_TASKS_ABORT_GRACE_MS: String(GRACE_MS), MCP_TASKS_POLL_INTERVAL_MS: '50' }));
  });
  after(async () => {
    await demo?.close(0);
  });

  const get = async (taskId: string) => (await rpc(demo.url, 'tasks/get', { taskId })).result!;
  const metrics = async () => (await fetch(new URL('/metrics', demo.url))).text();

  it('gives its slot back after the grace period once cancelled, is counted, and cannot revive its task', async () => {
    // Long enough that the next task can only have run in the slot the sleeper gave back, even on a busy machine.
    const SLEEP_S = 8;
    const startedAt = Date.now();
    const started = await rpc(demo.url, 'tools/call', { name: 'stubborn', arguments: { seconds: SLEEP_S } });
    assert.equal(started.result?.['resultType'], 'task', JSON.stringify(started.body));
    const stubbornId = started.result!['taskId'] as string;
    assert.equal((await rpc(demo.url, 'tasks/cancel', { taskId: stubbornId })).error, undefined);
    // The next task queues until the slot is free, then runs here.
    const next = await rpc(demo.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 } });
    const nextId = next.result!['taskId'] as string;
    let status = '';
    while (status !== 'completed' && Date.now() - startedAt < (SLEEP_S - 1) * 1000) {
      status = (await get(nextId))['status'];
      if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(status, 'completed', 'the next task ran in the slot the stubborn run gave back, while it still slept');
    assert.match(await metrics(), /mcp_tasks_runs_ignored_abort_total\{[^}]*\} 1\b/);
    // The sleeper wakes and returns: the task it held stays cancelled.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, SLEEP_S * 1000 + 500 - (Date.now() - startedAt))));
    const settled = await get(stubbornId);
    assert.deepEqual([settled['status'], settled['result']], ['cancelled', undefined]);
  });
});
