// A real Prometheus (Debian's 2.42) scrapes real node processes on one PostgreSQL: every
// expression of the Grafana dashboard returns a series, every metric an alert names exists, and
// the alerts fire for real faults and resolve after them: a tool that fails every call, a cut
// listener, a node SIGKILLed with a task running (the task reaped), a node stalled past its
// lease, a node whose admission is full. The rules are deploy/prometheus/alerts.yml with short
// `for:` and windows, so the file runs in a few minutes.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { parse, stringify } from 'yaml';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, ROOT, spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { renderDashboard } from '../support/dashboard-png.js';
import { testPool } from '../support/pg-clients.js';

const PROMETHEUS = process.env['PROMETHEUS_BIN'] || 'prometheus';
const available = spawnSync(PROMETHEUS, ['--version'], { stdio: 'ignore' }).status === 0;
const skip = available ? false : `no ${PROMETHEUS} binary (apt-get install prometheus; .ci/run installs it)`;
if (skip) console.log(`# skipped: ${skip}`);

/** Every limit a node counts refusals of, exported at 0 from its start (LimitRefusalCounter). */
const KNOWN_LIMITS = [
  'rateLimit',
  'inFlight.maxPerOwner',
  'toolRuns.createsPerSecond',
  'toolRuns.maxPerOwner',
  'toolRuns.maxPerNode',
  'listenStreams.maxPerOwner',
  'listenStreams.maxPerNode',
  'resultStreams.maxPerOwner',
  'resultStreams.maxPerNode',
  'admission.maxQueue',
  'admission.maxWaitMs',
];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
}

/** The shipped rules with every `for:` at 2 s and every 5- or 10-minute window at 20 s. */
function testRules(): string {
  const rules = parse(readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] };
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      if (rule.for !== undefined) rule.for = '2s';
      rule.expr = rule.expr.replace(/\[(5|10)m\]/g, '[20s]');
      // Each tool's expected time: export's 10 minutes at 1 s, the default hour at 4 s.
      rule.expr = rule.expr.replace('vector(600)', 'vector(1)').replace('+ 3600', '+ 4');
    }
  }
  return stringify(rules);
}

