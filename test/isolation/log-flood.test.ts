// A client's mistakes cannot flood the node's log: requests the SDK refuses as malformed (no
// token needed on a node without authorization) are counted, and logged at most as one sampled
// line without a stack. They used to log a multi-line stack each (78 716 lines in 10 s).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const MISTAKES = 300;

describe('client mistakes in the log', { timeout: 90_000 }, () => {
  let node: DemoProcess;
  before(async () => {
    node = await spawnDemoNode('log-flood', { DATABASE_URL: '', MCP_TASKS_RATE_LIMIT: 'off' });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
  });

  const mistakes: Array<() => Promise<Response>> = [
    // A 2026-07-28 request without its envelope ("Rejected inbound request (envelope-invalid)").
    () =>
      fetch(node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'greet' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'greet', arguments: {} } }),
      }),
    // JSON that is no JSON-RPC message.
    () =>
      fetch(node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ hello: 'world\nFORGED' }),
      }),
  ];

  it(`${MISTAKES} malformed requests write at most one line, without a stack, and are counted`, async () => {
    const before = node.output();
    for (let sent = 0; sent < MISTAKES; sent += 30) {
      await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const response = await mistakes[(sent + i) % mistakes.length]!();
          await response.arrayBuffer();
          assert.ok(response.status >= 400 && response.status < 500, `a mistake is a 4xx, got ${response.status}`);
        }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const written = node.output().slice(before.length);
    const lines = written.split('\n').filter((line) => line !== '');
    assert.ok(lines.length <= 1, `the log grew by ${lines.length} lines:\n${written.slice(0, 2_000)}`);
    assert.doesNotMatch(written, /^\s+at /m);
    assert.doesNotMatch(written, /\nFORGED/);
    assert.ok((await metric(node.base, 'mcp_tasks_client_mistakes_total')) >= MISTAKES, 'each mistake is counted');
  });
});
