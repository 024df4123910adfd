// The plain tools of a 2025-11-25 HTTP upstream (the 1.x SDK over Streamable HTTP, no task support
// of their own) run as tasks of the gateway, as a stdio upstream's do: progress becomes the
// task's statusMessage, an elicitation or a sampling its input_required answered by tasks/update,
// and tasks/cancel sends notifications/cancelled upstream.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Logger } from '@mcp-tasks/core';
import { configFromEnv, startGatewayNode, type GatewayNode } from '@mcp-tasks/gateway';
import { eventually, ROOT, waitForOutput } from '../support/demo-process.js';
import { within } from '../support/within.js';
import { rpc, waitFor } from '../support/server-raw-client.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'gateway-http-plain-'));
const fixtureLog = path.join(directory, 'http.log');
const quiet: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
const CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };
let upstream: ChildProcess | undefined;
let node: GatewayNode | undefined;

function events(): Array<Record<string, unknown>> {
  if (!existsSync(fixtureLog)) return [];
  return readFileSync(fixtureLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

before(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/stdio-plain-upstream.fixture.ts', '--http'], { cwd: ROOT, env: { ...process.env, STDIO_FIXTURE_LOG: fixtureLog }, stdio: ['ignore', 'pipe', 'pipe'] });
  upstream = child;
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const url = await waitForOutput(() => output, /listening on (http:\/\/\S+)/, exited, 30_000);
  node = await within(
    startGatewayNode(configFromEnv({ PORT: '0', HOST: '127.0.0.1', MCP_TASKS_POLL_INTERVAL_MS: '50' }), {
      name: 'gateway-http-plain-test',
      upstreams: [{ name: 'plain', url, revision: '2025-11-25' }],
      logger: quiet,
    }),
    45_000,
    'the gateway node starts',
  );
});

after(async () => {
  await node?.close(500).catch(() => undefined);
  upstream?.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

async function asTask(tool: string, args: Record<string, unknown>): Promise<string> {
  const created = await within(rpc(node!.url, 'tools/call', { name: tool, arguments: args }, { capabilities: CAPABILITIES }), 20_000, `tools/call ${tool}`);
  assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created.body));
  return created.result!['taskId'] as string;
}

describe('the plain tools of a 2025-11-25 HTTP upstream', { timeout: 120_000 }, () => {
  it('are listed as optional task tools; a caller that asks for no task gets the answer inline', async () => {
    const listed = await within(rpc(node!.url, 'tools/list', {}), 20_000, 'tools/list');
    const echo = (listed.result?.['tools'] as Array<{ name: string; execution?: { taskSupport?: string } }>).find((tool) => tool.name === 'plain_echo');
    assert.ok(echo, JSON.stringify(listed.body));
    const inline = await within(rpc(node!.url, 'tools/call', { name: 'plain_echo', arguments: { text: 'hi' } }, { tasks: false }), 20_000, 'inline echo');
    assert.deepEqual(inline.result?.['content'], [{ type: 'text', text: 'hi' }]);
  });

  it('run as a task: progress becomes the statusMessage, an elicitation the input_required answered by tasks/update', async () => {
    const count = await asTask('plain_count', { steps: 6, delayMs: 200 });
    await waitFor(node!.url, count, (task) => /^step \d+ of 6$/.test(String(task['statusMessage'] ?? '')), 20_000);
    assert.match(JSON.stringify(await waitFor(node!.url, count, (task) => task['status'] === 'completed', 20_000)), /counted to 6/);

    const ask = await asTask('plain_ask', { question: 'Who?' });
    const asking = await waitFor(node!.url, ask, (task) => task['status'] === 'input_required', 20_000);
    assert.equal(asking['inputRequests']?.['elicit-1']?.['params']?.['message'], 'Who?', JSON.stringify(asking));
    const answered = await rpc(node!.url, 'tasks/update', { taskId: ask, inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'Ada' } } } });
    assert.equal(answered.error, undefined, JSON.stringify(answered.body));
    assert.match(JSON.stringify(await waitFor(node!.url, ask, (task) => task['status'] === 'completed', 20_000)), /Hello, Ada!/);

    const sample = await asTask('plain_sample', { prompt: 'Say hi' });
    await waitFor(node!.url, sample, (task) => task['status'] === 'input_required' && 'sample-1' in (task['inputRequests'] ?? {}), 20_000);
    await rpc(node!.url, 'tasks/update', { taskId: sample, inputResponses: { 'sample-1': { role: 'assistant', content: { type: 'text', text: 'Hi' }, model: 'm' } } });
    assert.match(JSON.stringify(await waitFor(node!.url, sample, (task) => task['status'] === 'completed', 20_000)), /sampled: Hi/);
  });

  it('tasks/cancel sends notifications/cancelled upstream', async () => {
    const count = await asTask('plain_count', { steps: 1000, delayMs: 100 });
    await waitFor(node!.url, count, (task) => String(task['statusMessage'] ?? '').startsWith('step'), 20_000);
    const cancelled = await rpc(node!.url, 'tasks/cancel', { taskId: count });
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled.body));
    await eventually(async () => events().some((event) => event['event'] === 'cancelled' && event['tool'] === 'count'), 15_000, 'the upstream saw the cancel');
    assert.equal((await rpc(node!.url, 'tasks/get', { taskId: count })).result?.['status'], 'cancelled');
  });
});
