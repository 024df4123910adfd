// Hostile subscriptions/listen traffic: loops that open task listens naming ids nobody owns, hold
// each stream a moment after its ack, drop it and open the next one.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { META } from './mcp-client.js';

/** How the listens of a flood ended. */
export interface FloodCounts {
  /** Streams that opened and sent their ack. */
  acked: number;
  /** Listens refused with an HTTP error or a JSON-RPC error (a cap, a rate limit). */
  refused: number;
  /** Sockets that failed or listens that sent nothing within the bound. */
  errors: number;
}

const LISTEN_BOUND_MS = 10_000;

// A listen's stream is dropped, never reused: no keep-alive.
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** A task id no task has: the length and alphabet of real ones. */
export function unknownTaskId(): string {
  return randomBytes(18).toString('base64url');
}

/** One listen on `url` as `token` naming `taskIds`: resolves once it was acked and held for `holdMs`, refused, or failed. */
export function listenOnce(url: string, token: string, taskIds: readonly string[], holdMs: number, counts: FloodCounts): Promise<void> {
  const target = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: { taskIds }, _meta: META } });
  return new Promise((resolve) => {
    let settled = false;
    let acked = false;
    const finish = (outcome: keyof FloodCounts) => {
      if (settled) return;
      settled = true;
      counts[outcome] += 1;
      clearTimeout(bound);
      request.destroy();
      resolve();
    };
    const bound = setTimeout(() => finish('errors'), LISTEN_BOUND_MS);
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'subscriptions/listen',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (response) => {
        if (response.statusCode !== 200 || !String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
          response.resume();
          finish('refused');
          return;
        }
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          const line = text.split('\n').find((l) => l.startsWith('data: '));
          if (line === undefined) return;
          acked = !('error' in JSON.parse(line.slice(6)));
          if (acked) setTimeout(() => finish('acked'), holdMs);
          else finish('refused');
          text = '';
          response.removeAllListeners('data');
          response.resume();
        });
        response.on('error', () => finish('errors'));
        response.on('end', () => finish(acked ? 'acked' : 'errors'));
      },
    );
    request.on('error', () => finish('errors'));
    request.end(body);
  });
}
