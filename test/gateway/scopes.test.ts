// With auth on, an upstream's `scopes` are what a caller needs for its tools: a token without them
// gets insufficient_scope before anything reaches the (shared) stdio process.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, spawnGatewayNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { post, requestBody, requestHeaders } from '../support/server-raw-client.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-scopes-'));
const log = path.join(directory, 'stdio.log');
let gateway: DemoProcess | undefined;
let url: string;

before(async () => {
  const tokens = path.join(directory, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ allowed: { sub: 'ada', clientId: 'app', scopes: ['local'] }, other: { sub: 'bob', clientId: 'app', scopes: [] } }));
  const config = path.join(directory, 'gateway.yaml');
  writeFileSync(config, `upstreams:\n  - name: local\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", "tsx", ${JSON.stringify(path.join(ROOT, 'test/fixtures/stdio-plain-upstream.fixture.ts'))}]\n    cwd: ${JSON.stringify(ROOT)}\n    env: { STDIO_FIXTURE_LOG: ${JSON.stringify(log)} }\n    scopes: [local]\n`);
  gateway = await spawnGatewayNode('gateway-scopes', config, { MCP_TASKS_TOKENS: tokens });
  url = gateway.url;
});

after(async () => {
  gateway?.child.kill('SIGKILL');
  await gateway?.exited;
  rmSync(directory, { recursive: true, force: true });
});

function call(token: string) {
  const params = { name: 'local_echo', arguments: { text: 'hi' } };
  return within(post(url, requestBody('tools/call', params, false), { ...requestHeaders('tools/call', params), authorization: `Bearer ${token}` }), 20_000, 'tools/call');
}

describe("an upstream's scopes", { timeout: 60_000 }, () => {
  it('a token without them is refused with insufficient_scope and the call never reaches the stdio process; one with them is served', async () => {
    const refused = await call('other');
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(refused.challenge ?? '', /insufficient_scope/);
    const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line.includes('"call"')).length : 0);
    assert.equal(calls(), 0);
    const served = await call('allowed');
    assert.equal(served.error, undefined, JSON.stringify(served.body));
    assert.deepEqual(served.result?.['content'], [{ type: 'text', text: 'hi' }]);
    assert.equal(calls(), 1);
  });
});
