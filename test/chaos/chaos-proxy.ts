// A loopback TCP proxy between one node and PostgreSQL that the fault schedule degrades: every
// chunk delayed, everything held back for a while (a stall), or every connection dropped.
import net from 'node:net';

export interface ChaosProxy {
  readonly port: number;
  /** Delays every chunk, both ways, by `ms` (0: none). Order is kept. */
  delay(ms: number): void;
  /** Holds back every chunk, both ways, for `ms`, then sends them in order. */
  stall(ms: number): void;
  /** Destroys every open connection; new ones are accepted. */
  drop(): void;
  close(): Promise<void>;
}

export async function startChaosProxy(targetPort: number): Promise<ChaosProxy> {
  let delayMs = 0;
  let stalledUntil = 0;
  const open = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, work: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      work();
    }, ms);
    timers.add(timer);
  };
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  /** Forwards `from` to `to` in order, each chunk no earlier than its delay and the stall allow. */
  const forward = (from: net.Socket, to: net.Socket) => {
    let lastDue = 0;
    from.on('data', (chunk: Buffer) => {
      const now = Date.now();
      const due = Math.max(now + delayMs, stalledUntil, lastDue);
      lastDue = due;
      if (due <= now) {
        if (!to.destroyed) to.write(chunk);
      } else later(due - now, () => !to.destroyed && to.write(chunk));
    });
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(targetPort, '127.0.0.1');
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    delay(ms) {
      delayMs = ms;
    },
    stall(ms) {
      stalledUntil = Date.now() + ms;
    },
    drop() {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
