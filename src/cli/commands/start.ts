/**
 * `tsmq start`: nameserver + broker in one process with embedded defaults
 * (nameserver 127.0.0.1:9876, broker 10911, store ~/tsmq/store).
 */
import type { Command } from 'commander';
import { BrokerController } from '../../broker/broker-controller.js';
import { NamesrvController } from '../../namesrv/namesrv-controller.js';
import { createLogger, printAfterLogs } from '../../common/logging/logger.js';
import { ConfigError, parsePortValue } from '../../common/config/config-spec.js';
import { join } from 'node:path';
import { collectOption, mergeConfig } from '../config-sources.js';
import { shutdownOnSignals } from '../signals.js';
import { brokerConfigKeys, warnUnknownConfigKeys } from '../config-keys.js';
import { brokerBanner, defaultStoreRoot, describeBroker, startGrpcFront } from './common.js';
import { resolveTlsServerSettings, TLS_SERVER_CONFIG_KEYS } from '../../common/tls/tls-server-config.js';
import { ensureSelfSignedCertificate } from '../../common/tls/self-signed-certificate.js';
import { resolveAuthConfig } from '../../auth/auth-config.js';
import { NamesrvAuthGate } from '../../broker/auth/namesrv-auth-gate.js';
import { RateLimitedLog } from '../../common/logging/rate-limited-log.js';

export interface StartOptions {
  config?: string;
  namesrvPort?: string;
  listenPort?: string;
  store?: string;
  option?: string[];
  /** `--tls [mode]`: TLS with a self-signed certificate made under <store>/tls (true = permissive). */
  tls?: string | boolean;
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
    .option('--tls [mode]', 'TLS on nameserver, broker, HA and gRPC ports with a self-signed certificate made under <store>/tls (mode: permissive (default) or enforcing); tls.server.* keys override')
    .action(async (opts: StartOptions) => {
      await runStart(opts);
    });
}

export async function runStart(opts: StartOptions): Promise<void> {
  const namesrvPort = parsePortValue('namesrvPort (-n)', opts.namesrvPort ?? '9876');
  const cfg = mergeConfig(
    // Safe default: only this host can connect until told otherwise (docs/security.md).
    { listenPort: '10911', storePathRootDir: defaultStoreRoot(), bindAddress: '127.0.0.1', grpcListenHost: '127.0.0.1' },
    opts.config,
    { listenPort: opts.listenPort, storePathRootDir: opts.store },
    opts.option,
  );
  warnUnknownConfigKeys(cfg, brokerConfigKeys(), createLogger('config'));
  const tlsNote = opts.tls ? await useSelfSignedCertificate(cfg, opts.tls) : '';
  // the nameserver obeys the same tls.server.* and authenticationEnabled switches as the broker
  const namesrvLogger = createLogger('namesrv');
  const namesrvGate = resolveAuthConfig(cfg).authenticationEnabled ? new NamesrvAuthGate(new RateLimitedLog(namesrvLogger)) : null;
  const namesrv = new NamesrvController({ listenPort: namesrvPort, host: '127.0.0.1', logger: namesrvLogger, tls: resolveTlsServerSettings(cfg), ...(namesrvGate ? { requestGate: namesrvGate } : {}) });
  await namesrv.start();
  cfg.namesrvAddr = `127.0.0.1:${namesrv.port}`;
  const broker = await BrokerController.create({ brokerConfig: cfg, logger: createLogger('broker') });
  namesrvGate?.arm(broker.authConfig, broker.authMetadata);
  await broker.start();
  const grpc = await startGrpcFront(broker, cfg);
  // Every listener is bound by now (nameserver, broker remoting, HA, gRPC: each start() resolves
  // once its socket listens); printed through the log stream so that it also comes out after
  // their "listening" log lines. Scripts wait for /tsmq started/.
  const loopbackOnly = cfg.bindAddress === '127.0.0.1' && (!grpc || cfg.grpcListenHost === '127.0.0.1');
  const openHint = loopbackOnly ? ['only this host can connect (to open: -o bindAddress=0.0.0.0 -o grpcListenHost=0.0.0.0, with authenticationEnabled=true; docs/security.md)'] : [];
  printAfterLogs(`tsmq started: nameserver 127.0.0.1:${namesrv.port}, ${describeBroker(brokerBanner(broker, cfg, grpc), openHint)}${tlsNote}`);
  shutdownOnSignals(
    async () => {
      await grpc?.shutdown();
      await broker.shutdown();
      await namesrv.shutdown();
    },
    (m) => console.log(m),
  );
}

/**
 * `--tls [mode]`: makes (or reuses) a self-signed pair under <storePathRootDir>/tls and sets the
 * `tls.server.*` keys the config does not already give. Returns the banner note.
 * @throws ConfigError for a mode other than permissive/enforcing.
 */
async function useSelfSignedCertificate(cfg: Record<string, string>, tls: string | boolean): Promise<string> {
  const K = TLS_SERVER_CONFIG_KEYS;
  const mode = tls === true ? 'permissive' : String(tls);
  if (mode !== 'permissive' && mode !== 'enforcing') throw new ConfigError('--tls', mode, 'the mode is permissive or enforcing');
  cfg[K.mode] ??= mode;
  // the broker's own connections (nameserver, slave → master) then use TLS too
  cfg['tls.enable'] ??= 'true';
  if (!cfg[K.certPath] && !cfg[K.keyPath]) {
    const files = await ensureSelfSignedCertificate(join(cfg.storePathRootDir!, 'tls'));
    cfg[K.certPath] = files.certPath;
    cfg[K.keyPath] = files.keyPath;
  }
  return `; TLS ${cfg[K.mode]} (certificate ${cfg[K.certPath]}; self-signed: clients must trust it, Java: -Dtls.enable=true)`;
}
