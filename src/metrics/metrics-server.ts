/**
 * The Prometheus endpoint (Apache: metricsExporterType=PROM, PrometheusHttpServer):
 * `GET /metrics` answers the text exposition format (prom-client's content type); any other path
 * 404, any other method 405. A failed collection answers 500 with the error text and the server
 * keeps serving.
 *
 *   const server = await MetricsServer.start(metrics, { host: '127.0.0.1', port: 5557 });
 *   server.port;            // bound port (port 0 = a free one)
 *   await server.close();
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../common/logging/logger.js';
import type { BrokerMetrics } from './broker-metrics.js';

export class MetricsServer {
  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Binds host:port. @throws the listen error (EADDRINUSE...). */
  static async start(metrics: BrokerMetrics, opts: { host: string; port: number; logger?: Logger }): Promise<MetricsServer> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      metrics.text().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        (e: Error) => {
          opts.logger?.error(`metrics collection failed: ${e.message}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${e.message}\n`);
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    opts.logger?.info(`metrics (Prometheus) listening on http://${addr.address}:${addr.port}/metrics`);
    return new MetricsServer(server, addr.address, addr.port);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
