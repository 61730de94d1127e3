/**
 * A real broker (sockets, real store in a temp dir, no nameserver) with its Prometheus endpoint
 * on a free loopback port and a remoting client, for tests that send over the wire and assert on
 * the scraped metrics. `stop()` closes everything and removes the directory.
 */
import { BrokerController } from '../../src/broker/broker-controller.js';
import { BrokerMetrics } from '../../src/metrics/broker-metrics.js';
import { MetricsServer } from '../../src/metrics/metrics-server.js';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { removeDir, tempDir } from './store-fixtures.js';

export interface MetricsBroker {
  broker: BrokerController;
  client: RemotingClient;
  /** `127.0.0.1:<broker port>`. */
  addr: string;
  /** The metrics endpoint's text; throws unless it answers 200. */
  scrape(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts it; `brokerConfig` adds to (or overrides) a 1 MiB-CommitLog broker without a nameserver. */
export async function startMetricsBroker(dirPrefix: string, brokerConfig: Record<string, string>): Promise<MetricsBroker> {
  const dir = tempDir(dirPrefix);
  const client = new RemotingClient({ logger: silentLogger });
  const broker = await BrokerController.create({
    brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(1024 * 1024), ...brokerConfig },
    logger: silentLogger,
  });
  const metrics = new BrokerMetrics();
  metrics.attach(broker);
  await broker.start();
  const server = await MetricsServer.start(metrics, { host: '127.0.0.1', port: 0, logger: silentLogger });
  return {
    broker,
    client,
    addr: `127.0.0.1:${broker.port}`,
    async scrape() {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      if (res.status !== 200) throw new Error(`metrics endpoint answered ${res.status}`);
      return res.text();
    },
    async stop() {
      await server.close();
      metrics.detach();
      await broker.shutdown();
      await client.close();
      removeDir(dir);
    },
  };
}
