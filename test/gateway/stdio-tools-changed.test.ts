// A stdio upstream that changes its tool list (notifications/tools/list_changed) is served its new
// list by a real gateway node process without a restart: a new tool is listed and runs as a task,
// a tool taken out is no longer listed and its call is refused as an unknown tool, and a new name
// that another upstream's tool is served under already is refused with an error naming both while
// the rest of the new list is served; a process started again is served what it lists then.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually, ROOT, waitForOutput } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';
import { connectLegacyClient } from '../support/legacy-client.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };
let directory: string;
let fixtureLog: string;
let database: TestDatabase;
let child: ChildProcess | undefined;
let exited: Promise<unknown> = Promise.resolve();
let output = '';
let url: string;

function fixturePids(): number[] {
  if (!existsSync(fixtureLog)) return [];
  return readFileSync(fixtureLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { event: string; pid: number }).filter((event) => event.event === 'started').map((event) => event.pid);
}

async function listed(): Promise<string[]> {
  const reply = await within(rpc(url, 'tools/list', {}), 20_000, 'tools/list');
  assert.equal(reply.error, undefined, JSON.stringify(reply.body));
  return (reply.result?.['tools'] as Array<{ name: string }>).map((tool) => tool.name);
}

async function inline(tool: string, args: Record<string, unknown>) {
  return within(rpc(url, 'tools/call', { name: tool, arguments: args }, { tasks: false, capabilities: CAPABILITIES }), 20_000, `tools/call ${tool}`);
}

const text = (reply: { result?: Record<string, unknown> }) => (reply.result?.['content'] as Array<{ text: string }> | undefined)?.[0]?.text;

before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-tools-changed-'));
  fixtureLog = path.join(directory, 'stdio.log');
  database = await createTestDatabase();
  const fixture = JSON.stringify(path.join(ROOT, 'test/fixtures/stdio-plain-upstream.fixture.ts'));
  const config = path.join(directory, 'gateway.yaml');
  const stdio = (name: string, prefix?: string) => [
    `  - name: ${name}`,
    ...(prefix ? [`    prefix: ${prefix}`] : []),
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ["--import", "tsx", ${fixture}]`,
    `    cwd: ${JSON.stringify(ROOT)}`,
    `    env: { STDIO_FIXTURE_LOG: ${JSON.stringify(fixtureLog)} }`,
  ];
  // `spare` serves its echo as local_spare_echo: the name `local` takes when it adds `spare_echo`.
  writeFileSync(config, ['upstreams:', ...stdio('local'), ...stdio('spare', 'local_spare_'), ''].join('\n'));
  child = spawn(process.execPath, ['packages/gateway/dist/bin/main.js', '--config', config], {
    cwd: ROOT,
    env: { ...process.env, NODE_ID: 'gateway-changed', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, MCP_TASKS_POLL_INTERVAL_MS: '100', MCP_TASKS_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  exited = new Promise((resolve) => child!.on('exit', resolve));
  url = await waitForOutput(() => output, /listening on (http:\/\/[^\s"]+)/, exited, 60_000);
});

after(async () => {
  const pids = fixturePids();
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child!.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already ended by the drain.
    }
  }
  await database?.drop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('a stdio upstream that changes its tool list, behind a gateway node process', { timeout: 180_000 }, () => {
  it('a new tool is listed and runs as a task; a colliding new name is refused naming both, the other served', async () => {
    const start = await listed();
    assert.ok(start.includes('local_toggle') && start.includes('local_spare_echo'), start.join(', '));
    assert.ok(!start.includes('local_fresh'), start.join(', '));

    assert.equal(text(await inline('local_toggle', { add: ['fresh', 'spare_echo'] })), 'toggled');
    await eventually(async () => (await listed()).includes('local_fresh'), 20_000, 'the new tool is listed');
    const now = await listed();
    assert.equal(now.filter((name) => name === 'local_spare_echo').length, 1, 'the colliding name is listed once');
    await eventually(async () => /Two tools would be served as local_spare_echo: from upstream spare \(echo\) and from upstream local \(spare_echo\)/.test(output), 10_000, 'the collision is logged naming both');
    assert.match(output, /"level":(50|"error")/, 'as an error');

    // The name stays the first one's: spare's echo answers.
    assert.equal(text(await inline('local_spare_echo', { text: 'from spare' })), 'from spare');
    const created = await within(rpc(url, 'tools/call', { name: 'local_fresh', arguments: {} }, { capabilities: CAPABILITIES }), 20_000, 'tools/call local_fresh');
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
    const done = await waitFor(url, created.result!['taskId'] as string, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /added tool fresh/);
  });

  it('the 1.x client (2025-11-25) lists the new tool as a task tool and runs it as a task', async () => {
    const client = await within(connectLegacyClient({ route: () => url, capabilities: CAPABILITIES }), 20_000, '1.x connect');
    try {
      const tools = (await within(client.listTools(), 20_000, '1.x tools/list')).tools;
      const fresh = tools.find((tool) => tool.name === 'local_fresh');
      assert.equal(fresh?.execution?.taskSupport, 'optional', JSON.stringify(fresh));
      const stream = client.experimental.tasks.callToolStream({ name: 'local_fresh', arguments: {} }, CallToolResultSchema, { task: {} });
      const first = await within(stream.next(), 20_000, '1.x tools/call local_fresh');
      assert.equal(first.value?.type, 'taskCreated', JSON.stringify(first.value));
      let result: string | undefined;
      await within(
        (async () => {
          for await (const message of stream) if (message.type === 'result') result = JSON.stringify(message.result);
        })(),
        20_000,
        'the task result',
      );
      assert.match(String(result), /added tool fresh/);
    } finally {
      await client.close();
    }
  });

  it('a tool taken out is no longer listed, and its call is refused as an unknown tool', async () => {
    assert.equal(text(await inline('local_toggle', { remove: ['fresh', 'echo'] })), 'toggled');
    await eventually(async () => !(await listed()).includes('local_fresh'), 20_000, 'the tool taken out is not listed');
    const now = await listed();
    assert.ok(!now.includes('local_echo') && now.includes('local_count') && now.includes('local_spare_echo'), now.join(', '));
    for (const options of [{}, { tasks: false }]) {
      const refused = await within(rpc(url, 'tools/call', { name: 'local_fresh', arguments: {} }, { ...options, capabilities: CAPABILITIES }), 20_000, 'tools/call local_fresh');
      const unknown = refused.error !== undefined ? refused.error.message : refused.result?.['isError'] === true ? text(refused) : undefined;
      assert.match(String(unknown), /local_fresh/i, JSON.stringify(refused.body));
      assert.match(String(unknown), /not found|unknown/i, JSON.stringify(refused.body));
    }
  });

  it('a process started again is served what it lists then (here: the tools of the start again)', async () => {
    assert.ok(!(await listed()).includes('local_echo'));
    const ended = await inline('local_exit', {});
    assert.ok(ended.error !== undefined || ended.result?.['isError'] === true, `the call in flight fails: ${JSON.stringify(ended.body)}`);
    await eventually(async () => (await listed()).includes('local_echo'), 30_000, 'the restarted process tools are served');
    assert.equal(text(await inline('local_echo', { text: 'back' })), 'back');
  });
});
