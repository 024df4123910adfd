import net from 'node:net';

/** A TCP proxy in front of a real server, to take it away from a client and give it back. */
export interface TcpProxy {
  readonly port: number;
  /** Drops every connection; new ones are accepted but nothing is forwarded (a frozen server). */
  freeze(): void;
  /** Drops the frozen connections and forwards new ones again. */
  thaw(): void;
  /** Keeps connections open but holds back what the server sends (a server slow to answer), until {@link release}. */
  hold(): void;
  /** Sends what was held back and forwards again. */
  release(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let frozen = false;
  let held = false;
  const heldBack: { to: net.Socket; chunk: Buffer }[] = [];
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (frozen) return;
    const upstream = net.connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (held) heldBack.push({ to: client, chunk });
      else client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze() {
      frozen = true;
      dropAll();
    },
    thaw() {
      frozen = false;
      dropAll();
    },
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const { to, chunk } of heldBack.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
