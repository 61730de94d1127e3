/**
 * `tsmq start`: nameserver + broker in one process with embedded defaults
 * (nameserver 127.0.0.1:9876, broker 10911, store ~/tsmq/store).
 */
import { Option, type Command } from 'commander';
import { BrokerController } from '../../broker/broker-controller.js';
import { NamesrvController } from '../../namesrv/namesrv-controller.js';
import { createLogger, printAfterLogs } from '../../common/logging/logger.js';
import { ConfigError, parsePortValue } from '../../common/config/config-spec.js';
import { join } from 'node:path';
import { collectOption, mergeConfig, withBrokerConfigPath } from '../config-sources.js';
import { shutdownOnSignals } from '../signals.js';
import { brokerConfigKeys, warnUnknownConfigKeys } from '../config-keys.js';
import { brokerBanner, defaultStoreRoot, describeBroker, startGrpcFront } from './common.js';
import { resolveTlsServerSettings, TLS_SERVER_CONFIG_KEYS } from '../../common/tls/tls-server-config.js';
import { ensureSelfSignedCertificate } from '../../common/tls/self-signed-certificate.js';
import { resolveAuthConfig } from '../../auth/auth-config.js';
import { NamesrvAuthGate } from '../../broker/auth/namesrv-auth-gate.js';
import { RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { brokerPortRoles, exitOnPortInUse, type PortRole } from '../port-holder.js';
import { prepareMetrics, startConsole, startObservability } from './observability.js';

/** `tsmq start` serves the web console here unless consolePort says otherwise. */
const DEFAULT_START_CONSOLE_PORT = '8080';

export interface StartOptions {
  config?: string;
  /** `-n`: the embedded nameserver's address, `host:port` or a bare port. */
  namesrvAddr?: string;
  /** `--namesrv-port` (hidden, older spelling of `-n <port>`). */
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
    .option('-n, --namesrv-addr <host:port>', "the embedded nameserver's address, what clients and brokers are given with -n (default 127.0.0.1:9876; a bare port works too). To join existing nameservers instead, run `tsmq broker -n <addr;addr>`")
    .addOption(new Option('--namesrv-port <port>', 'nameserver port (same as -n <port>)').hideHelp())
    .option('-p, --listen-port <port>', 'broker remoting port (default 10911)')
    .option('--store <dir>', 'storePathRootDir (default ~/tsmq/store)')
    .option('-o, --option <key=value>', 'any broker/store config key, repeatable', collectOption)
    .option('--tls [mode]', 'TLS on nameserver, broker, HA and gRPC ports with a self-signed certificate made under <store>/tls (mode: permissive (default) or enforcing); tls.server.* keys override')
    .action(async (opts: StartOptions) => {
      await runStart(opts);
    });
}

/**
 * The embedded nameserver's port from `-n`: RocketMQ's `-n` is a nameserver address list
 * (mqbroker, mqadmin, clients); `tsmq start` starts the nameserver itself on 127.0.0.1, so it
 * takes one local `host:port` (or a bare port) and says what to do with anything else.
 */
export function embeddedNamesrvPort(value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) return parsePortValue('namesrvAddr (-n)', v);
  if (v.includes(';')) throw new Error(`-n ${value}: tsmq start runs its own nameserver on one local address; to register a broker with the nameservers ${value}, run \`tsmq broker -n '${value}'\``);
  const m = /^(.*):(\d+)$/.exec(v);
  if (!m) throw new Error(`-n ${value}: expected host:port (127.0.0.1:9876) or a port`);
  if (!['127.0.0.1', 'localhost'].includes(m[1]!)) throw new Error(`-n ${value}: tsmq start's nameserver listens on 127.0.0.1 only; give -n 127.0.0.1:${m[2]}, or run \`tsmq broker -n ${value}\` to register with the nameserver at ${value}`);
  return parsePortValue('namesrvAddr (-n)', m[2]!);
}

