// The demo's telemetry: /metrics in Prometheus text through the OpenTelemetry exporter (in
// process), and the demo process started with OTEL_TRACES_EXPORTER=console printing the
// tools/call span and its execute_tool child.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startDemoServer, type DemoServer } from '@mcp-tasks/demo';
import { rpc, waitFor } from '../support/server-raw-client.js';

/** The value of a metric summed over its series (exact name, any labels). */
function metric(text: string, name: string): number | undefined {
  let found = false;
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    found = true;
    sum += Number(match[3]);
  }
  return found ? sum : undefined;
}

describe('/metrics of an in-process demo node', () => {
  let demo: DemoServer;
  let base: string;
  before(async () => {
    demo = await startDemoServer({ port: 0, host: '127.0.0.1', databaseUrl: undefined, nodeId: 'metrics-node', pollIntervalMs: 50, ttlMs: undefined, maxPerPrincipal: undefined });
    base = demo.url.replace(/\/mcp$/, '');
  });
  after(() => demo.close(1_000));

  const scrape = async () => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    return res.text();
  };

  it('shows mcp_tasks_running and mcp_tasks_created_total at zero before any task', async () => {
    const text = await scrape();
    assert.match(text, /# TYPE mcp_tasks_created_total counter/);
    assert.match(text, /# TYPE mcp_tasks_running gauge/);
    assert.equal(metric(text, 'mcp_tasks_created_total'), 0);
    assert.equal(metric(text, 'mcp_tasks_running'), 0);
  });

  it('they move when a task is created, and running drops when it finishes', async () => {
    const created = await rpc(demo.url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 50, delayMs: 20 } });
    const taskId = created.result?.['taskId'] as string;
    assert.ok(taskId, JSON.stringify(created));
    const during = await scrape();
    assert.equal(metric(during, 'mcp_tasks_created_total'), 1);
    assert.equal(metric(during, 'mcp_tasks_running'), 1);
    await rpc(demo.url, 'tasks/cancel', { taskId });
    await waitFor(demo.url, taskId, (task) => task['status'] === 'cancelled');
    let after = '';
    for (let i = 0; i < 100; i += 1) {
      after = await scrape();
      if (metric(after, 'mcp_tasks_running') === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(metric(after, 'mcp_tasks_running'), 0);
    assert.equal(metric(after, 'mcp_tasks_created_total'), 1);
    assert.match(after, /mcp_tasks_finished_total\{[^}]*mcp_task_status="cancelled"[^}]*\} 1/);
  });

  it('names follow Prometheus conventions: durations in seconds end _seconds, counters end _total', async () => {
    const text = await scrape();
    assert.equal(metric(text, 'mcp_tasks_run_duration_seconds_count'), 1, 'the cancelled run of the test before');
    assert.ok((metric(text, 'mcp_tasks_cancel_delivery_seconds_count') ?? 0) >= 1, 'its cancel delivery');
    const types = [...text.matchAll(/^# TYPE (mcp_tasks_\w+) (\w+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
    assert.ok(types.length >= 5, JSON.stringify(types));
    for (const { name, type } of types) {
      if (type === 'histogram') assert.match(name, /_seconds$/, `${name} is a duration histogram`);
      if (type === 'counter') assert.match(name, /_total$/, `${name} is a counter`);
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Spans as the SDK's ConsoleSpanExporter prints them (util.inspect), reduced to what we check. */
function consoleSpans(stdout: string): Array<{ name: string; id: string; traceId: string; parentId: string | undefined }> {
  const spans = [];
  for (const block of stdout.split(/\n(?=\{\n)/)) {
    const name = /\n {2}name: '([^']+)'/.exec(block)?.[1];
    const id = /\n {2}id: '([0-9a-f]{16})'/.exec(block)?.[1];
    const traceId = /\n {2}traceId: '([0-9a-f]{32})'/.exec(block)?.[1];
    if (!name || !id || !traceId) continue;
    const parentId = /parentSpanContext: \{[^}]*spanId: '([0-9a-f]{16})'/.exec(block)?.[1];
    spans.push({ name, id, traceId, parentId });
  }
  return spans;
}

describe('the demo process with OTEL_TRACES_EXPORTER=console', () => {
  it('prints the tools/call span and its execute_tool child', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', OTEL_TRACES_EXPORTER: 'console', NODE_ID: 'console-node' };
    for (const name of ['DATABASE_URL', 'MCP_TASKS_TOKENS', 'OTEL_SDK_DISABLED', 'OTEL_EXPORTER_OTLP_ENDPOINT']) delete env[name];
    const child = spawn(process.execPath, ['--conditions=@mcp-tasks/source', '--import', 'tsx', 'packages/demo/src/node/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const until = async (done: () => boolean, what: string) => {
        for (let i = 0; i < 600 && !done(); i += 1) {
          if (child.exitCode !== null) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.ok(done(), `${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
      };
      await until(() => stdout.includes('listening on'), 'the demo did not start');
      const url = `http://127.0.0.1:${port}/mcp`;
      const created = await rpc(url, 'tools/call', { name: 'export', arguments: { project: 'p', files: 2, delayMs: 10 } });
      const taskId = created.result?.['taskId'] as string;
      assert.ok(taskId, JSON.stringify(created));
      await waitFor(url, taskId, (task) => task['status'] === 'completed');
      await until(() => consoleSpans(stdout).some((span) => span.name === 'execute_tool export'), 'no execute_tool span printed');
      const spans = consoleSpans(stdout);
      const call = spans.find((span) => span.name === 'tools/call export');
      const run = spans.find((span) => span.name === 'execute_tool export');
      assert.ok(call, `no tools/call span in:\n${stdout}`);
      assert.equal(run?.parentId, call.id);
      assert.equal(run?.traceId, call.traceId);
      assert.ok(stdout.includes(`'mcp.task.id': '${taskId}'`), 'the task id is on the spans');
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(metrics, /mcp_tasks_created_total\{/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
