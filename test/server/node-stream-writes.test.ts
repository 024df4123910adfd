// handler.node (the library's node:http listener, which the demo edge serves MCP with) writes an
// event stream's frames that are ready at once (a listen's acknowledgement and its close, for a
// listen that follows nothing) together with the headers in one socket write.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { nodeListener } from '../../packages/server/src/node/node-listener.js';
import { within } from '../support/within.js';

const FRAMES = ['event: message\ndata: {"ack":true}\n\n', 'event: message\ndata: {"close":true}\n\n'];

/** Answers every request with an event stream whose frames are all enqueued before it is returned. */
const listener = nodeListener({
  maxBodyBytes: 1024,
  onerror: () => {},
  refuse: () => undefined,
  async serve(): Promise<Response> {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const frame of FRAMES) controller.enqueue(encoder.encode(frame));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  },
});

let server: http.Server;
let url: string;
let writes = 0;

before(async () => {
  server = http.createServer(listener);
  server.on('connection', (socket: Socket) => {
    // Every write of a net.Socket, single or vectored, goes through _writeGeneric.
    const generic = (socket as unknown as { _writeGeneric: (...args: unknown[]) => unknown })._writeGeneric;
    (socket as unknown as { _writeGeneric: (...args: unknown[]) => unknown })._writeGeneric = function (this: Socket, ...args: unknown[]) {
      writes += 1;
      return generic.apply(this, args);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('handler.node and event streams', { timeout: 30_000 }, () => {
  it('sends the frames a stream has ready at once with its headers in one socket write', async () => {
    writes = 0;
    const response = await within(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 10_000, 'the stream answered');
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(await within(response.text(), 10_000, 'the stream ended'), FRAMES.join(''));
    assert.equal(writes, 1);
  });
});
