// `mcp-tasks call` against a server that sends what a terminal would obey (escape sequences in a
// result, an error, a status, a question, a non-JSON body, a 401's description) and streams that
// never frame an event: nothing of it reaches the terminal raw (--json keeps it, escaped), and
// the SSE reader is linear and bounded.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sseMessages } from '../src/call/mcp-http-client.js';
import { mcpTasks } from './support/run-mcp-tasks.js';

const ESC = '\u001b';
const HOSTILE = `${ESC}]0;owned${ESC}\\${ESC}[2J\u009b31m`;
const TASKS = 'io.modelcontextprotocol/tasks';

type Reply = (res: ServerResponse, id: unknown) => void;

function json(res: ServerResponse, id: unknown, body: Record<string, unknown>, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
}

describe('mcp-tasks call against a hostile server', { timeout: 120_000 }, () => {
  let server: Server;
  let url: string;
  // What tools/call answers, per tool name.
  const calls: Record<string, Reply> = {
    result: (res, id) => json(res, id, { result: { content: [{ type: 'text', text: `before${HOSTILE}after` }] } }),
    rpcError: (res, id) => json(res, id, { error: { code: -32000, message: `bad${HOSTILE}` } }),
    notJson: (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`oops${HOSTILE}`),
    unauthorized: (res) => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token', error_description: `expired${HOSTILE}` })),
    failedTask: (res, id) => json(res, id, { result: { resultType: 'task', taskId: `t${HOSTILE}`, status: 'failed', statusMessage: `s${HOSTILE}`, error: { code: `-1${HOSTILE}`, message: `m${HOSTILE}` } } }),
    unframed: (res) => {
      // 20 MB of one event's data without the blank line that would end it, then the end.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ');
      const piece = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 320; i += 1) res.write(piece);
      res.end();
    },
    oversized: (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = `data: ${'y'.repeat(1024 * 1024)}\n`;
      const write = (left: number): void => {
        if (left === 0 || res.destroyed) return void res.end();
        if (res.write(piece)) write(left - 1);
        else res.once('drain', () => write(left - 1));
      };
      write(40);
    },
  };

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        let message: { id?: unknown; method?: string; params?: { name?: string } };
        try {
          message = JSON.parse(body);
        } catch {
          return void res.writeHead(400).end();
        }
        const { id, method, params } = message;
        if (method === 'server/discover') return json(res, id, { result: { capabilities: { extensions: { [TASKS]: {} } } } });
        if (method === 'tools/list') return json(res, id, { result: { tools: Object.keys(calls).map((name) => ({ name, description: `d${HOSTILE}`, inputSchema: { type: 'object' } })) } });
        if (method === 'tools/call') return calls[params?.name ?? '']!(res, id);
        json(res, id, { error: { code: -32601, message: 'no' } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const tool of ['result', 'rpcError', 'notJson', 'unauthorized', 'failedTask']) {
    it(`shows ${tool} without a control character`, async () => {
      const run = await mcpTasks(['call', url, tool]);
      const shown = run.stdout + run.stderr;
      assert.match(shown, /before|bad|oops|expired|failed/, shown);
      assert.doesNotMatch(shown, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, JSON.stringify(shown));
    });
  }

  it('mcp-tasks tools shows the tools\' descriptions without a control character', async () => {
    const run = await mcpTasks(['tools', url]);
    assert.equal(run.code, 0, run.stderr);
    // The server speaks only 2026-07-28, whose listing leaves task support to each call.
    assert.match(run.stdout, /^result {2}\(task support not listed: the server decides per call\)\n {2}d/m);
    assert.doesNotMatch(run.stdout + run.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('--json keeps the server\'s characters, escaped', async () => {
    const run = await mcpTasks(['call', url, 'result', '--json']);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    assert.equal(JSON.parse(run.stdout).content[0].text, `before${HOSTILE}after`);
  });

  it('reads 20 MB of an unframed stream and says the stream had no answer', async () => {
    const run = await mcpTasks(['call', url, 'unframed'], {}, { timeoutMs: 30_000 });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /the stream ended without an answer/);
  });

  it('scans an unframed stream once: 20 MB in 64 KiB chunks in linear time', async () => {
    const piece = new TextEncoder().encode('x'.repeat(64 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: '));
        for (let i = 0; i < 320; i += 1) controller.enqueue(piece);
        controller.close();
      },
    });
    const started = performance.now();
    const messages = [];
    for await (const message of sseMessages(new Response(body, { headers: { 'content-type': 'text/event-stream' } }))) messages.push(message);
    const ms = performance.now() - started;
    assert.deepEqual(messages, []);
    // The reader that re-scanned its whole buffer per chunk took 3.6 s here on an idle machine
    // (24 s with the load of a shared CI box); one scan takes a fraction of a second.
    assert.ok(ms < 2_500, `took ${Math.round(ms)} ms`);
  });

  it('drops a stream whose one event outgrows the bound, with a clear error', async () => {
    const run = await mcpTasks(['call', url, 'oversized'], {}, { timeoutMs: 30_000 });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /an event longer than 33554432 characters; the stream was dropped/);
  });
});
