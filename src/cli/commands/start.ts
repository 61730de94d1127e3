/**
 * `tsmq start`: nameserver + broker in one process with embedded defaults
 * (nameserver 127.0.0.1:9876, broker 10911, store ~/tsmq/store).
 */
import type { Command } from 'commander';
import { BrokerController } from '../../broker/broker-controller.js';
import { NamesrvController } from '../../namesrv/namesrv-controller.js';
import { createLogger, printAfterLogs } from '../../common/logging/logger.js';
import { parsePortValue } from '../../common/config/config-spec.js';
import { collectOption, mergeConfig } from '../config-sources.js';
import { shutdownOnSignals } from '../signals.js';
import { brokerConfigKeys, warnUnknownConfigKeys } from '../config-keys.js';
import { brokerBanner, defaultStoreRoot, describeBroker, startGrpcFront } from './common.js';
import { prepareMetrics, startConsole, startObservability } from './observability.js';

/** `tsmq start` serves the web console here unless consolePort says otherwise. */
const DEFAULT_START_CONSOLE_PORT = '8080';

export interface StartOptions {
  config?: string;
  namesrvPort?: string;
  listenPort?: string;
  store?: string;
  option?: string[];
}

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run nameserver + broker in one process (embedded defaults)')
    .option('-c, --config <file>', 'broker.conf with RocketMQ key=value lines')
    .option('-n, --namesrv-port <port>', 'nameserver port (default 9876)')
    .option('-p, --listen-port <port>', 'broker remoting port (default 10911)')
    .option('--store <dir>', 'storePathRootDir (default ~/tsmq/store)')
    .option('-o, --option <key=value>', 'any broker/store config key, repeatable', collectOption)
    .action(async (opts: StartOptions) => {
      await runStart(opts);
    });
}

export async function runStart(opts: StartOptions): Promise<void> {
  const namesrvPort = parsePortValue('namesrvPort (-n)', opts.namesrvPort ?? '9876');
  const namesrv = new NamesrvController({ listenPort: namesrvPort, host: '127.0.0.1', logger: createLogger('namesrv') });
  await namesrv.start();
  const cfg = mergeConfig(
    // Safe default: only this host can connect until told otherwise (docs/security.md).
    { listenPort: '10911', storePathRootDir: defaultStoreRoot(), bindAddress: '127.0.0.1', grpcListenHost: '127.0.0.1', metricsExporterType: 'PROM' },
    opts.config,
    { listenPort: opts.listenPort, storePathRootDir: opts.store },
    opts.option,
  );
  warnUnknownConfigKeys(cfg, brokerConfigKeys(), createLogger('config'));
  cfg.namesrvAddr = `127.0.0.1:${namesrv.port}`;
  // The console is on by default here (8080; `consolePort` wins, -1 turns it off) and starts
  // first, so that it shows the recovery progress while the store opens.
  const consoleLogger = createLogger('console');
  const consoleServer = await startConsole({ consolePort: DEFAULT_START_CONSOLE_PORT, ...cfg }, cfg, consoleLogger);
  let broker: BrokerController;
  try {
    broker = await BrokerController.create({ brokerConfig: cfg, logger: createLogger('broker'), onRecoveryProgress: (p) => consoleServer?.setRecoveryProgress(p) });
  } catch (e) {
    await consoleServer?.close();
    throw e;
  }
  const metrics = prepareMetrics(broker, cfg);
  await broker.start();
  const grpc = await startGrpcFront(broker, cfg);
  const observability = await startObservability(broker, metrics, consoleServer, cfg, cfg, consoleLogger);
  // Every listener is bound by now (nameserver, broker remoting, HA, gRPC: each start() resolves
  // once its socket listens); printed through the log stream so that it also comes out after
  // their "listening" log lines. Scripts wait for /tsmq started/.
  const loopbackOnly = cfg.bindAddress === '127.0.0.1' && (!grpc || cfg.grpcListenHost === '127.0.0.1');
  const openHint = loopbackOnly ? ['only this host can connect (to open: -o bindAddress=0.0.0.0 -o grpcListenHost=0.0.0.0, with authenticationEnabled=true; docs/security.md)'] : [];
  printAfterLogs(`tsmq started: nameserver 127.0.0.1:${namesrv.port}, ${describeBroker(brokerBanner(broker, cfg, grpc), [...observability.describe(), ...openHint])}`);
  shutdownOnSignals(
    async () => {
      await observability.shutdown();
      await grpc?.shutdown();
      await broker.shutdown();
      await namesrv.shutdown();
    },
    (m) => console.log(m),
  );
}
