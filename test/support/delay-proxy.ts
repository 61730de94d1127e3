/**
 * A TCP proxy on 127.0.0.1 that holds every chunk going to the target for `delayMs` (changeable
 * while running; Infinity = hold until lowered), to make a nameserver or broker slow or
 * unresponsive for a test without touching it. Chunks keep their order.
 */
import net from 'node:net';

export class DelayProxy {
  delayMs = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<DelayProxy> {
    let proxy!: DelayProxy;
    const server = net.createServer((client) => {
      const upstream = net.connect(targetPort, '127.0.0.1');
      proxy.sockets.add(client).add(upstream);
      let chain = Promise.resolve();
      client.on('data', (chunk) => {
        const due = Date.now() + proxy.delayMs;
        chain = chain.then(async () => {
          for (;;) {
            const left = Math.min(due, Date.now() + proxy.delayMs) - Date.now();
            if (left <= 0 || client.destroyed) break;
            await new Promise((r) => setTimeout(r, Math.min(left, 50)));
          }
          if (!upstream.destroyed) upstream.write(chunk);
        });
      });
      upstream.on('data', (chunk) => client.write(chunk));
      const close = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new DelayProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
