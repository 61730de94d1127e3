/**
 * The broker's replication role wiring (docs/ha.md, docs/failover.md), assembled for
 * BrokerController.start(): either controller mode (enableControllerMode=true: the group elects
 * its master on etcd and roles change live, controller-mode.ts) or classic master/slave
 * replication (src/broker/ha/broker-ha.ts).
 *
 * Start order, driven by BrokerController.start():
 *   new ReplicationRole() (resolves controller keys) → adminHandlers() registered on the remoting
 *   server before it listens (GET_BROKER_EPOCH_CACHE; the CONTROLLER_* admin codes in controller
 *   mode) → start(listenPort) once the server listens (ControllerMode.start or BrokerHA.start)
 *   → startWriterServices() after long polling and stats: transaction check, schedule (delay)
 *   delivery, timer delivery, in that order, only on a classic master. A classic slave takes
 *   delay progress from its master and runs the timer service enqueue-only (its wheel is built
 *   from the replicated timer topic, bounded by the master's synced timer checkpoint); in
 *   controller mode ControllerMode starts the writer services when this replica becomes master.
 * Stop order (owned by BrokerController, after unregistering from the nameservers): classic
 *   slave synchronize (ha.shutdown) → leave the controller group (controllerMode.shutdown).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { TlsServerSettings } from '../../common/tls/tls-server-config.js';
import { resolveTlsClientOptions } from '../../common/tls/tls-client-config.js';
import type { AuthConfig } from '../../auth/auth-config.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { DefaultMessageStore } from '../../store/default-message-store.js';
import { innerRequestSigner } from '../auth/inner-request-signer.js';
import type { BrokerConfig } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import { BrokerHA, DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS } from '../ha/broker-ha.js';
import type { RegisterOutcome } from '../namesrv-client/broker-outer-api.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import type { TimerMessageService } from '../timer/timer-message-service.js';
import type { TimerSlaveSync } from '../timer/timer-sync.js';
import type { PopSlaveSync } from '../pop/pop-state-sync.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { ControllerAdminProcessors } from './controller-admin-processors.js';
import { resolveControllerConfig, type ControllerConfig } from './controller-config.js';
import { ControllerMode } from './controller-mode.js';

export interface ReplicationRoleDeps {
  config: BrokerConfig;
  /** Raw broker.conf keys (controller keys, slaveSynchronizeInterval, haMasterAddress, tls.client.*). */
  rawConfig: Record<string, string>;
  ctx: BrokerContext;
  schedule: ScheduleMessageService;
  transactions: TransactionalMessageService;
  /** Timer delivery; null when timerWheelEnable=false. */
  timers: TimerMessageService | null;
  /** A slave's timer checkpoint/metrics sync from its master; null when timerWheelEnable=false. */
  timerSync: TimerSlaveSync | null;
  /** A replica's pop state sync from its master (pop/pop-state-sync.ts). */
  popStateSync: PopSlaveSync | null;
  logger: Logger;
  /** `tls.server.*` of the broker: the HA port obeys the same switch as the remoting port. */
  tls: TlsServerSettings;
  /** Signs the broker's own requests to its master (innerClientAuthenticationCredentials). */
  authConfig: AuthConfig;
}

export class ReplicationRole {
  private readonly controllerConfig: ControllerConfig;
  private haWiring: BrokerHA | null = null;
  private mode: ControllerMode | null = null;

  /** @throws ConfigError for a bad controller key. */
  constructor(private readonly deps: ReplicationRoleDeps) {
    this.controllerConfig = resolveControllerConfig(deps.rawConfig);
  }

  /** Classic replication wiring; null in controller mode or before start(). */
  get ha(): BrokerHA | null {
    return this.haWiring;
  }

  /** Controller mode; null in classic mode or before start(). */
  get controllerMode(): ControllerMode | null {
    return this.mode;
  }

