// examples/gateway: the gateway in front of a real stdio server from npm
// (@modelcontextprotocol/server-filesystem, spawned with npx) serves its plain tools as tasks.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ROOT, waitForOutput } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

let child: ReturnType<typeof spawn> | undefined;
let exited: Promise<number | null>;
let url: string;

before(async () => {
  child = spawn(process.execPath, ['packages/gateway/dist/bin/main.js', '--config', 'examples/gateway/gateway.yaml'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MCP_TASKS_LOG_FORMAT: 'json', npm_config_offline: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  exited = new Promise((resolve) => child!.on('exit', (code) => resolve(code)));
  url = await waitForOutput(() => output, /listening on (http:\/\/[^\s"]+)/, exited, 45_000);
});

after(async () => {
  child?.kill('SIGKILL');
  await exited;
});

describe('examples/gateway', { timeout: 60_000 }, () => {
  it('lists the filesystem server tools as files_<tool> and runs one as a task', async () => {
    const listed = await within(rpc(url, 'tools/list', {}), 20_000, 'tools/list');
    const names = ((listed.result?.['tools'] ?? []) as Array<{ name: string }>).map((tool) => tool.name);
    assert.ok(names.includes('files_list_directory'), names.join(', '));
    const created = await within(rpc(url, 'tools/call', { name: 'files_list_directory', arguments: { path: `${ROOT}/examples/gateway/data` } }), 20_000, 'tools/call');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'] as string, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /hello\.txt/);
  });
});
