// The Express and fetch-host (Hono) examples serve McpTasks.handler through handler.fetch: each
// one, run as its own process, answers a 2026-07-28 task tool call with a task that completes,
// and keeps its own routes beside /mcp.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { ROOT, waitForOutput } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const started: ChildProcess[] = [];

after(async () => {
  for (const child of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
});

async function startExample(name: string): Promise<string> {
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', `examples/${name}/src/server.ts`], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return waitForOutput(() => output, /listening on (http:\/\/[^\s"]+)/, exited, 60_000);
}

for (const example of ['express', 'fetch-host']) {
  describe(`examples/${example}`, { timeout: 120_000 }, () => {
    it('serves a task tool call as a task that completes, beside its own routes', async () => {
      const url = await startExample(example);
      const health = await within(fetch(url.replace(/\/mcp$/, '/healthz')), 10_000, 'the health route answered');
      assert.deepEqual(await health.json(), { status: 'ok' });
      const created = await within(rpc(url, 'tools/call', { name: 'export', arguments: { project: 'site' } }), 10_000, 'the call answered');
      assert.equal(created.status, 200);
      assert.equal(created.result?.['resultType'], 'task');
      const taskId = created.result?.['taskId'] as string;
      const done = await within(waitFor(url, taskId, (task) => task['status'] === 'completed'), 15_000, 'the task completed');
      assert.deepEqual(done['result']?.['content'], [{ type: 'text', text: 'Exported site.' }]);
    });
  });
}