  /** GET_BROKER_EPOCH_CACHE, plus the CONTROLLER_* admin codes in controller mode. */
  adminHandlers(): Array<[number, RequestHandler]> {
    const ctx = this.deps.ctx;
    return new ControllerAdminProcessors({
      config: this.deps.config,
      controller: this.controllerConfig,
      brokerAddr: () => ctx.brokerAddr,
      mode: () => this.mode,
      maxPhyOffset: () => ctx.store.getMaxPhyOffset(),
    }).handlers();
  }

  /**
   * Starts controller mode or classic replication; `listenPort` is the remoting port actually
   * listened on (HA port default: listenPort + 1). @throws when controller mode runs on another
   * store than DefaultMessageStore, or the HA port cannot be bound (broker-ha.ts).
   */
  async start(listenPort: number): Promise<void> {
    const { config, rawConfig, ctx, logger, tls } = this.deps;
    if (this.controllerConfig.enableControllerMode) {
      if (!(ctx.store instanceof DefaultMessageStore)) throw new Error('enableControllerMode needs the default message store');
      const rawInterval = Number(rawConfig.slaveSynchronizeInterval ?? DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS);
      const controllerClientTls = resolveTlsClientOptions(rawConfig);
      this.mode = await ControllerMode.start({
        config,
        controller: this.controllerConfig,
        ctx,
        store: ctx.store,
        schedule: this.deps.schedule,
        transactions: this.deps.transactions,
        timers: this.deps.timers,
        timerSync: this.deps.timerSync,
        popStateSync: this.deps.popStateSync,
        haPort: config.haListenPort > 0 ? config.haListenPort : listenPort + 1,
        slaveSynchronizeIntervalMs: Number.isInteger(rawInterval) && rawInterval > 0 ? rawInterval : DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS,
        logger,
        tls,
        ...(controllerClientTls ? { clientTls: controllerClientTls } : {}),
        ...innerRequestSigner(this.deps.authConfig),
      });
    } else {
      this.haWiring = await BrokerHA.start({ config, rawConfig, ctx, schedule: this.deps.schedule, timerSync: this.deps.timerSync, popStateSync: this.deps.popStateSync, listenPort, logger, tls, ...innerRequestSigner(this.deps.authConfig) });
    }
  }

  /**
   * True when this replica writes for its group now: a classic master (brokerRole not SLAVE), or
   * the elected replica in controller mode (false there before start() and while not elected).
   */
  isMaster(): boolean {
    if (this.mode) return this.mode.stats().role === 'MASTER';
    if (this.controllerConfig.enableControllerMode) return false;
    return this.deps.config.brokerRole !== 'SLAVE';
  }

  /**
   * One on-demand topic-config round from this replica's master (slave-synchronize.ts
   * `syncTopicConfig`); false before start(), on a master, or when the master did not answer.
   */
  syncTopicConfigNow(): Promise<boolean> {
    return this.mode?.syncTopicConfig() ?? this.haWiring?.syncTopicConfig() ?? Promise.resolve(false);
  }

  /** Hears live role changes (controller mode only; classic roles are fixed by brokerRole). */
  onRoleChange(listener: (role: 'MASTER' | 'SLAVE') => void): void {
    this.mode?.onRoleChange(listener);
  }

  /** Starts transaction check, delay delivery and timer delivery on a classic master (see the file comment). */
  async startWriterServices(): Promise<void> {
    const writer = !this.mode && this.deps.config.brokerRole !== 'SLAVE'; // a slave takes delay progress and timers from its master
    if (writer) await this.deps.transactions.start();
    if (writer) this.deps.schedule.start();
    await this.deps.timers?.start(writer); // a slave enqueues only, bounded by its master's timer checkpoint (controller mode started it already)
  }

  /** `host:port` of the HA server to register (brokerIP2 and haListenPort, or listenPort + 1, before start). */
  haServerAddr(listenPort: number): string {
    const config = this.deps.config;
    return this.mode?.haServerAddr ?? this.haWiring?.haServerAddr ?? `${config.brokerIP2}:${config.haListenPort >= 0 ? config.haListenPort : listenPort + 1}`;
  }

  /** A registration round's outcomes: a classic slave learns its master's addresses from them. */
  onRegistered(outcomes: RegisterOutcome[]): void {
    this.haWiring?.onRegistered(outcomes);
  }
}
