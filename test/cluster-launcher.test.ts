import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, it } from 'node:test';
import { freePort } from '../packages/demo/src/cluster/embedded-postgres.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { ROOT, waitForOutput } from './support/demo-process.js';
import { rpc, waitFor } from './server-raw-client.js';

let database: TestDatabase;
before(async () => (database = await createTestDatabase()));
after(() => database.drop());

it('npm start\'s launcher brings up three nodes behind one URL, serves a task through it, and stops cleanly on SIGTERM', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/cluster/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: database.url, PORT: String(port), MCP_TASKS_DRAIN_MS: '2000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const url = await waitForOutput(() => output, /MCP at (http:\/\/\S+)/, exited, 60_000);
    assert.equal(url, `http://127.0.0.1:${port}/mcp`);
    // Round robin: three requests meet three nodes.
    const seen = new Set<string>();
    for (let i = 0; i < 3; i += 1) seen.add((await fetch(url.replace('/mcp', '/healthz'))).headers.get('x-mcp-tasks-node') ?? '');
    assert.deepEqual([...seen].sort(), ['node-1', 'node-2', 'node-3']);
    // A task created through the front and followed through it (other nodes answer the polls).
    const created = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 3, delayMs: 50 } });
    const taskId = created.result!['taskId'] as string;
    const done = await waitFor(url, taskId, (task) => task['status'] === 'completed');
    assert.match(JSON.stringify(done), /Exported 3 of 3 files\./);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  } finally {
    child.kill('SIGKILL');
  }
});