function alertMetricNames(): string[] {
  const rules = parse(readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] };
  const names = new Set<string>();
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    // Label names are in selectors and `by (…)` clauses: what is left are metric names.
    const metricsOnly = rule.expr.replace(/\{[^}]*\}/g, '').replace(/\b(by|on|ignoring|without)\s*\([^)]*\)/g, '');
    for (const name of metricsOnly.match(/\b(mcp_tasks_[a-z_]+|up)\b/g) ?? []) names.add(name);
  }
  return [...names];
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/mcp-tasks.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a real Prometheus over real nodes', { skip, timeout: 420_000 }, () => {
  let database: TestDatabase;
  let dir: string;
  let prometheus: ChildProcess | undefined;
  let prometheusExited: Promise<unknown> = Promise.resolve();
  let prometheusLog = '';
  let api: string;
  /** Targets Prometheus picks up while it runs (file_sd): the saturated node of its own test. */
  let targetsFile: string;
  const ports: number[] = [];
  const nodes: DemoProcess[] = [];
  let admin: pg.Pool;
  const startedAt = Date.now() / 1000;

  const nodeEnv = (port: number) => ({
    DATABASE_URL: database.url,
    PORT: String(port),
    MCP_TASKS_LEASE_MS: '3000',
    MCP_TASKS_CLUSTER_STATS_MS: '500',
    MCP_TASKS_POLL_INTERVAL_MS: '200',
    MCP_TASKS_LOG_LEVEL: 'warn',
  });

  async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data!.result;
  }

  async function firing(alertname: string, labels: Record<string, string> = {}): Promise<boolean> {
    const body = (await (await fetch(`${api}/api/v1/alerts`)).json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } };
    return body.data.alerts.some((alert) => alert.state === 'firing' && alert.labels['alertname'] === alertname && Object.entries(labels).every(([k, v]) => alert.labels[k] === v));
  }

  before(async () => {
    database = await createTestDatabase();
    admin = testPool({ connectionString: database.url, max: 2 });
    admin.on('error', () => undefined);
    dir = mkdtempSync(path.join(tmpdir(), 'prometheus-alerts-'));
    ports.push(await freePort(), await freePort());
    nodes.push(await spawnDemoNode('prom-a', nodeEnv(ports[0]!)));
    nodes.push(await spawnDemoNode('prom-b', nodeEnv(ports[1]!)));
    writeFileSync(path.join(dir, 'alerts.yml'), testRules());
    targetsFile = path.join(dir, 'targets.json');
    writeFileSync(targetsFile, '[]');
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '900ms' },
        rule_files: ['alerts.yml'],
        scrape_configs: [
          {
            job_name: 'mcp-tasks',
            static_configs: [{ targets: ports.map((port) => `127.0.0.1:${port}`) }],
            file_sd_configs: [{ files: [targetsFile], refresh_interval: '1s' }],
          },
        ],
      }),
    );
    const webPort = await freePort();
    api = `http://127.0.0.1:${webPort}`;
    prometheus = spawn(PROMETHEUS, [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${webPort}`, '--log.level=warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    prometheus.stdout!.setEncoding('utf8').on('data', (chunk: string) => (prometheusLog += chunk));
    prometheus.stderr!.setEncoding('utf8').on('data', (chunk: string) => (prometheusLog += chunk));
    prometheusExited = new Promise((resolve) => prometheus!.on('exit', resolve));
    await eventually(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.ok === true, 30_000, `Prometheus is ready: ${prometheusLog}`);
  });

  after(async () => {
    prometheus?.kill('SIGTERM');
    await within(prometheusExited, 15_000, 'Prometheus to exit').catch(() => prometheus?.kill('SIGKILL'));
    for (const node of nodes) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    await admin?.end();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes both nodes, and every dashboard expression and alert metric has a series once tasks ran', async () => {
    await eventually(async () => (await query('up{job="mcp-tasks"} == 1')).length === 2, 30_000, 'both nodes are up');
    // Before any request: the admission queue and every limit's refusals, at 0 on each node.
    for (const port of ports) {
      const instance = `127.0.0.1:${port}`;
      await eventually(async () => (await query(`mcp_tasks_admission_queue_depth{instance="${instance}"} == 0`)).length === 1, 10_000, `${instance} exports its admission queue from its start`);
      const refusals = await query(`mcp_tasks_limit_refusals_total{instance="${instance}"} == 0`);
      assert.deepEqual(new Set(refusals.map((series) => series.metric['mcp_tasks_limit'])), new Set(KNOWN_LIMITS), `${instance}'s refusal counters at 0`);
      for (const series of refusals) {
        const limit = series.metric['mcp_tasks_limit']!;
        assert.equal(series.metric['mcp_tasks_refusal_reason'], limit.startsWith('admission.') || limit.endsWith('.maxPerNode') ? 'node_saturation' : 'owner_limit', limit);
      }
    }
    const [a] = nodes as [DemoProcess, DemoProcess];
    // A run that completes (run latency).
    const quick = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    await waitFor(a.url, quick.result!['taskId'], (task) => task['status'] === 'completed');
    // A series appears with its first event, which no rate then sees: each kind of event twice,
    // the second once the first is scraped, so the dashboard's picture shows them.
    const twice = async (event: () => Promise<void>, series: string) => {
      await event();
      await eventually(async () => (await query(series)).length > 0, 30_000, `${series} is scraped`);
      await event();
    };
    // A run cancelled through the other node while it runs: its node measures how long the news took.
    await twice(async () => {
      const slow = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } });
      await rpc(nodes[1]!.url, 'tasks/cancel', { taskId: slow.result!['taskId'] });
    }, 'mcp_tasks_cancel_delivery_seconds_count');
    // A task that waits for its client's input, answered (input waits).
    await twice(async () => {
      const asking = await rpc(a.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'report.txt' } });
      const taskId = asking.result!['taskId'] as string;
      await waitFor(a.url, taskId, (task) => task['status'] === 'input_required');
      await rpc(a.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
      await waitFor(a.url, taskId, (task) => task['status'] === 'completed');
    }, 'mcp_tasks_input_waits_total{gen_ai_tool_name="confirm_delete"}');
    const missing = async (exprs: string[]) => {
      const empty: string[] = [];
      for (const expr of exprs) if ((await query(expr)).length === 0) empty.push(expr);
      return empty;
    };
    const expressions = dashboardExpressions().map((expr) => expr.replaceAll('$__rate_interval', '1m'));
    let empty: string[] = [];
    await eventually(async () => (empty = await missing(expressions)).length === 0, 30_000, 'every dashboard expression has a series').catch(() => {
      assert.deepEqual(empty, [], 'dashboard expressions without a series');
    });
    const names = alertMetricNames();
    assert.ok(names.includes('mcp_tasks_admission_wait_seconds_bucket') && names.includes('mcp_tasks_limit_refusals_total'), names.join(' '));
    assert.ok(names.length >= 10, names.join(' '));
    assert.deepEqual(await missing(names.map((name) => `{__name__="${name}"}`)), [], 'metrics an alert names that no node exports');
  });

  it('a tool that fails every call fires McpTasksToolFailing, which resolves once it stops', async () => {
    const [a] = nodes as [DemoProcess, DemoProcess];
    const labels = { gen_ai_tool_name: 'protocol_error_job' };
    const calling = (async () => {
      const until = Date.now() + 60_000;
      while (Date.now() < until && !(await firing('McpTasksToolFailing', labels))) {
        const reply = await rpc(a.url, 'tools/call', { name: 'protocol_error_job', arguments: {} });
        assert.ok(reply.result?.['taskId'], JSON.stringify(reply.body));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    await calling;
    assert.ok(await firing('McpTasksToolFailing', labels), 'fired');
    assert.equal(await firing('McpTasksToolFailing', { gen_ai_tool_name: 'slow_compute' }), false, 'only the failing tool');
    await eventually(async () => !(await firing('McpTasksToolFailing', labels)), 60_000, 'resolved once the failures stopped');
  });

  it("a task live past its tool's expected time fires McpTasksToolTaskTooOld for that tool, which resolves once it ends", async () => {
    const [a] = nodes as [DemoProcess, DemoProcess];
    const labels = { gen_ai_tool_name: 'slow_compute' };
    await eventually(async () => (await query('mcp_tasks_oldest_live_task_age_seconds{gen_ai_tool_name="export"}')).length === 2, 30_000, 'both nodes export every tool at 0 from their start');
    const long = await rpc(a.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 120 } });
    const taskId = long.result!['taskId'] as string;
    try {
      await eventually(async () => firing('McpTasksToolTaskTooOld', labels), 60_000, 'McpTasksToolTaskTooOld fires for slow_compute');
      assert.equal(await firing('McpTasksToolTaskTooOld', { gen_ai_tool_name: 'export' }), false, 'not for a tool with no live task');
    } finally {
      await rpc(a.url, 'tasks/cancel', { taskId });
    }
    await eventually(async () => !(await firing('McpTasksToolTaskTooOld', labels)), 60_000, 'resolved once the task ended');
  });

  it('a listener cut off from LISTEN fires McpTasksListenerPollingOnly, which resolves once it listens again', async () => {
    // Every listener connection of this database is terminated as soon as it appears.
    let cutting = true;
    const cut = (async () => {
      while (cutting) {
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'mcp-tasks:listener%'").catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      await eventually(async () => firing('McpTasksListenerPollingOnly'), 60_000, 'McpTasksListenerPollingOnly fires');
    } finally {
      cutting = false;
      await cut;
    }
    await eventually(async () => !(await firing('McpTasksListenerPollingOnly')), 60_000, 'resolved once the listeners reconnected');
    assert.equal((await query('min(mcp_tasks_listener_listening)'))[0]?.value[1], '1');
  });

  it('a node SIGKILLed with a task running fires McpTasksNodeDown and McpTasksTasksReaped, which resolve once it is back', async () => {
    const b = nodes[1]!;
    const running = await rpc(b.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 120 } });
    const taskId = running.result!['taskId'] as string;
    b.child.kill('SIGKILL');
    await b.exited;
    const instance = `127.0.0.1:${ports[1]}`;
    await eventually(async () => firing('McpTasksNodeDown', { instance }), 60_000, 'McpTasksNodeDown fires for the killed node');
    await eventually(async () => firing('McpTasksTasksReaped'), 60_000, 'McpTasksTasksReaped fires once its lease ran out');
    const failed = await waitFor(nodes[0]!.url, taskId, (task) => task['status'] === 'failed');
    assert.equal(failed['status'], 'failed');
    nodes[1] = await spawnDemoNode('prom-b', nodeEnv(ports[1]!));
    await eventually(async () => !(await firing('McpTasksNodeDown')), 60_000, 'McpTasksNodeDown resolves once the node is back');
    await eventually(async () => !(await firing('McpTasksTasksReaped')), 60_000, 'McpTasksTasksReaped resolves once nothing more is reaped');
  });

  it('a node stalled longer than its lease fires McpTasksLeaseLost when it wakes, which resolves after', async () => {
    const b = nodes[1]!;
    await eventually(async () => (await query('mcp_tasks_lease_losses_total')).length === 2, 30_000, 'both nodes export their lease losses');
    // A stall (a GC pause, a frozen VM): the process stops for twice its lease, then goes on.
    b.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    b.child.kill('SIGCONT');
    await eventually(async () => firing('McpTasksLeaseLost', { instance: `127.0.0.1:${ports[1]}` }), 60_000, 'McpTasksLeaseLost fires for the stalled node');
    assert.equal(await firing('McpTasksLeaseLost', { instance: `127.0.0.1:${ports[0]}` }), false, 'not for the node that kept its lease');
    await eventually(async () => !(await firing('McpTasksLeaseLost')), 60_000, 'McpTasksLeaseLost resolves once the node holds its new lease');
  });

  it('a node whose admission is full fires McpTasksNodeSaturated and McpTasksAdmissionQueue for it alone, which resolve once the flood stops', async () => {
    // A third node serving one request at once, two waiting, for at most 300 ms: a flood of
    // concurrent polls makes requests wait for admission and has the rest refused with 503.
    const port = await freePort();
    const instance = `127.0.0.1:${port}`;
    const small = await spawnDemoNode('prom-c', { ...nodeEnv(port), MCP_TASKS_ADMISSION: '1,2,300' }, { startTimeoutMs: 90_000 });
    nodes.push(small);
    try {
      writeFileSync(targetsFile, JSON.stringify([{ targets: [instance] }]));
      await eventually(async () => (await query(`up{instance="${instance}"} == 1`)).length === 1, 30_000, 'Prometheus scrapes the third node');
      const created = await rpc(small.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
      const taskId = created.result!['taskId'] as string;
      const answers = new Map<number, number>();
      let flooding = true;
      const flood = Promise.all(
        Array.from({ length: 12 }, async () => {
          while (flooding) {
            const reply = await rpc(small.url, 'tasks/get', { taskId });
            answers.set(reply.status, (answers.get(reply.status) ?? 0) + 1);
          }
        }),
      );
      try {
        await eventually(
          async () => (await firing('McpTasksNodeSaturated', { instance, mcp_tasks_limit: 'admission.maxQueue' })) && (await firing('McpTasksAdmissionQueue', { instance })),
          60_000,
          'McpTasksNodeSaturated and McpTasksAdmissionQueue fire for the flooded node',
        );
      } finally {
        flooding = false;
        await within(flood, 20_000, 'the flood to stop');
      }
      assert.ok((answers.get(503) ?? 0) > 0 && (answers.get(200) ?? 0) > 0, JSON.stringify([...answers]));
      for (const other of ports.map((p) => `127.0.0.1:${p}`)) {
        assert.equal(await firing('McpTasksNodeSaturated', { instance: other }), false, `not for ${other}`);
        assert.equal(await firing('McpTasksAdmissionQueue', { instance: other }), false, `not for ${other}`);
      }
      assert.equal(await firing('McpTasksLimitRefusals'), false, "a node's saturation is not an owner's limit");
      await eventually(async () => !(await firing('McpTasksNodeSaturated')) && !(await firing('McpTasksAdmissionQueue')), 60_000, 'both resolve once the flood stopped');
    } finally {
      // Out of Prometheus's targets before it stops, so that it is not a node down.
      writeFileSync(targetsFile, '[]');
      await eventually(async () => (await query(`up{instance="${instance}"}`)).length === 0, 30_000, 'the third node is no longer scraped').catch(() => undefined);
      small.child.kill('SIGTERM');
      await within(small.exited, 20_000, 'the third node to stop').catch(() => small.child.kill('SIGKILL'));
    }
  });

  // MCP_TASKS_DASHBOARD_PNG=docs/operations/dashboard.png: the dashboard's panels over this run, for the docs.
  it('draws the dashboard from what Prometheus scraped', { skip: process.env['MCP_TASKS_DASHBOARD_PNG'] ? false : 'set MCP_TASKS_DASHBOARD_PNG to a .png path' }, async () => {
    const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/mcp-tasks.json'), 'utf8'));
    const file = path.resolve(ROOT, process.env['MCP_TASKS_DASHBOARD_PNG']!);
    await within(renderDashboard(api, dashboard, Math.floor(startedAt), Math.ceil(Date.now() / 1000), file, process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'), 120_000, 'the dashboard is drawn');
    assert.ok(readFileSync(file).length > 10_000);
  });
});
