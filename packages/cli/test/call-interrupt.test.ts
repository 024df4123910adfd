// Ctrl-C (SIGINT) of `mcp-tasks call` against a minimal server of the tasks extension whose
// tasks never stop: the wait for a cancel is bounded, a second Ctrl-C quits at once, and a
// Ctrl-C before any task exists just stops.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { within } from '../../../test/support/within.js';
import { bin } from './support/run-mcp-tasks.js';

// The status message carries an escape sequence (retitle the window) that must never reach the terminal as such.
const TASK = {
  taskId: 'stubborn-1',
  status: 'working',
  statusMessage: 'busy \u001b]0;pwned\u0007',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:00Z',
  ttlMs: null,
  pollIntervalMs: 50,
};

/**
 * tools/call of `stubborn` creates a task that stays `working` whatever happens; of `hang`
 * never answers; tasks/cancel answers ok, or never for a server made with `cancelHangs`.
 */
function stubbornServer(cancelHangs: boolean): Server & { hanging: number } {
  const server: Server & { hanging: number } = Object.assign(createServer(), { hanging: 0 });
  return server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body) as { id: number; method: string; params: Record<string, any> };
      const answer = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'tools/list') return answer({ tools: [{ name: 'stubborn', inputSchema: { type: 'object' } }, { name: 'hang', inputSchema: { type: 'object' } }] });
      if (message.method === 'tools/call' && message.params['name'] === 'hang') {
        server.hanging += 1;
        return;
      }
      if (message.method === 'tools/call') return answer({ resultType: 'task', ...TASK });
      if (message.method === 'tasks/get') return answer({ resultType: 'complete', ...TASK });
      if (message.method === 'tasks/cancel') return cancelHangs ? undefined : answer({ resultType: 'complete' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** `mcp-tasks call` as a child process (not on a terminal), with its stderr as it comes. */
function startCall(t: { after(fn: () => void): void }, args: readonly string[]) {
  const child = spawn(process.execPath, [bin, 'call', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp) => {
    const start = Date.now();
    while (!pattern.test(stderr)) {
      if (Date.now() - start > 10_000) throw new Error(`stderr did not show ${pattern}:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, exited, waitFor, stderr: () => stderr };
}

describe('Ctrl-C of mcp-tasks call', { timeout: 60_000 }, () => {
  const servers: (Server & { hanging: number })[] = [];
  let answersCancel: string;
  let hangsOnCancel: string;
  before(async () => {
    servers.push(stubbornServer(false), stubbornServer(true));
    answersCancel = await listen(servers[0]!);
    hangsOnCancel = await listen(servers[1]!);
  });
  after(() => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('waits for the task to read cancelled no longer than --cancel-wait, says so, and exits 130', async (t) => {
    const call = startCall(t, [answersCancel, 'stubborn', '--cancel-wait', '1']);
    await call.waitFor(/Task stubborn-1 created\./);
    const started = Date.now();
    call.child.kill('SIGINT');
    assert.equal(await within(call.exited, 10_000, 'exit after the bounded wait'), 130, call.stderr());
    assert.ok(Date.now() - started >= 900, 'it waited for the task first');
    assert.match(call.stderr(), /Cancelling task stubborn-1; waiting up to 1 s for it to stop \(Ctrl-C again to quit now\)/);
    assert.match(call.stderr(), /task stubborn-1 did not read cancelled within 1 s; it may still be running/);
    assert.match(call.stderr(), /working \(busy \ufffd\]0;pwned\ufffd\)/, 'the status message is shown with its control characters replaced');
    assert.doesNotMatch(call.stderr(), /[\u001b\u0007]/);
  });

  it('a second Ctrl-C quits at once, while the cancel is still unanswered', async (t) => {
    const call = startCall(t, [hangsOnCancel, 'stubborn', '--cancel-wait', '30']);
    await call.waitFor(/Task stubborn-1 created\./);
    call.child.kill('SIGINT');
    await call.waitFor(/Cancelling task stubborn-1/);
    call.child.kill('SIGINT');
    assert.equal(await within(call.exited, 3_000, 'exit at once after a second Ctrl-C'), 130, call.stderr());
    assert.match(call.stderr(), /quit without waiting; task stubborn-1 may still be running/);
  });

  it('a Ctrl-C before the server created a task stops the call, exit 130', async (t) => {
    const before = servers[0]!.hanging;
    const call = startCall(t, [answersCancel, 'hang']);
    const start = Date.now();
    while (servers[0]!.hanging === before) {
      if (Date.now() - start > 10_000) throw new Error('the tools/call never arrived');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    call.child.kill('SIGINT');
    assert.equal(await within(call.exited, 5_000, 'exit after Ctrl-C'), 130, call.stderr());
    assert.match(call.stderr(), /interrupted before the server created a task/);
  });
});
