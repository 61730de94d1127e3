/**
 * Broker-side wiring of classic master/slave replication (docs/ha.md):
 *
 * - Roles (Apache `BrokerStartup`): ASYNC_MASTER / SYNC_MASTER run as brokerId 0 (another id is
 *   overridden with a warning); a SLAVE needs brokerId ≥ 1 (ConfigError otherwise). Master and
 *   slaves share brokerName.
 * - Masters listen on the HA port: `haListenPort`, or listenPort + 1 when it is -1 (default).
 *   A derived port that is taken is logged and the broker runs without an HA server; an
 *   explicitly configured port that cannot be bound fails the start.
 * - Slaves replicate from `haMasterAddress`, or the master HA address the nameserver returns on
 *   registration (used unless haMasterAddress is set), and keep the master's topic configs,
 *   consumer offsets, delay offsets and subscription groups (slave-synchronize.ts) every
 *   `slaveSynchronizeInterval` ms (tsmq key, default 10000 = Apache's fixed period) from the
 *   masterAddr of the registration reply.
 * - After a truncation (a slave holding data the master does not have), committed consumer
 *   offsets above the new queue max are lowered and persisted, and delay progress is corrected
 *   into the schedule queues (case B35).
 */
import type { Logger } from '../../common/logging/logger.js';
import { ConfigError } from '../../common/config/config-spec.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { resolveTlsClientOptions } from '../../common/tls/tls-client-config.js';
import type { TlsServerSettings } from '../../common/tls/tls-server-config.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { DefaultMessageStore } from '../../store/default-message-store.js';
import type { StoreReplication, ReplicationStats } from '../../store/ha/store-replication.js';
import type { TruncateReport } from '../../store/ha/replicated-log.js';
import type { BrokerConfig } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import type { RegisterOutcome } from '../namesrv-client/broker-outer-api.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import { SlaveSynchronize, type SlaveSyncReport } from './slave-synchronize.js';
import type { TimerSlaveSync } from '../timer/timer-sync.js';
import type { PopSlaveSync } from '../pop/pop-state-sync.js';

export { buildSlaveSyncHandlers } from './slave-sync-handlers.js';

export const DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS = 10_000;

/** Raw broker.conf keys read here that no config spec declares (for the unknown-key report). */
export const HA_RAW_CONFIG_KEYS: readonly string[] = ['slaveSynchronizeInterval'];

export interface BrokerHAOptions {
  config: BrokerConfig;
  /** Raw broker.conf keys (for haMasterAddress and slaveSynchronizeInterval). */
  rawConfig: Record<string, string>;
  ctx: BrokerContext;
  schedule: ScheduleMessageService;
  /** A slave's timer checkpoint/metrics sync (null: timerWheelEnable=false). */
  timerSync?: TimerSlaveSync | null;
  /** A slave's pop state sync from its master (pop/pop-state-sync.ts); absent: not replicated. */
  popStateSync?: PopSlaveSync | null;
  /** Remoting port actually listened on. */
  listenPort: number;
  logger: Logger;
  /** `tls.server.*` of the broker: the HA port obeys the same switch as the remoting port. */
  tls?: TlsServerSettings;
  /** Signs the slave's requests to its master (innerClientAuthenticationCredentials); absent: unsigned. */
  beforeRequest?: (request: RemotingCommand) => void;
}

export interface BrokerHAStats {
  role: string;
  haServerAddr: string;
  replication: ReplicationStats | null;
  lastSync: SlaveSyncReport | null;
  truncations: TruncateReport[];
}

export class BrokerHA {
  private readonly truncations: TruncateReport[] = [];

  private constructor(
    private readonly opts: BrokerHAOptions,
    readonly haServerAddr: string,
    readonly replication: StoreReplication | null,
    private readonly sync: SlaveSynchronize | null,
    private readonly client: RemotingClient | null,
    private readonly haMasterAddressFixed: boolean,
  ) {}

  /** Checks brokerRole against brokerId (mutates brokerId to 0 for masters, like Apache). @throws ConfigError. */
  static checkRoleConfig(config: BrokerConfig, logger: Logger): void {
    if (config.brokerRole === 'SLAVE') {
      if (config.brokerId <= 0) throw new ConfigError('brokerId', String(config.brokerId), "a SLAVE's brokerId must be >= 1 (0 is the master)");
      return;
    }
    if (config.brokerId !== 0) {
      logger.warn(`brokerRole ${config.brokerRole} runs as brokerId 0; the configured brokerId ${config.brokerId} is ignored`);
      (config as { brokerId: number }).brokerId = 0;
    }
  }