export async function runStart(opts: StartOptions): Promise<void> {
  const namesrvPort = opts.namesrvAddr !== undefined ? embeddedNamesrvPort(opts.namesrvAddr) : parsePortValue('namesrvPort', opts.namesrvPort ?? '9876');
  const cfg = withBrokerConfigPath(mergeConfig(
    // Safe default: only this host can connect until told otherwise (docs/security.md).
    { listenPort: '10911', storePathRootDir: defaultStoreRoot(), bindAddress: '127.0.0.1', grpcListenHost: '127.0.0.1', metricsExporterType: 'PROM' },
    opts.config,
    { listenPort: opts.listenPort, storePathRootDir: opts.store },
    opts.option,
  ), opts.config);
  warnUnknownConfigKeys(cfg, brokerConfigKeys(), createLogger('config'));
  const roles: PortRole[] = [{ port: namesrvPort, what: 'nameserver', setting: '-n 127.0.0.1:<port>' }, ...brokerPortRoles({ consolePort: DEFAULT_START_CONSOLE_PORT, ...cfg }, { listenFlag: '-p', grpc: true })];
  const tlsNote = opts.tls ? await useSelfSignedCertificate(cfg, opts.tls) : configuredTlsNote(cfg);
  // the nameserver obeys the same tls.server.* and authenticationEnabled switches as the broker
  const namesrvLogger = createLogger('namesrv');
  const namesrvGate = resolveAuthConfig(cfg).authenticationEnabled ? new NamesrvAuthGate(new RateLimitedLog(namesrvLogger)) : null;
  const namesrv = new NamesrvController({ listenPort: namesrvPort, host: '127.0.0.1', logger: namesrvLogger, tls: resolveTlsServerSettings(cfg), ...(namesrvGate ? { requestGate: namesrvGate } : {}) });
  await namesrv.start().catch((e: unknown) => exitOnPortInUse(e, 'tsmq start', roles, cfg.storePathRootDir));
  cfg.namesrvAddr = `127.0.0.1:${namesrv.port}`;
  // The console is on by default here (8080; `consolePort` wins, -1 turns it off) and starts
  // first, so that it shows the recovery progress while the store opens.
  const consoleLogger = createLogger('console');
  const consoleServer = await startConsole({ consolePort: DEFAULT_START_CONSOLE_PORT, ...cfg }, cfg, consoleLogger).catch((e: unknown) => exitOnPortInUse(e, 'tsmq start', roles, cfg.storePathRootDir));
  let broker: BrokerController;
  try {
    broker = await BrokerController.create({ brokerConfig: cfg, logger: createLogger('broker'), onRecoveryProgress: (p) => consoleServer?.setRecoveryProgress(p) });
  } catch (e) {
    await consoleServer?.close();
    throw e;
  }
  namesrvGate?.arm(broker.authConfig, broker.authMetadata);
  const metrics = prepareMetrics(broker, cfg);
  await broker.start().catch((e: unknown) => exitOnPortInUse(e, 'tsmq start', roles, cfg.storePathRootDir));
  const grpc = await startGrpcFront(broker, cfg).catch((e: unknown) => exitOnPortInUse(e, 'tsmq start', roles, cfg.storePathRootDir));
  const observability = await startObservability(broker, metrics, consoleServer, cfg, cfg).catch((e: unknown) => exitOnPortInUse(e, 'tsmq start', roles, cfg.storePathRootDir));
  // Every listener is bound by now (nameserver, broker remoting, HA, gRPC: each start() resolves
  // once its socket listens); printed through the log stream so that it also comes out after
  // their "listening" log lines. Scripts wait for /tsmq started/.
  const loopbackOnly = cfg.bindAddress === '127.0.0.1' && (!grpc || cfg.grpcListenHost === '127.0.0.1');
  const openHint = loopbackOnly ? ['only this host can connect (to open: -o bindAddress=0.0.0.0 -o grpcListenHost=0.0.0.0, with authenticationEnabled=true; docs/security.md)'] : [];
  printAfterLogs(`tsmq started: nameserver 127.0.0.1:${namesrv.port}, ${describeBroker(brokerBanner(broker, cfg, grpc), [...observability.describe(), ...openHint])}${tlsNote}`);
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

/** Banner note for TLS set by `tls.server.*` keys (without `--tls`): its mode and certificate, or ''. */
function configuredTlsNote(cfg: Record<string, string>): string {
  const K = TLS_SERVER_CONFIG_KEYS;
  const mode = (cfg[K.mode] ?? '').trim();
  return mode === 'permissive' || mode === 'enforcing' ? `; TLS ${mode} (certificate ${cfg[K.certPath] ?? ''})` : '';
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
