// A stdio upstream as one gateway node drives it (in process, memory store): the node initializes
// it as a client that declares sampling, elicitation and roots; the upstream's sampling and roots
// requests become the task's input_required, answered by tasks/update; a tool list change is read,
// said and served; a process that exits is started again; the drain stops it for good.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LogFields, Logger } from '@mcp-tasks/core';
import { configFromEnv, startGatewayNode, type GatewayNode } from '@mcp-tasks/gateway';
import { eventually, ROOT } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-stdio-'));
const fixtureLog = path.join(directory, 'stdio.log');
const warnings: Array<{ readonly fields: LogFields; readonly message: string }> = [];
const infos: Array<{ readonly fields: LogFields; readonly message: string }> = [];
const logger: Logger = {
  error: () => undefined,
  warn: (fields, message) => void warnings.push({ fields, message }),
  info: (fields, message) => void infos.push({ fields, message }),
  debug: () => undefined,
};
/** What this test's client declares: every kind of input a stdio server may ask for. */
const CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };
let node: GatewayNode | undefined;
let closed = false;

function events(): Array<Record<string, unknown>> {
  if (!existsSync(fixtureLog)) return [];
  return readFileSync(fixtureLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

const started = () => events().filter((event) => event['event'] === 'started');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

before(async () => {
  node = await within(
    startGatewayNode(configFromEnv({ PORT: '0', HOST: '127.0.0.1', MCP_TASKS_POLL_INTERVAL_MS: '50' }), {
      name: 'gateway-stdio-test',
      upstreams: [
        {
          name: 'local',
          command: process.execPath,
          args: ['--import', 'tsx', path.join(ROOT, 'test/fixtures/stdio-plain-upstream.fixture.ts')],
          cwd: ROOT,
          env: { STDIO_FIXTURE_LOG: fixtureLog, STDIO_FIXTURE_EXTRA_TOOL: 'later' },
        },
      ],
      logger,
    }),
    45_000,
    'the gateway node starts',
  );
});

after(async () => {
  const pids = started().map((event) => event['pid'] as number);
  if (node && !closed) await node.close(500).catch(() => undefined);
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

async function asTask(tool: string, args: Record<string, unknown>): Promise<string> {
  const created = await within(rpc(node!.url, 'tools/call', { name: tool, arguments: args }, { capabilities: CAPABILITIES }), 20_000, `tools/call ${tool}`);
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return created.result!['taskId'] as string;
}

describe('a stdio upstream of one gateway node', { timeout: 120_000 }, () => {
  it('is initialized by a client that declares sampling, elicitation and roots', async () => {
    const reply = await within(rpc(node!.url, 'tools/call', { name: 'local_capabilities', arguments: {} }, { tasks: false, capabilities: CAPABILITIES }), 20_000, 'capabilities');
    const declared = JSON.parse((reply.result?.['content'] as Array<{ text: string }>)[0]!.text) as Record<string, unknown>;
    for (const capability of ['sampling', 'elicitation', 'roots']) assert.ok(capability in declared, `${capability} is declared: ${JSON.stringify(declared)}`);
  });

  it('an upstream sampling request becomes the task input_required (sample-1); the answer from tasks/update goes back upstream', async () => {
    const taskId = await asTask('local_sample', { prompt: 'Say hi to Ada' });
    const asking = await waitFor(node!.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.deepEqual(Object.keys(asking['inputRequests'] ?? {}), ['sample-1'], JSON.stringify(asking));
    assert.match(JSON.stringify(asking['inputRequests']['sample-1']), /Say hi to Ada/);
    const answer = { role: 'assistant', content: { type: 'text', text: 'Hi, Ada' }, model: 'test-model' };
    const updated = await rpc(node!.url, 'tasks/update', { taskId, inputResponses: { 'sample-1': answer } });
    assert.equal(updated.error, undefined, JSON.stringify(updated.body));
    const done = await waitFor(node!.url, taskId, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /sampled: Hi, Ada/);
  });

  it('an upstream roots/list becomes the task input_required (roots-1); the answer from tasks/update goes back upstream', async () => {
    const taskId = await asTask('local_roots', {});
    const asking = await waitFor(node!.url, taskId, (task) => task['status'] === 'input_required', 20_000);
    assert.deepEqual(Object.keys(asking['inputRequests'] ?? {}), ['roots-1'], JSON.stringify(asking));
    const updated = await rpc(node!.url, 'tasks/update', { taskId, inputResponses: { 'roots-1': { roots: [{ uri: 'file:///srv/data', name: 'data' }] } } });
    assert.equal(updated.error, undefined, JSON.stringify(updated.body));
    const done = await waitFor(node!.url, taskId, (task) => task['status'] === 'completed', 20_000);
    assert.match(JSON.stringify(done), /roots: file:\/\/\/srv\/data/);
  });

  it('notifications/tools/list_changed is read: the node lists the tools again, serves the new list and says what changed', async () => {
    await eventually(async () => infos.some((info) => /changed its tool list/.test(info.message)), 15_000, 'the change is said');
    const info = infos.find((entry) => /changed its tool list/.test(entry.message))!;
    assert.deepEqual(info.fields['added'], ['local_later']);
    assert.deepEqual(info.fields['removed'], []);
    assert.equal(info.fields['upstream'], 'local');
    const listed = await within(rpc(node!.url, 'tools/list', {}), 20_000, 'tools/list');
    assert.ok((listed.result?.['tools'] as Array<{ name: string }>).some((tool) => tool.name === 'local_later'), JSON.stringify(listed.body));
    const reply = await within(rpc(node!.url, 'tools/call', { name: 'local_later', arguments: {} }, { tasks: false, capabilities: CAPABILITIES }), 20_000, 'tools/call local_later');
    assert.match(JSON.stringify(reply.result), /the later tool/);
  });

  it('a stdio server that exits is started again, and the next call is served', async () => {
    const before = started().length;
    assert.ok(before >= 1);
    const ended = await within(rpc(node!.url, 'tools/call', { name: 'local_exit', arguments: {} }, { tasks: false, capabilities: CAPABILITIES }), 20_000, 'the call whose process exits');
    assert.ok(ended.error !== undefined || ended.result?.['isError'] === true, `the call in flight fails: ${JSON.stringify(ended.body)}`);
    await eventually(async () => started().length > before, 20_000, 'the process is started again');
    assert.ok(warnings.some((warning) => /exited; restarting/.test(warning.message) && typeof warning.fields['restartInMs'] === 'number'), 'the restart and its backoff are said');
    await eventually(async () => {
      const echoed = await rpc(node!.url, 'tools/call', { name: 'local_echo', arguments: { text: 'again' } }, { tasks: false, capabilities: CAPABILITIES });
      return JSON.stringify(echoed.result?.['content']) === JSON.stringify([{ type: 'text', text: 'again' }]);
    }, 20_000, 'the new process serves');
  });

  it('the drain stops the stdio server, which is not started again', async () => {
    const pids = started().map((event) => event['pid'] as number);
    await within(node!.close(1_000), 20_000, 'the drain');
    closed = true;
    await eventually(async () => pids.every((pid) => !alive(pid)), 10_000, 'every stdio process ended');
    const count = started().length;
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(started().length, count, 'no process started after the drain');
  });
});
