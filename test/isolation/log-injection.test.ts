// A client's values cannot forge or flood the node's log, nor be echoed back at a multiple of their
// size: a task id that cannot be one, or a tool name that cannot be one, is refused before the SDK
// copies it into an error, and what is logged of a client's value is escaped and cut.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { logSafe } from '@mcp-tasks/core';
import { spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'attacker', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

async function post(url: string, method: string, params: Record<string, unknown>, name: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  });
  return { status: res.status, text: await res.text() };
}

describe('what a client sends into the log', { timeout: 60_000 }, () => {
  let node: DemoProcess;
  before(async () => {
    node = await spawnDemoNode('log-injection', { DATABASE_URL: '' });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
  });

  it('a task id with a newline or a NUL is refused like an unknown one and forges no log line', async () => {
    for (const taskId of ['abc\nmcp-tasks: FORGED LOG LINE', 'a\u0000mcp-tasks: FORGED']) {
      const reply = await post(node.url, 'tasks/get', { taskId }, encodeURIComponent(taskId));
      assert.deepEqual(JSON.parse(reply.text).error, { code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    const reply = await post(node.url, 'tools/call', { name: 'slow_compute\nmcp-tasks: FORGED', arguments: {} }, 'x');
    assert.equal(JSON.parse(reply.text).error?.code, -32602);
    assert.doesNotMatch(reply.text, /FORGED/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.doesNotMatch(node.output(), /^(mcp-tasks|demo)?:? ?FORGED|\nmcp-tasks: FORGED/m);
  });

  it('a 3 MB task id costs a short answer and nothing in the log', async () => {
    const before = node.output().length;
    const reply = await post(node.url, 'tasks/get', { taskId: 'x'.repeat(3_000_000) }, 'x');
    assert.ok(reply.text.length < 200, `answer of ${reply.text.length} characters`);
    assert.equal(JSON.parse(reply.text).error?.code, -32602);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(node.output().length - before < 2_000, `log grew by ${node.output().length - before} characters`);
  });

  it('a logged error keeps one record per line, and a huge message is cut', () => {
    const error = new Error(`bad id "abc\nmcp-tasks: FORGED\u0000" ${'y'.repeat(5_000)}`);
    const line = logSafe(error);
    const [head, ...frames] = line.split('\n');
    assert.match(head!, /^Error: bad id "abc\\nmcp-tasks: FORGED\\u0000"/);
    assert.match(head!, /… \(\d+ more characters\)$/);
    assert.ok(head!.length < 1_100);
    assert.ok(frames.every((frame) => /^\s+at /.test(frame)), 'the rest are stack frames');
    assert.equal(logSafe('plain\r\nvalue'), 'plain\\r\\nvalue');
  });
});
