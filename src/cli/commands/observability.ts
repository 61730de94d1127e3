/**
 * Metrics endpoint and web console beside a broker (`tsmq start`, `tsmq broker`).
 *
 * `tsmq start` turns both on by default (metricsExporterType=PROM on 127.0.0.1:5557,
 * consolePort=8080 on 127.0.0.1); `tsmq broker` only when configured, as Apache. When a port was
 * left at its default and is taken (another tsmq on this host), that part is skipped with a
 * warning and the broker keeps running; an explicitly configured port that is taken fails the
 * start (EADDRINUSE), like every other listener.
 *
 * Order: startConsole() before BrokerController.create (the console shows "recovering" and the
 * recovery progress while the store opens), prepareMetrics() before broker.start() (rpc latency
 * is wired at start), then startObservability() once the broker listens.
 */
import type { BrokerController } from '../../broker/broker-controller.js';
import { createLogger, type Logger } from '../../common/logging/logger.js';
import { resolveAuthConfig } from '../../auth/auth-config.js';
import { BrokerMetrics } from '../../metrics/broker-metrics.js';
import { resolveMetricsConfig } from '../../metrics/metrics-config.js';
import { MetricsServer } from '../../metrics/metrics-server.js';
import { ConsoleServer } from '../../console/console-server.js';
import { resolveConsoleConfig } from '../../console/console-config.js';

export interface Observability {
  metrics: MetricsServer | null;
  console: ConsoleServer | null;
  /** Banner parts, e.g. `metrics http://127.0.0.1:5557/metrics`. */
  describe(): string[];
  shutdown(): Promise<void>;
}

function isAddrInUse(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
}

/**
 * Starts the console before the broker exists (it answers "recovering" until setBroker()); null
 * when consolePort=-1 or a default port is taken. `cfg`: effective keys (command defaults
 * included); `userCfg`: what the user set. @throws ConsoleRefusedError, listen errors of a configured port.
 */
export async function startConsole(cfg: Record<string, string>, userCfg: Record<string, string>, logger: Logger): Promise<ConsoleServer | null> {
  const cc = resolveConsoleConfig(cfg);
  if (cc.port < 0) return null;
  try {
    return await ConsoleServer.start({ config: cc, logger, auth: { config: resolveAuthConfig(cfg), metadata: null } });
  } catch (e) {
    if (!isAddrInUse(e) || userCfg.consolePort !== undefined) throw e;
    logger.warn(`console not started: ${cc.host}:${cc.port} is in use (set consolePort, -1 = off)`);
    return null;
  }
}

/** The metrics collector attached to `broker`, or null when metricsExporterType is not PROM or metricsPromExporterPort=-1. */
export function prepareMetrics(broker: BrokerController, cfg: Record<string, string>): BrokerMetrics | null {
  if (!resolveMetricsConfig(cfg).enabled) return null;
  const metrics = new BrokerMetrics();
  metrics.attach(broker);
  return metrics;
}

/** Starts the metrics endpoint and hands the started broker to the console. @throws listen errors of a configured port. */
export async function startObservability(
  broker: BrokerController,
  metrics: BrokerMetrics | null,
  consoleServer: ConsoleServer | null,
  cfg: Record<string, string>,
  userCfg: Record<string, string>,
): Promise<Observability> {
  let metricsServer: MetricsServer | null = null;
  if (metrics) {
    const mc = resolveMetricsConfig(cfg);
    const logger = createLogger('metrics');
    try {
      metricsServer = await MetricsServer.start(metrics, { host: mc.host, port: mc.port, logger });
    } catch (e) {
      if (!isAddrInUse(e) || userCfg.metricsPromExporterPort !== undefined) throw e;
      logger.warn(`metrics endpoint not started: ${mc.host}:${mc.port} is in use (set metricsPromExporterPort, -1 = off)`);
      metrics.detach();
    }
  }
  consoleServer?.setBroker(broker);
  return {
    metrics: metricsServer,
    console: consoleServer,
    describe: () => [
      ...(metricsServer ? [`metrics http://${metricsServer.host}:${metricsServer.port}/metrics`] : []),
      ...(consoleServer ? [`console ${consoleServer.url}`] : []),
    ],
    async shutdown() {
      await consoleServer?.close();
      await metricsServer?.close();
      metrics?.detach();
    },
  };
}