  /** Starts the store's replication for the broker's role and, on a slave, metadata sync. */
  static async start(opts: BrokerHAOptions): Promise<BrokerHA> {
    const { config, ctx, logger } = opts;
    BrokerHA.checkRoleConfig(config, logger);
    const explicitPort = config.haListenPort >= 0;
    const haPort = explicitPort ? config.haListenPort : opts.listenPort + 1;
    const store = ctx.store;
    const haMasterAddressFixed = (opts.rawConfig.haMasterAddress ?? '').trim() !== '';
    if (!(store instanceof DefaultMessageStore)) {
      logger.warn('the message store does not support replication; HA is off');
      return new BrokerHA(opts, `${config.brokerIP2}:${haPort}`, null, null, null, haMasterAddressFixed);
    }
    if (config.brokerRole !== 'SLAVE') {
      let replication: StoreReplication | null = null;
      try {
        replication = await store.startHA({ listenPort: haPort, ...(config.bindAddress ? { host: config.bindAddress } : {}), ...(opts.tls ? { tls: opts.tls } : {}) });
      } catch (e) {
        if (explicitPort) throw new Error(`cannot listen on haListenPort ${haPort}: ${(e as Error).message}`, { cause: e });
        logger.error(`cannot listen on the HA port ${haPort} (listenPort + 1): ${(e as Error).message}; running without replication (set haListenPort)`);
      }
      const port = replication?.master?.port ?? haPort;
      logger.info(`${config.brokerRole} ${config.brokerName}: HA port ${replication ? port : 'off'}`);
      return new BrokerHA(opts, `${config.brokerIP2}:${port}`, replication, null, null, haMasterAddressFixed);
    }
    const clientTls = resolveTlsClientOptions(opts.rawConfig);
    const replication = await store.startHA({ listenPort: 0, ...(clientTls ? { clientTls } : {}) });
    const client = new RemotingClient({ logger, ...(clientTls ? { tls: clientTls } : {}), ...(opts.beforeRequest ? { beforeRequest: opts.beforeRequest } : {}) });
    const raw = Number(opts.rawConfig.slaveSynchronizeInterval ?? DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS);
    const intervalMs = Number.isInteger(raw) && raw > 0 ? raw : DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS;
    const sync = new SlaveSynchronize({ client, ctx, schedule: opts.schedule, intervalMs, logger, timer: opts.timerSync ?? null, popState: opts.popStateSync ?? null });
    const ha = new BrokerHA(opts, `${config.brokerIP2}:${haPort}`, replication, sync, client, haMasterAddressFixed);
    replication.onTruncated((r) => void ha.afterTruncation(r));
    sync.start();
    logger.info(`SLAVE ${config.brokerName} (brokerId ${config.brokerId}): replicating from ${replication.slave?.getMasterAddress() ?? '(master learned from the nameserver)'}`);
    return ha;
  }

  /** Registration replies: a slave learns the master's remoting and HA addresses (Apache `registerBrokerAll`). */
  onRegistered(outcomes: RegisterOutcome[]): void {
    if (this.opts.config.brokerRole !== 'SLAVE') return;
    const ok = outcomes.find((o) => o.ok);
    if (!ok) return;
    if (!this.haMasterAddressFixed && ok.haServerAddr) this.replication?.slave?.updateMasterAddress(ok.haServerAddr);
    this.sync?.setMasterAddr(ok.masterAddr ?? null);
  }

  /** B35: after a truncation, consumer offsets above a queue's max are lowered; delay progress corrected. */
  private async afterTruncation(r: TruncateReport): Promise<void> {
    this.truncations.push(r);
    const { ctx, schedule, logger } = this.opts;
    const clamped = ctx.consumerOffsetManager.clampAllToStore((t, q) => ctx.store.getMaxOffsetInQueue(t, q));
    schedule.correctDelayOffsets();
    logger.warn(`replica truncated from ${r.fromOffset} to ${r.toOffset}; ${clamped} consumer offsets lowered to their queue max`);
    try {
      await ctx.consumerOffsetManager.persist();
    } catch (e) {
      logger.error(`persist consumer offsets after truncation failed: ${(e as Error).message}`);
    }
  }

  /** One on-demand topic-config round from the master (false: not a slave, or the master did not answer). */
  syncTopicConfig(): Promise<boolean> {
    return this.sync?.syncTopicConfig() ?? Promise.resolve(false);
  }

  /** Runs one slave metadata sync now (tests, admin). */
  syncNow(): Promise<SlaveSyncReport> | null {
    return this.sync?.syncAll() ?? null;
  }

  stats(): BrokerHAStats {
    return {
      role: this.opts.config.brokerRole,
      haServerAddr: this.haServerAddr,
      replication: this.replication?.stats() ?? null,
      lastSync: this.sync?.getLastReport() ?? null,
      truncations: [...this.truncations],
    };
  }

  /** Stops metadata sync (the store stops replication itself when it shuts down). */
  async shutdown(): Promise<void> {
    await this.sync?.shutdown();
    await this.client?.close();
  }
}
