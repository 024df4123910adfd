// The load the scenarios of the request path share: reads of completed tasks at saturation, one
// task end to end (tools/call slow_compute {seconds: 0}, then tasks/get until completed), and the
// completed tasks the reads read.
import { percentile } from '../stats.js';
import { closedLoopFor, sleep } from './concurrency.js';
import { rpc } from './mcp-client.js';

/** `tasks/get` of `taskIds` by `clients` keep-alive clients back to back for `durationMs`: the rate and p50. */
export async function saturate(url: string, taskIds: readonly string[], durationMs: number, clients = 16): Promise<{ rate: number; p50: number }> {
  const latencies: number[] = [];
  const elapsed = await closedLoopFor(clients, durationMs, async (worker) => {
    const started = performance.now();
    await rpc(url, 'tasks/get', { taskId: taskIds[(worker + latencies.length) % taskIds.length]! });
    latencies.push(performance.now() - started);
  });
  return { rate: latencies.length / (elapsed / 1000), p50: percentile(latencies, 50) };
}

/**
 * One task end to end; `completed` counts it once its completed `tasks/get` arrives (and, if it
 * has `polls`, each `tasks/get` it took: the client polls back to back, so a task that completes
 * later costs the clients more reads). `target` may take turns among nodes.
 */
export async function oneTask(target: string | (() => string), completed: { count: number; polls?: number }): Promise<void> {
  const next = typeof target === 'string' ? () => target : target;
  const created = await rpc(next(), 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
  const taskId = created.result?.['taskId'];
  if (typeof taskId !== 'string') return;
  for (;;) {
    const reply = await rpc(next(), 'tasks/get', { taskId });
    if (completed.polls !== undefined) completed.polls += 1;
    const status = reply.result?.['status'];
    if (status === 'completed') {
      completed.count += 1;
      return;
    }
    if (reply.error || status === 'failed' || status === 'cancelled') return;
  }
}

/** Makes `count` tasks on `url` and waits until each reads `completed`: what the reads read. */
export async function seedCompletedTasks(url: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    const taskId = created.result?.['taskId'];
    if (typeof taskId !== 'string') throw new Error(`tools/call did not make a task: ${JSON.stringify(created)}`);
    ids.push(taskId);
  }
  for (const taskId of ids) {
    for (let tries = 0; (await rpc(url, 'tasks/get', { taskId })).result?.['status'] !== 'completed'; tries += 1) {
      if (tries > 200) throw new Error(`task ${taskId} did not complete`);
      await sleep(10);
    }
  }
  return ids;
}
