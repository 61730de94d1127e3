/** `tsmq broker -c broker.conf`: runs one broker (RocketMQ's mqbroker), registering with namesrvAddr. */
import type { Command } from 'commander';
import { BrokerController } from '../../broker/broker-controller.js';
import { createLogger, printAfterLogs } from '../../common/logging/logger.js';
import { collectOption, mergeConfig, withBrokerConfigPath } from '../config-sources.js';
import { shutdownOnSignals } from '../signals.js';
import { brokerConfigKeys, warnUnknownConfigKeys } from '../config-keys.js';
import { brokerBanner, defaultStoreRoot, describeBroker, startGrpcFront } from './common.js';
import { brokerPortRoles, exitOnPortInUse } from '../port-holder.js';
import { prepareMetrics, startConsole, startObservability } from './observability.js';

export function registerBrokerCommand(program: Command): void {
  program
    .command('broker')
    .description('run a broker that registers with the nameservers in namesrvAddr')
    .option('-c, --config <file>', 'broker.conf with RocketMQ key=value lines')
    .option('-n, --namesrv-addr <addr>', "nameserver address list host:port;host:port to register with, as mqbroker -n (default 127.0.0.1:9876)")
    .option('-p, --listen-port <port>', 'remoting port (default 10911)')
    .option('--store <dir>', 'storePathRootDir (default ~/tsmq/store)')
    .option('-o, --option <key=value>', 'any broker/store config key, repeatable (grpcListenPort=8081 starts the gRPC front)', collectOption)
    .action(async (opts: { config?: string; namesrvAddr?: string; listenPort?: string; store?: string; option?: string[] }) => {
      const cfg = withBrokerConfigPath(mergeConfig(
        { namesrvAddr: '127.0.0.1:9876', listenPort: '10911', storePathRootDir: defaultStoreRoot() },
        opts.config,
        { namesrvAddr: opts.namesrvAddr, listenPort: opts.listenPort, storePathRootDir: opts.store },
        opts.option,
      ), opts.config);
      warnUnknownConfigKeys(cfg, brokerConfigKeys(), createLogger('config'));
      const consoleLogger = createLogger('console');
      const roles = brokerPortRoles(cfg, { listenFlag: '-p', grpc: cfg.grpcListenPort !== undefined });
      const consoleServer = await startConsole(cfg, cfg, consoleLogger) // consolePort set: up during recovery
        .catch((e: unknown) => exitOnPortInUse(e, 'tsmq broker', roles, cfg.storePathRootDir));
      let broker: BrokerController;
      try {
        broker = await BrokerController.create({ brokerConfig: cfg, logger: createLogger('broker'), onRecoveryProgress: (p) => consoleServer?.setRecoveryProgress(p) });
      } catch (e) {
        await consoleServer?.close();
        throw e;
      }
      const metrics = prepareMetrics(broker, cfg);
      await broker.start().catch((e: unknown) => exitOnPortInUse(e, 'tsmq broker', roles, cfg.storePathRootDir));
      const observability = await startObservability(broker, metrics, consoleServer, cfg, cfg)
        .catch((e: unknown) => exitOnPortInUse(e, 'tsmq broker', roles, cfg.storePathRootDir));
      // Several brokers may share a host (master + slave): the gRPC front only on request.
      const grpc = cfg.grpcListenPort !== undefined ? await startGrpcFront(broker, cfg).catch((e: unknown) => exitOnPortInUse(e, 'tsmq broker', roles, cfg.storePathRootDir)) : null;
      printAfterLogs(`tsmq broker started: ${describeBroker(brokerBanner(broker, cfg, grpc), [`nameserver ${cfg.namesrvAddr || '(none: not registering)'}`, ...observability.describe()])}`);
      shutdownOnSignals(
        async () => {
          await observability.shutdown();
          await grpc?.shutdown();
          await broker.shutdown();
        },
        (m) => console.log(m),
      );
    });
}
