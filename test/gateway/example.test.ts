// examples/gateway: the gateway in front of a real stdio server from npm
// (@modelcontextprotocol/server-filesystem, spawned with npx) serves its plain tools as tasks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOT, spawnGatewayNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

let gateway: DemoProcess | undefined;
let url: string;

before(async () => {
  gateway = await spawnGatewayNode('gateway-example', 'examples/gateway/gateway.yaml', { npm_config_offline: 'true' });
  url = gateway.url;
});

after(async () => {
  gateway?.child.kill('SIGKILL');
  await gateway?.exited;
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
