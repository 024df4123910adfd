// The node's log is JSON lines a pipeline can filter: every line parses, names its node, and a
// task's creation and end are one line each with its id, tool, owner hash and trace ids, at the
// default level (info); a client's value cannot break a line; nothing is logged at `error` for them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authRpc } from '../support/auth-client.js';
import { post, requestBody, requestHeaders, rpc } from '../support/server-raw-client.js';
import { eventually, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

// A bearer token and its subject: neither may appear in the log, only the owner's hash.
const TOKEN = 'tok-3f9a-secret-bearer';
const SUBJECT = 'alice@example.com';

function lines(node: DemoProcess): Record<string, unknown>[] {
  return node
    .output()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

describe('structured logs', { timeout: 60_000 }, () => {
  let node: DemoProcess;
  let dir: string;
  // Spans are recorded (so lines carry their ids) only with an exporter: an OTLP sink that takes anything.
  let sink: Server;
  before(async () => {
    sink = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    dir = mkdtempSync(path.join(tmpdir(), 'logs-structured-'));
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify({ [TOKEN]: { sub: SUBJECT, clientId: 'app-a', scopes: ['export'] } }));
    node = await spawnDemoNode('log-node', {
      DATABASE_URL: '',
      MCP_TASKS_TOKENS: tokens,
      MCP_TASKS_LOG_LEVEL: '',
      MCP_TASKS_LOG_FORMAT: '',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
    sink?.closeAllConnections();
    await new Promise((resolve) => sink?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("at info, a task's creation and its end are one JSON line each, with its id, tool, node, owner hash and trace", async () => {
    const created = await authRpc(node.url, TOKEN, 'tools/call', { name: 'failing_job', arguments: {} });
    const taskId = created.result?.['taskId'] as string;
    assert.ok(taskId, JSON.stringify(created.body));
    await eventually(async () => lines(node).some((line) => line['msg'] === 'task ended' && line['taskId'] === taskId), 10_000, 'the end is logged');
    const ofTask = lines(node).filter((line) => line['taskId'] === taskId);
    assert.deepEqual(
      ofTask.map((line) => line['msg']),
      ['task created', 'task ended'],
    );
    const owner = ofTask[0]!['owner'];
    assert.match(String(owner), /^[0-9a-f]{16}$/);
    for (const line of ofTask) {
      assert.equal(line['level'], 'info');
      assert.equal(line['node'], 'log-node');
      assert.equal(line['tool'], 'failing_job');
      assert.equal(line['owner'], owner);
      assert.match(String(line['traceId']), /^[0-9a-f]{32}$/);
      assert.match(String(line['spanId']), /^[0-9a-f]{16}$/);
    }
    assert.equal(ofTask[0]!['traceId'], ofTask[1]!['traceId'], 'both lines are in the creating request trace');
    assert.equal(ofTask[1]!['status'], 'completed');
    assert.ok(!node.output().includes(SUBJECT), 'the subject is not in the log');
    assert.ok(!node.output().includes(TOKEN), 'the token is not in the log');
  });

  it('every line is JSON, including after a client sends control characters', async () => {
    const params = { taskId: 'abc\n{"level":"error","msg":"FORGED"}' };
    await post(node.url, requestBody('tasks/get', params, true), { ...requestHeaders('tasks/get', {}), 'mcp-name': 'x', authorization: `Bearer ${TOKEN}` });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const all = lines(node);
    assert.ok(all.length >= 3);
    assert.ok(all.every((line) => typeof line['level'] === 'string' && typeof line['msg'] === 'string' && typeof line['time'] === 'number'));
    assert.ok(!all.some((line) => line['msg'] === 'FORGED'));
  });
});

describe('MCP_TASKS_LOG_LEVEL', { timeout: 60_000 }, () => {
  it('at warn, a task leaves no line', async () => {
    const node = await spawnDemoNode('quiet-node', { DATABASE_URL: '', MCP_TASKS_LOG_LEVEL: 'warn', MCP_TASKS_LOG_FORMAT: 'json' });
    try {
      const created = await rpc(node.url, 'tools/call', { name: 'greet', arguments: { name: 'x' } });
      assert.ok(created.result, JSON.stringify(created.body));
      const task = await rpc(node.url, 'tools/call', { name: 'failing_job', arguments: {} });
      assert.ok(task.result?.['taskId'], JSON.stringify(task.body));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.deepEqual(lines(node).map((line) => line['msg']), [`mcp-tasks demo listening on ${node.url}`]);
    } finally {
      node.child.kill('SIGTERM');
      await within(node.exited, 15_000, 'the node to exit');
    }
  });
});

describe('MCP_TASKS_LOG_FORMAT=pretty', { timeout: 60_000 }, () => {
  it("a terminal's lines: the level, the node and the message, the task's fields below, no JSON", async () => {
    const node = await spawnDemoNode('pretty-node', { DATABASE_URL: '', MCP_TASKS_LOG_LEVEL: 'info', MCP_TASKS_LOG_FORMAT: 'pretty' });
    try {
      const task = await rpc(node.url, 'tools/call', { name: 'failing_job', arguments: {} });
      const taskId = task.result?.['taskId'] as string;
      assert.ok(taskId, JSON.stringify(task.body));
      // Colours or not (FORCE_COLOR), the words are the same.
      const text = () => node.output().replace(/\x1b\[[0-9;]*m/g, '');
      await eventually(async () => text().includes('pretty-node: task ended'), 10_000, 'the task ends');
      assert.match(text(), /INFO.*pretty-node: task created/);
      assert.ok(text().includes(`taskId: "${taskId}"`), text());
      assert.ok(!text().split('\n').some((line) => line.trimStart().startsWith('{')), text());
    } finally {
      node.child.kill('SIGTERM');
      await within(node.exited, 15_000, 'the node to exit');
    }
  });
});
