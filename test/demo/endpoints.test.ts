// The node's open endpoints give nothing away: /metrics can be put behind a token and shows no
// process details, and a malformed Host header is a 400 on every path, never a 500 or an echo.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { spawnDemoNode, type DemoProcess } from '../support/demo-process.js';
import { within } from '../support/within.js';

const TOKEN = 'metrics-secret-token';

/** Sends one request with exactly this Host header (fetch would refuse to), returns the status code. */
function statusWithHost(port: number, path: string, host: string): Promise<number> {
  return within(
    new Promise<number>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
      let reply = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
      socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)));
      socket.on('error', reject);
    }),
    5_000,
    `GET ${path} with Host ${JSON.stringify(host)}`,
  );
}

describe('the open endpoints of a node', { timeout: 60_000 }, () => {
  let node: DemoProcess;
  before(async () => {
    node = await spawnDemoNode('endpoints', { DATABASE_URL: '', MCP_TASKS_METRICS_TOKEN: TOKEN });
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await within(node?.exited ?? Promise.resolve(null), 15_000, 'the node to exit');
  });

  it('/metrics needs the metrics token once one is set, and a wrong one is refused', async () => {
    assert.equal((await fetch(`${node.base}/metrics`)).status, 401);
    assert.equal((await fetch(`${node.base}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const res = await fetch(`${node.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /mcp_tasks_running/);
  });

  it('/metrics shows no host name, pid, executable, command line or process owner', async () => {
    const text = await (await fetch(`${node.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    for (const attribute of ['host_name', 'process_pid', 'process_executable_path', 'process_command_line', 'process_owner', 'process_command_args']) {
      assert.doesNotMatch(text, new RegExp(`\\b${attribute}=`), attribute);
    }
  });

  it('a malformed Host header is a 400 on every path, health checks included', async () => {
    const port = Number(new URL(node.base).port);
    for (const path of ['/healthz', '/readyz', '/metrics', '/mcp']) {
      for (const host of ['[', 'a b', 'example.com/evil', 'x'.repeat(300)]) {
        assert.equal(await statusWithHost(port, path, host), 400, `${path} with Host ${host.slice(0, 20)}`);
      }
    }
    assert.equal(await statusWithHost(port, '/healthz', `127.0.0.1:${port}`), 200);
    // Well-formed but not a name a loopback node serves (DNS rebinding): 403, not 400.
    assert.equal(await statusWithHost(port, '/healthz', 'mcp.example.com'), 403);
    assert.equal(await statusWithHost(port, '/healthz', '[::1]:3000'), 200);
  });

  it('a body over the 4 MiB limit gets 413 and the connection closes, unread', async () => {
    const port = Number(new URL(node.base).port);
    const size = 5 * 1024 * 1024;
    const reply = await within(
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
          // The whole body, in chunks: the node answers once it has seen more than its limit.
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          let sent = 0;
          const more = () => {
            while (sent < size && !socket.destroyed) {
              sent += chunk.length;
              if (!socket.write(chunk)) return void socket.once('drain', more);
            }
          };
          more();
        });
        let text = '';
        socket.setEncoding('utf8').on('data', (data: string) => (text += data));
        socket.on('close', () => resolve(text));
        socket.on('error', () => resolve(text));
        setTimeout(() => reject(new Error('the connection stayed open')), 8_000).unref();
      }),
      10_000,
      'the 413 and the close',
    );
    assert.match(reply, /^HTTP\/1\.1 413 /);
    assert.match(reply, /connection: close/i);
    assert.match(reply, /larger than 4194304 bytes/);
  });
});
