/** `tsmq namesrv`: runs a nameserver alone (RocketMQ's mqnamesrv). */
import type { Command } from 'commander';
import { NamesrvController } from '../../namesrv/namesrv-controller.js';
import { resolveRegistrationLimits } from '../../namesrv/route/registration-limits.js';
import { resolveRemotingServerLimits } from '../../remoting/transport/remoting-server-config.js';
import { resolveTlsServerSettings } from '../../common/tls/tls-server-config.js';
import { createLogger, printAfterLogs } from '../../common/logging/logger.js';
import { parsePortValue } from '../../common/config/config-spec.js';
import { collectOption, mergeConfig } from '../config-sources.js';
import { shutdownOnSignals } from '../signals.js';
import { namesrvConfigKeys, warnUnknownConfigKeys } from '../config-keys.js';
import { exitOnPortInUse } from '../port-holder.js';

export function registerNamesrvCommand(program: Command): void {
  program
    .command('namesrv')
    .description('run a nameserver (default 127.0.0.1:9876)')
    .option('-c, --config <file>', 'namesrv.conf with RocketMQ key=value lines (listenPort)')
    .option('-p, --listen-port <port>', 'listen port (default 9876)')
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('-o, --option <key=value>', 'any config key, repeatable', collectOption)
    .action(async (opts: { config?: string; listenPort?: string; host?: string; option?: string[] }) => {
      const cfg = mergeConfig({ listenPort: '9876', host: '127.0.0.1' }, opts.config, {
        listenPort: opts.listenPort,
        host: opts.host,
      }, opts.option);
      const logger = createLogger('namesrv');
      warnUnknownConfigKeys(cfg, namesrvConfigKeys(), createLogger('config'));
      const namesrv = new NamesrvController({ listenPort: parsePortValue('listenPort', cfg.listenPort!), host: cfg.host!, logger, limits: resolveRemotingServerLimits(cfg), registrationLimits: resolveRegistrationLimits(cfg), tls: resolveTlsServerSettings(cfg) });
      await namesrv.start().catch((e: unknown) => exitOnPortInUse(e, 'tsmq namesrv', [{ port: Number(cfg.listenPort), what: 'nameserver', setting: '-p <port> or listenPort=<port>' }]));
      printAfterLogs(`tsmq nameserver listening on ${cfg.host}:${namesrv.port}`);
      shutdownOnSignals(() => namesrv.shutdown(), (m) => console.log(m));
    });
}
