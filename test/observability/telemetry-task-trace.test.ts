// One task's traces across two node processes, captured over OTLP: the task is created on A
// (full, so queued), its run is claimed by B, and B's `execute_tool` span is a child of A's
// `tools/call` span in the same trace; the polls, a listen on B, a 2025-11-25 `tasks/result`
// stream on A and the cancel link to it. A run claimed long after its creating request starts a
// trace of its own, linked to that request's span, and tasks/update links to it too.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testPool } from '../support/pg-clients.js';
import { eventually, metric, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc } from '../support/server-raw-client.js';
import { listen } from '../support/notifications-client.js';
import { legacyRpc } from '../support/legacy-client.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string; attributes?: { key: string; value: Record<string, unknown> }[] }[];
}

interface Captured extends OtlpSpan {
  readonly service: string;
}

function attribute(span: OtlpSpan, key: string): unknown {
  const found = span.attributes?.find((a) => a.key === key)?.value;
  return found === undefined ? undefined : Object.values(found)[0];
}

describe('traces that follow a task across nodes', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let sink: Server;
  const spans: Captured[] = [];
  let a: DemoProcess;
  let b: DemoProcess;
  let admin: pg.Pool;
  let env: (service: string, extra?: Record<string, string>) => Record<string, string>;

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 1 });
    admin.on('error', () => undefined);
    sink = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          const message = JSON.parse(body) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
          for (const resource of message.resourceSpans) {
            const service = resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
            for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    env = (service: string, extra: Record<string, string> = {}) => ({
      DATABASE_URL: database.url,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: service,
      MCP_TASKS_POLL_INTERVAL_MS: '100',
      MCP_TASKS_LOG_LEVEL: 'warn',
      ...extra,
    });
    // A runs one task at a time: the second waits for a node with room, which is B.
    a = await spawnDemoNode('trace-a', env('node-a', { MCP_TASKS_MAX_RUNS: '1' }));
    b = await spawnDemoNode('trace-b', env('node-b'));
  });

  after(async () => {
    for (const node of [a, b]) node?.child.kill('SIGTERM');
    await Promise.all([a, b].map((node) => node && within(node.exited, 15_000, 'a node to exit')));
    sink?.closeAllConnections();
    await new Promise((resolve) => sink?.close(resolve));
    await admin?.end();
    await database?.drop();
  });

  it("ties the create on A, the run claimed on B, the polls, the listens and the cancel into the creating request's trace", async () => {
    const first = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
    assert.ok(first.result?.['taskId'], JSON.stringify(first.body));
    const created = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'claimed' } });
    const taskId = created.result?.['taskId'] as string;
    assert.ok(taskId, JSON.stringify(created.body));
    await eventually(async () => (await metric(b.base, 'mcp_tasks_claims_total')) >= 1, 20_000, 'B claims the queued task');
    await rpc(a.url, 'tasks/get', { taskId });
    await rpc(b.url, 'tasks/get', { taskId });
    // Both streams stay open until the cancel ends the task; their spans last as long.
    const listening = await listen(b.url, [taskId]);
    await listening.until((messages) => messages.some((m) => m['method'] === 'notifications/tasks'), 10_000, 'the listen sends the task');
    const result = legacyRpc(a.url, 'tasks/result', { taskId });
    await rpc(a.url, 'tasks/cancel', { taskId });
    assert.match((await within(result, 20_000, 'the tasks/result stream to end')).error?.message ?? '', /cancelled/);
    await within(listening.ended, 20_000, 'the listen to end');
    await rpc(a.url, 'tasks/cancel', { taskId: first.result!['taskId'] });

    const ofTask = (name: string) => spans.filter((span) => span.name === name && attribute(span, 'mcp.task.id') === taskId);
    await eventually(async () => ofTask('execute_tool slow_compute').length === 1 && ofTask('tasks/cancel').length === 1 && ofTask('tasks/get').length === 2 && ofTask('subscriptions/listen').length === 1 && ofTask('tasks/result').length === 1, 20_000, 'the spans are exported');

    const [call] = ofTask('tools/call slow_compute');
    assert.ok(call, 'the creating tools/call span');
    assert.equal(call.service, 'node-a');
    assert.equal(attribute(call, 'mcp.method.name'), 'tools/call');
    assert.equal(attribute(call, 'gen_ai.tool.name'), 'slow_compute');
    assert.equal(attribute(call, 'mcp.protocol.version'), '2026-07-28');
    assert.equal(typeof attribute(call, 'jsonrpc.request.id'), 'string');

    const [run] = ofTask('execute_tool slow_compute');
    assert.equal(run!.service, 'node-b', 'the run was claimed on B');
    assert.equal(run!.traceId, call.traceId, 'in the creating trace');
    assert.equal(run!.parentSpanId, call.spanId, 'a child of the creating tools/call span');
    assert.equal(attribute(run!, 'gen_ai.tool.name'), 'slow_compute');
    assert.match(String(attribute(run!, 'mcp_tasks.node.id')), /^trace-b\//);
    assert.equal(attribute(run!, 'mcp.task.status'), 'cancelled');

    const [listenSpan] = ofTask('subscriptions/listen');
    assert.equal(listenSpan!.service, 'node-b');
    assert.equal(attribute(listenSpan!, 'mcp.protocol.version'), '2026-07-28');
    assert.equal(attribute(listenSpan!, 'jsonrpc.request.id'), String(listening.id));
    const [resultSpan] = ofTask('tasks/result');
    assert.equal(resultSpan!.service, 'node-a');
    assert.equal(attribute(resultSpan!, 'mcp.protocol.version'), '2025-11-25');
    assert.equal(typeof attribute(resultSpan!, 'jsonrpc.request.id'), 'string');

    for (const span of [...ofTask('tasks/get'), ...ofTask('tasks/cancel'), listenSpan!, resultSpan!]) {
      assert.ok(
        span.links?.some((link) => link.traceId === call.traceId && link.spanId === call.spanId),
        `${span.name} on ${span.service} links to the creating span: ${JSON.stringify(span.links)}`,
      );
      assert.equal(attribute(span, 'mcp.method.name'), span.name);
    }
    assert.deepEqual(new Set(ofTask('tasks/get').map((span) => span.service)), new Set(['node-a', 'node-b']));
  });

  it('a run claimed long after its creating request starts a trace of its own, linked to that request; tasks/update links to it too', async () => {
    // B stops, so that the task queued on A (full) waits with no node to claim it.
    b.child.kill('SIGTERM');
    await within(b.exited, 15_000, 'B to exit');
    const blocker = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
    const created = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'late' } });
    const taskId = created.result?.['taskId'] as string;
    assert.ok(taskId, JSON.stringify(created.body));
    // As if it had waited an hour: past the time a run still joins its creating trace (TRACE_JOIN_MS).
    await admin.query(`UPDATE mcp_tasks.tasks SET created_at = created_at - interval '1 hour' WHERE id = $1`, [taskId]);
    b = await spawnDemoNode('trace-b', env('node-b'));
    await eventually(async () => (await metric(b.base, 'mcp_tasks_claims_total')) >= 1, 20_000, 'B claims the queued task');
    const updated = await rpc(b.url, 'tasks/update', { taskId, inputResponses: { unasked: { action: 'accept', content: {} } } });
    assert.equal(updated.error, undefined, JSON.stringify(updated.body));
    const unknown = await rpc(b.url, 'tasks/get', { taskId: 'no-such-task' });
    assert.ok(unknown.error, JSON.stringify(unknown.body));
    await rpc(a.url, 'tasks/cancel', { taskId });
    await rpc(a.url, 'tasks/cancel', { taskId: blocker.result!['taskId'] });

    const ofTask = (name: string, id = taskId) => spans.filter((span) => span.name === name && attribute(span, 'mcp.task.id') === id);
    await eventually(async () => ofTask('execute_tool slow_compute').length === 1 && ofTask('tasks/update').length === 1 && ofTask('tasks/get', 'no-such-task').length === 1, 20_000, 'the spans are exported');
    const [call] = ofTask('tools/call slow_compute');
    assert.ok(call, 'the creating tools/call span');
    const [run] = ofTask('execute_tool slow_compute');
    assert.equal(run!.service, 'node-b', 'the run was claimed on B');
    assert.notEqual(run!.traceId, call.traceId, 'in a trace of its own');
    assert.ok(!run!.parentSpanId, `a root span: ${run!.parentSpanId}`);
    const link = run!.links?.find((l) => l.traceId === call.traceId && l.spanId === call.spanId);
    assert.ok(link, `linked to the creating span: ${JSON.stringify(run!.links)}`);
    assert.equal(link.attributes?.find((a) => a.key === 'mcp_tasks.link')?.value['stringValue'], 'task.created_by');
    assert.equal(attribute(run!, 'mcp_tasks.task.trace_id'), call.traceId);
    assert.equal(attribute(run!, 'gen_ai.tool.name'), 'slow_compute');

    const [update] = ofTask('tasks/update');
    assert.equal(attribute(update!, 'mcp.method.name'), 'tasks/update');
    assert.ok(update!.links?.some((l) => l.traceId === call.traceId && l.spanId === call.spanId), `tasks/update links to the creating span: ${JSON.stringify(update!.links)}`);
    assert.equal(attribute(update!, 'error.type'), undefined);
    const [failed] = ofTask('tasks/get', 'no-such-task');
    assert.equal(attribute(failed!, 'error.type'), String(unknown.error!.code), 'an error answer names its JSON-RPC code');
  });
});
