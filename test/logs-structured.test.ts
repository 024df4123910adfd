// The node's log is JSON lines a pipeline can filter: every line parses, names its node, and a
// task's creation and end are one line each with its id, tool, owner hash and trace ids, at the
// default level (info); a client's value cannot break a line; nothing is logged at `error` for them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eventually, spawnDemoNode, type DemoProcess } from './support/demo-process.js';
import { within } from './support/within.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'log-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

async function post(url: string, method: string, params: Record<string, unknown>, name: string): Promise<Record<string, any>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  });
  return JSON.parse(await res.text()) as Record<string, any>;
}

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
  // Spans are recorded (so lines carry their ids) only with an exporter: an OTLP sink that takes anything.
  let sink: Server;
  before(async () => {
    sink = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    node = await spawnDemoNode('log-node', {
      DATABASE_URL: '',
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
  });

  it("at info, a task's creation and its end are one JSON line each, with its id, tool, node, owner hash and trace", async () => {
    const created = await post(node.url, 'tools/call', { name: 'failing_job', arguments: {} }, 'failing_job');
    const taskId = created.result?.taskId as string;
    assert.ok(taskId, JSON.stringify(created));
    await eventually(async () => lines(node).some((line) => line['msg'] === 'task ended' && line['taskId'] === taskId), 10_000, 'the end is logged');
    const ofTask = lines(node).filter((line) => line['taskId'] === taskId);
    assert.deepEqual(
      ofTask.map((line) => line['msg']),
      ['task created', 'task ended'],
    );
    // The owner without authorization: subject "host", the demo server, no client, no resource.
    const owner = createHash('sha256').update(JSON.stringify(['host', 'mcp-tasks-demo', '', ''])).digest('hex').slice(0, 16);
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
  });

  it('every line is JSON, including after a client sends control characters', async () => {
    await post(node.url, 'tasks/get', { taskId: 'abc\n{"level":"error","msg":"FORGED"}' }, 'x');
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
      const created = await post(node.url, 'tools/call', { name: 'greet', arguments: { name: 'x' } }, 'greet');
      assert.ok(created.result, JSON.stringify(created));
      const task = await post(node.url, 'tools/call', { name: 'failing_job', arguments: {} }, 'failing_job');
      assert.ok(task.result?.taskId, JSON.stringify(task));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.deepEqual(lines(node).map((line) => line['msg']), [`mcp-tasks demo listening on ${node.url}`]);
    } finally {
      node.child.kill('SIGTERM');
      await within(node.exited, 15_000, 'the node to exit');
    }
  });
});
