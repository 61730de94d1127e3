/**
 * BrokerController: builds and wires the broker (RocketMQ `BrokerController`); no request logic.
 *
 * Usage:
 *   const broker = await BrokerController.create({
 *     brokerConfig: { listenPort: '10911', namesrvAddr: '127.0.0.1:9876', storePathRootDir: '/data/store', ... },
 *     clock?, logger?,            // clock drives every timestamp (store included); logger: pino-style
 *   });
 *   await broker.start();         // listens (listenPort 0 = free port), registers with nameservers
 *   broker.port;                  // port actually listened on
 *   await broker.shutdown();      // idempotent
 *
 * `brokerConfig` holds raw broker.conf keys (RocketMQ names): broker keys (broker-config.ts) and
 * store keys (src/store/store-config.ts) in one map. Metadata lives in <storePathRootDir>/config.
 *
 * create(): resolve config → open the store (recovery) → open the timer store (timerwheel,
 *   timerlog/, config/timercheck; recovery) when timerWheelEnable → load topics.json,
 *   consumerOffset.json (offsets above a queue's max are clamped, case B35), subscriptionGroup.json,
 *   delayOffset.json (progress corrected into the schedule queues, case B37) → open the pop state
 *   (<storePathRootDir>/pop, docs/internals/pop.md) → build processors (RECALL_MESSAGE 370
 *   included); the timer put hook goes into the BrokerContext.
 * start(): remoting server → long-polling re-check → schedule service → timer service → periodic
 *   tasks (offset persist every flushConsumerOffsetInterval, client expiry scan every 10 s) →
 *   nameserver registration (awaited once; failures are logged, not fatal).
 * shutdown(): unregister from nameservers → answer held pulls and parked pops → stop the server →
 *   stop the schedule service (persists delay progress) → stop the timer service (finishes the slot
 *   being delivered, checkpoints) → close the pop state (flush + compaction) → persist offsets,
 *   topics, groups → store.shutdown().
 */
import * as path from 'node:path';
import type { Clock } from '../common/time/clock.js';
import { systemClock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import { createLogger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import { RemotingServer } from '../remoting/transport/remoting-server.js';
import { RemotingClient } from '../remoting/transport/remoting-client.js';
import type { MessageStore } from '../store/message-store.js';
import type { RequestHandler } from '../remoting/processor/request-processor.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import { resolveStoreConfig } from '../store/store-config.js';
import { resolveRemotingServerLimits } from '../remoting/transport/remoting-server-config.js';
import { resolveTlsServerSettings, type TlsServerSettings } from '../common/tls/tls-server-config.js';
import { resolveTlsClientOptions } from '../common/tls/tls-client-config.js';
import { innerRequestSigner } from './auth/inner-request-signer.js';
import { PermName, resolveBrokerConfig, splitNamesrvAddr, type BrokerConfig } from './broker-config.js';
import { BrokerContext } from './broker-context.js';
import { ConsumerManager } from './client/consumer-manager.js';
import { ProducerManager } from './client/producer-manager.js';
import { PullRequestHoldService } from './longpolling/pull-request-hold-service.js';
import { BrokerOuterApi } from './namesrv-client/broker-outer-api.js';
import { NamesrvRegistrar } from './namesrv-client/namesrv-registrar.js';
import { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import { buildProcessorTable } from './processors/processor-table.js';
import { PullMessageProcessor } from './processors/pull-message-processor.js';
import { DelayLevelTable } from './schedule/delay-level-table.js';
import { ScheduleMessageService } from './schedule/schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import { TopicConfigManager } from './topic/topic-config-manager.js';
import { TransactionalMessageService } from './transaction/transactional-message-service.js';
import { transactionBrokerOf } from './transaction/transaction-broker.js';
import { resolveTransactionConfig } from './transaction/transaction-config.js';
import { remotingTransactionChecker } from './transaction/remoting-transaction-checker.js';
import { BrokerHA, buildSlaveSyncHandlers, DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS } from './ha/broker-ha.js';
import { ControllerMode } from './controller/controller-mode.js';
import { ControllerAdminProcessors } from './controller/controller-admin-processors.js';
import { resolveControllerConfig } from './controller/controller-config.js';
import { nodeFileSystem } from '../common/fs/node-file-system.js';
import { popBrokerOf } from './pop/pop-broker.js';
import { resolvePopConfig } from './pop/pop-config.js';
import { PopService } from './pop/pop-service.js';
import { PopStateStore } from './pop/pop-state-store.js';
import { buildPopProcessorTable } from './processors/pop-processor-table.js';
import { resolveAuthConfig, type AuthConfig } from '../auth/auth-config.js';
import { RemotingAuthGate } from '../auth/remoting-auth-gate.js';
import { RateLimitedLog } from '../common/logging/rate-limited-log.js';
import { AuthMetadataManager } from './auth/auth-metadata-manager.js';
import { buildAuthAdminHandlers } from './auth/auth-admin-processors.js';
import { brokerAuthContexts } from './auth/remoting-auth-contexts.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { TimerStore } from '../store/timer/timer-store.js';
import { resolveTimerConfig, type TimerConfig } from './timer/timer-config.js';
import { TIMER_TOPIC, TimerPutHook } from './timer/timer-put-hook.js';
import { TimerMessageService, legacyProgressPath } from './timer/timer-message-service.js';
import { RecallMessageService } from './timer/recall-message-service.js';
import { recallMessageHandler } from './timer/recall-message-processor.js';
import { TimerMetrics, timerMetricsPath } from './timer/timer-metrics.js';
import { TimerSlaveSync } from './timer/timer-sync.js';
import { buildTimerSyncHandlers } from './timer/timer-sync-handlers.js';
import { BrokerProperties } from './config-file/broker-properties.js';
import { commitLogDir } from '../store/store-config.js';
import type { RecoveryProgressListener } from '../store/recovery/recovery-progress.js';

export interface BrokerControllerOptions {
  /** Raw broker.conf keys (broker and store keys together). */
  brokerConfig: Record<string, string>;
  clock?: Clock;
  logger?: Logger;
  /** Use this store instead of opening DefaultMessageStore (tests). It is shut down with the broker. */
  store?: MessageStore;
  /** File system for the metadata files (tests). */
  fs?: FileSystem;
  /** Long-polling re-check period; default 5000 ms (shortPollingTimeMills without long polling). */
  pullHoldCheckIntervalMs?: number;
  /** Slots per half timer wheel (tests; default Apache's 7 days of slots, a 38.7 MB timerwheel file). */
  timerSlotsTotal?: number;
  /** Hears the store's start-up recovery progress every few seconds (the console shows it). */
  onRecoveryProgress?: RecoveryProgressListener;
}

/** The durable timer store and its delivery service (absent when timerWheelEnable=false). */
interface TimerParts {
  config: TimerConfig;
  store: TimerStore | null;
  service: TimerMessageService | null;
  /** config/timermetrics and the timer counters (null when timerWheelEnable=false). */
  metrics: TimerMetrics | null;
}

/** True for an address only this host can reach (127.0.0.0/8, ::1). */
export function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.') || host === 'localhost' || host.startsWith('::ffff:127.');
}


/** Apache scans client channels every 10 s. */
const CLIENT_SCAN_INTERVAL_MS = 10_000;

export class BrokerController {
  readonly config: BrokerConfig;
  readonly ctx: BrokerContext;
  readonly scheduleMessageService: ScheduleMessageService;
  readonly pullRequestHoldService: PullRequestHoldService;
  private readonly logger: Logger;
  private readonly handlers: ReturnType<typeof buildProcessorTable>;
  private server: RemotingServer | null = null;
  private client: RemotingClient | null = null;
  private registrar: NamesrvRegistrar | null = null;
  /** Replication wiring (src/broker/ha), set by start() in classic mode. */
  private ha: BrokerHA | null = null;
  /** Controller mode (src/broker/controller, enableControllerMode=true), set by start(). */
  private controllerMode: ControllerMode | null = null;
  private readonly rawConfig: Record<string, string>;
  private timers: NodeJS.Timeout[] = [];
  private state: 'created' | 'started' | 'stopping' | 'stopped' = 'created';
  private shutdownPromise: Promise<void> | null = null;
  /** Half messages, commit/rollback (37) and check-back (39); shared with the gRPC front. */
  readonly transactionService: TransactionalMessageService;
  /**
   * Pop consumption over the durable state in <storePathRootDir>/pop: the one PopService both
   * fronts use (remoting POP_MESSAGE & co., gRPC ReceiveMessage & co.).
   */
  readonly popService: PopService;
  private readonly arrivalListeners: Array<(topic: string, queueId: number) => void> = [];
  /** ACL 2.0 switches (authenticationEnabled, authorizationEnabled...). */
  readonly authConfig: AuthConfig;
  /** ACL 2.0 users and ACLs (config/users.json, acls.json), shared with the gRPC front. */
  readonly authMetadata: AuthMetadataManager;
  /** Timer messages (src/broker/timer): null when timerWheelEnable=false. */
  readonly timerMessageService: TimerMessageService | null;
  /** RECALL_MESSAGE (370) and gRPC RecallMessage. */
  readonly recallMessageService: RecallMessageService;
  /** The durable timer store (timerwheel, timerlog/, config/timercheck); null when timerWheelEnable=false. */
  readonly timerStore: TimerStore | null;
  /** Apache TimerMetrics (config/timermetrics) and timer counters; null when timerWheelEnable=false. */
  readonly timerMetrics: TimerMetrics | null;
  /** A slave's timer checkpoint/metrics sync (GET_TIMER_CHECK_POINT 60, GET_TIMER_METRICS 61). */
  private readonly timerSlaveSync: TimerSlaveSync | null;

  private constructor(
    config: BrokerConfig,
    ctx: BrokerContext,
    schedule: ScheduleMessageService,
    private readonly popState: PopStateStore,
    opts: BrokerControllerOptions,
    auth: { config: AuthConfig; metadata: AuthMetadataManager },
    timer: TimerParts,
    /** `tls.server.*` of broker.conf: the remoting port's TLS (also read by the gRPC front and HA). */
    readonly tls: TlsServerSettings,
  ) {
    this.authConfig = auth.config;
    this.authMetadata = auth.metadata;
    this.config = config;
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.scheduleMessageService = schedule;
    const pull = new PullMessageProcessor(ctx);
    this.pullRequestHoldService = new PullRequestHoldService({
      clock: ctx.clock,
      maxOffsetOf: (t, q) => ctx.store.getMaxOffsetInQueue(t, q),
      wakeup: (req) => pull.executeRequestWhenWakeup(req),
      checkIntervalMs: opts.pullHoldCheckIntervalMs ?? (config.longPollingEnable ? 5000 : config.shortPollingTimeMills),
      logger: ctx.logger,
    });
    pull.setHoldService(this.pullRequestHoldService);
    this.transactionService = new TransactionalMessageService({
      broker: transactionBrokerOf(ctx),
      config: resolveTransactionConfig(opts.brokerConfig),
      clock: ctx.clock,
      logger: ctx.logger,
    });
    this.transactionService.addChecker(remotingTransactionChecker((g) => ctx.producerManager.channelsOf(g)));
    this.popService = new PopService({ broker: popBrokerOf(ctx), state: popState, config: resolvePopConfig(opts.brokerConfig), clock: ctx.clock, logger: ctx.logger });
    const storeConfig = resolveStoreConfig(opts.brokerConfig);
    this.handlers = buildProcessorTable(ctx, pull, this.transactionService, {
      properties: new BrokerProperties(config, { ...opts.brokerConfig }, ctx.clock),
      runtime: {
        commitLogDir: commitLogDir(storeConfig),
        consumeQueueDir: path.join(storeConfig.storePathRootDir, 'consumequeue'),
        haStats: () => this.ha?.stats() ?? null,
        haMaxGapNotInSyncBytes: storeConfig.haMaxGapNotInSync,
      },
    });
    const popHandlers = buildPopProcessorTable(ctx, this.popService, { rawConfig: opts.brokerConfig, stopping: () => this.state !== 'started', ...(opts.fs ? { fs: opts.fs } : {}) });
    for (const [code, h] of popHandlers) this.handlers.set(code, h);
    for (const [code, h] of buildSlaveSyncHandlers(ctx, schedule)) if (!this.handlers.has(code)) this.handlers.set(code, h);
    for (const [code, h] of buildAuthAdminHandlers(auth.metadata, ctx.logger)) this.handlers.set(code, h);
    this.timerStore = timer.store;
    this.timerMessageService = timer.service;
    this.timerMetrics = timer.metrics;
    this.timerSlaveSync = timer.service && timer.metrics ? new TimerSlaveSync(timer.service, timer.metrics) : null;
    for (const [code, h] of buildTimerSyncHandlers(timer.store, timer.metrics)) this.handlers.set(code, h);
    this.recallMessageService = new RecallMessageService(ctx, timer.config);
    this.handlers.set(RequestCode.RECALL_MESSAGE, recallMessageHandler(this.recallMessageService, config.regionId));
    this.rawConfig = opts.brokerConfig;
    ctx.store.setMessageArrivingListener((topic, queueId, logicOffset, tagsCode, _ts, properties) => {
      if (topic === TIMER_TOPIC) this.timerMessageService?.wakeup();
      this.pullRequestHoldService.notifyMessageArriving(topic, queueId, logicOffset, tagsCode, properties);
      this.popService.notifyMessageArrived(topic);
      for (const l of this.arrivalListeners) l(topic, queueId);
    });
  }

  /** Authentication/authorization before every remoting handler, or null when both are off. */
  private get requestGate(): RemotingAuthGate | null {
    const gate = new RemotingAuthGate({
      config: this.authConfig,
      metadata: this.authMetadata,
      contextsOf: brokerAuthContexts(this.config.brokerClusterName),
      refusalLog: new RateLimitedLog(this.logger),
      name: 'broker',
    });
    return gate.enabled ? gate : null;
  }

  /** Another consumer front (gRPC) that wants to hear about dispatched messages. */
  addMessageArrivingListener(listener: (topic: string, queueId: number) => void): void {
    this.arrivalListeners.push(listener);
  }

  /** The handler registered for a request code (in-process tests call processors through it). */
  handlerFor(code: number): RequestHandler | undefined {
    return this.handlers.get(code);
  }

  /** Resolves config, opens the store and loads all metadata. @throws ConfigError, ConfigFileCorruptError, store open errors. */
  static async create(opts: BrokerControllerOptions): Promise<BrokerController> {
    const config = resolveBrokerConfig(opts.brokerConfig);
    const authConfig = resolveAuthConfig(opts.brokerConfig);
    const tls = resolveTlsServerSettings(opts.brokerConfig);
    resolveTlsClientOptions(opts.brokerConfig); // a bad tls.client.* key fails the start, not the first registration
    const clock = opts.clock ?? systemClock;
    const logger = opts.logger ?? createLogger('broker');
    const delayLevels = new DelayLevelTable(config.messageDelayLevel);
    const timerConfig = resolveTimerConfig(opts.brokerConfig);
    const store =
      opts.store ??
      (await DefaultMessageStore.open(resolveStoreConfig(opts.brokerConfig), {
        clock,
        logger: logger.child({ component: 'store' }),
        ...(opts.fs ? { fs: opts.fs } : {}),
        ...(opts.onRecoveryProgress ? { onRecoveryProgress: opts.onRecoveryProgress } : {}),
      }));
    let popState: PopStateStore | null = null;
    let timerStore: TimerStore | null = null;
    try {
      const configDir = path.join(config.storePathRootDir, 'config');
      const fsForTimer = opts.fs ?? nodeFileSystem;
      if (timerConfig.timerWheelEnable) {
        timerStore = TimerStore.open({
          storePathRootDir: config.storePathRootDir,
          fs: fsForTimer,
          precisionMs: timerConfig.timerPrecisionMs,
          timerLogFileSizeBytes: timerConfig.mappedFileSizeTimerLog,
          ...(opts.timerSlotsTotal !== undefined ? { slotsTotal: opts.timerSlotsTotal } : {}),
        });
      }
      const wheel = timerStore?.wheel ?? null;
      const fileOpts = { logger, ...(opts.fs ? { fs: opts.fs } : {}) };
      const topics = new TopicConfigManager(path.join(configDir, 'topics.json'), {
        ...fileOpts,
        clock,
        brokerName: config.brokerName,
        brokerClusterName: config.brokerClusterName,
        autoCreateTopicEnable: config.autoCreateTopicEnable,
        clusterTopicEnable: config.clusterTopicEnable,
        brokerTopicEnable: config.brokerTopicEnable,
        traceTopicEnable: config.traceTopicEnable,
        delayLevelCount: delayLevels.maxLevel,
      });
      topics.load();
      if (topics.recoverFromConsumeQueues(store.getTopicQueueTable()).length > 0) await topics.whenPersisted();
      const offsets = new ConsumerOffsetManager(path.join(configDir, 'consumerOffset.json'), { ...fileOpts, clock });
      offsets.load();
      const clamped = offsets.clampAllToStore((t, q) => store.getMaxOffsetInQueue(t, q));
      if (clamped > 0) {
        logger.warn(`${clamped} consumer offsets were above their queue max and were lowered`);
        await offsets.persist();
      }
      const groups = new SubscriptionGroupManager(path.join(configDir, 'subscriptionGroup.json'), {
        ...fileOpts,
        clock,
        autoCreateSubscriptionGroup: config.autoCreateSubscriptionGroup,
        retryMaxTimes: config.retryMaxTimes,
      });
      groups.load();
      const schedule = new ScheduleMessageService(path.join(configDir, 'delayOffset.json'), {
        ...fileOpts,
        store,
        delayLevels,
        clock,
        flushDelayOffsetIntervalMs: config.flushDelayOffsetInterval,
      });
      schedule.load();
      const popConfig = resolvePopConfig(opts.brokerConfig);
      popState = PopStateStore.open({
        dir: path.join(config.storePathRootDir, 'pop'),
        fs: opts.fs ?? nodeFileSystem,
        clock,
        logger,
        flushIntervalMs: popConfig.popFlushIntervalMs,
        syncFlush: popConfig.popSyncFlush,
        compactLogBytes: popConfig.popCompactLogBytes,
      });
      const ctx = new BrokerContext({
        config,
        store,
        clock,
        logger,
        topicConfigManager: topics,
        consumerOffsetManager: offsets,
        subscriptionGroupManager: groups,
        consumerManager: new ConsumerManager(clock, config.channelExpiredTimeout, logger),
        producerManager: new ProducerManager(clock, config.channelExpiredTimeout, logger),
        delayLevels,
        timerPutHook: new TimerPutHook({ config: timerConfig, clock, congestNumOf: (ms) => wheel?.getSlot(ms).num ?? 0 }),
      });
      let timerService: TimerMessageService | null = null;
      let timerMetrics: TimerMetrics | null = null;
      if (timerStore) {
        timerMetrics = new TimerMetrics(timerMetricsPath(config.storePathRootDir), clock, fileOpts);
        timerMetrics.loadOrEmpty((m) => logger.error(m));
        topics.createTopicInSendMessageBackMethod(TIMER_TOPIC, 1, PermName.PERM_READ | PermName.PERM_WRITE, 0);
        timerService = new TimerMessageService({
          timerStore,
          store,
          config: timerConfig,
          clock,
          logger: logger.child({ component: 'timer' }),
          legacyProgress: { fs: fsForTimer, path: legacyProgressPath(config.storePathRootDir) },
          metrics: timerMetrics,
        });
        const service = timerService;
        store.setRetentionHold?.(() => service.retentionHoldOffset()); // CommitLog files holding pending timers are kept
      }
      const authMetadata = await AuthMetadataManager.open(configDir, authConfig, fileOpts);
      return new BrokerController(config, ctx, schedule, popState, opts, { config: authConfig, metadata: authMetadata }, { config: timerConfig, store: timerStore, service: timerService, metrics: timerMetrics }, tls);
    } catch (e) {
      await popState?.close().catch(() => undefined);
      timerStore?.close();
      await store.shutdown().catch(() => undefined);
      throw e;
    }
  }

  /** Port actually listened on. @throws before start(). */
  get port(): number {
    if (!this.server) throw new Error('broker is not started');
    return this.server.port;
  }

  /** Address the remoting server actually bound (`::` = every interface). @throws before start(). */
  get listenHost(): string {
    if (!this.server) throw new Error('broker is not started');
    return this.server.host;
  }

  /** Replication wiring (src/broker/ha): role, HA address, stats; null before start(). */
  get replication(): BrokerHA | null {
    return this.ha;
  }

  /** Controller mode (elections on etcd, live role changes); null in classic mode or before start(). */
  get controller(): ControllerMode | null {
    return this.controllerMode;
  }

  /** The raw broker.conf keys this broker was created with (read-only view; the console reads store keys from it). */
  get rawBrokerConfig(): Readonly<Record<string, string>> {
    return this.rawConfig;
  }

  /** `brokerIP1:port`. */
  get brokerAddr(): string {
    return this.ctx.brokerAddr;
  }

  async start(): Promise<void> {
    if (this.state !== 'created') throw new Error(`broker cannot start: it is ${this.state}`);
    this.state = 'started';
    const ctx = this.ctx;
    const server = new RemotingServer({
      listenPort: this.config.listenPort,
      ...(this.config.bindAddress ? { host: this.config.bindAddress } : {}),
      logger: this.logger,
      name: 'broker',
      ...resolveRemotingServerLimits(this.rawConfig),
      ...(this.requestGate ? { requestGate: this.requestGate } : {}),
      tls: this.tls,
    });
    for (const [code, handler] of this.handlers) server.registerProcessor(code, handler);
    // rocketmq_rpc_latency: timed by the dispatch itself when a stats listener is set before start()
    const statsListener = ctx.brokerStats.listener;
    if (statsListener) server.setResponseObserver((code, responseCode, ms) => statsListener.onRpc(code, responseCode, ms));
    const controllerConfig = resolveControllerConfig(this.rawConfig);
    const controllerAdmin = new ControllerAdminProcessors({
      config: this.config,
      controller: controllerConfig,
      brokerAddr: () => ctx.brokerAddr,
      mode: () => this.controllerMode,
      maxPhyOffset: () => ctx.store.getMaxPhyOffset(),
    });
    for (const [code, handler] of controllerAdmin.handlers()) server.registerProcessor(code, handler);
    server.onChannelClose((ch) => {
      ctx.consumerManager.doChannelCloseEvent(ch);
      ctx.producerManager.doChannelCloseEvent(ch);
    });
    await server.start();
    this.server = server;
    ctx.setListenPort(server.port);
    if (controllerConfig.enableControllerMode) {
      if (!(ctx.store instanceof DefaultMessageStore)) throw new Error('enableControllerMode needs the default message store');
      const rawInterval = Number(this.rawConfig.slaveSynchronizeInterval ?? DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS);
      const controllerClientTls = resolveTlsClientOptions(this.rawConfig);
      this.controllerMode = await ControllerMode.start({
        config: this.config,
        controller: controllerConfig,
        ctx,
        store: ctx.store,
        schedule: this.scheduleMessageService,
        transactions: this.transactionService,
        timers: this.timerMessageService,
        timerSync: this.timerSlaveSync,
        haPort: this.config.haListenPort > 0 ? this.config.haListenPort : server.port + 1,
        slaveSynchronizeIntervalMs: Number.isInteger(rawInterval) && rawInterval > 0 ? rawInterval : DEFAULT_SLAVE_SYNCHRONIZE_INTERVAL_MS,
        logger: this.logger,
        tls: this.tls,
        ...(controllerClientTls ? { clientTls: controllerClientTls } : {}),
        ...innerRequestSigner(this.authConfig),
      });
      this.controllerMode.onRoleChange(() => void this.registrar?.registerNow());
    } else {
      this.ha = await BrokerHA.start({ config: this.config, rawConfig: this.rawConfig, ctx, schedule: this.scheduleMessageService, timerSync: this.timerSlaveSync, listenPort: server.port, logger: this.logger, tls: this.tls, ...innerRequestSigner(this.authConfig) });
    }

    this.pullRequestHoldService.start();
    ctx.brokerStats.start();
    const writer = !this.controllerMode && this.config.brokerRole !== 'SLAVE'; // a slave takes delay progress and timers from its master
    if (writer) await this.transactionService.start();
    if (writer) this.scheduleMessageService.start();
    await this.timerMessageService?.start(writer); // a slave enqueues only, bounded by its master's timer checkpoint (controller mode started it already)
    this.timerMetrics?.startPersisting(resolveTimerConfig(this.rawConfig).timerFlushIntervalMs, (m) => this.logger.error(m));
    this.every(this.config.flushConsumerOffsetInterval, () => {
      this.persistOffsets();
      this.retryFailedConfigWrites();
    });
    this.every(CLIENT_SCAN_INTERVAL_MS, () => {
      ctx.consumerManager.scanNotActiveChannel();
      ctx.producerManager.scanNotActiveChannel();
    });

    const namesrvAddrs = splitNamesrvAddr(this.config.namesrvAddr);
    if (namesrvAddrs.length > 0) {
      const clientTls = resolveTlsClientOptions(this.rawConfig);
      this.client = new RemotingClient({ logger: this.logger, ...(clientTls ? { tls: clientTls } : {}), ...innerRequestSigner(this.authConfig) });
      const api = new BrokerOuterApi(this.client, namesrvAddrs, this.config.registerBrokerTimeoutMills, this.logger);
      const registrar = new NamesrvRegistrar({
        api,
        identity: () => ({
          clusterName: this.config.brokerClusterName,
          brokerName: this.config.brokerName,
          brokerAddr: ctx.brokerAddr,
          brokerId: this.config.brokerId,
          haServerAddr: this.controllerMode?.haServerAddr ?? this.ha?.haServerAddr ?? `${this.config.brokerIP2}:${this.config.haListenPort >= 0 ? this.config.haListenPort : server.port + 1}`,
        }),
        topics: () => this.topicsForRegistration(),
        periodMs: this.config.registerNameServerPeriod,
        logger: this.logger,
        onRegistered: (outcomes) => this.ha?.onRegistered(outcomes),
      });
      this.registrar = registrar;
      ctx.topicConfigManager.onChange(() => void registrar.registerNow());
      await registrar.start();
    }
    if (!isLoopback(server.host) && !this.authConfig.authenticationEnabled) {
      this.logger.warn(`broker remoting port ${server.host}:${server.port} is reachable from other hosts and authenticationEnabled=false: anyone who can reach it can send, consume, delete topics and reset offsets; set authenticationEnabled=true and authorizationEnabled=true (docs/security.md) or bindAddress=127.0.0.1`);
    }
    this.logger.info(`broker ${this.config.brokerName} started at ${ctx.brokerAddr}`);
  }

  /** Idempotent; see the file comment for the order. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.state = 'stopping';
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const step = async (what: string, fn: () => Promise<unknown> | unknown): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        this.logger.error(`shutdown: ${what} failed: ${(e as Error).message}`);
      }
    };
    await step('unregister from nameservers', () => this.registrar?.shutdown());
    await step('stop slave synchronize', () => this.ha?.shutdown());
    await step('leave the controller group', () => this.controllerMode?.shutdown());
    await step('answer held pulls', () => this.pullRequestHoldService.shutdown());
    this.ctx.brokerStats.shutdown();
    this.popService.waitQueue.notifyAll();
    this.ctx.store.setMessageArrivingListener(null);
    await step('stop remoting server', () => this.server?.shutdown());
    await step('stop schedule service', () => this.scheduleMessageService.shutdown());
    await step('stop timer service', () => this.timerMessageService?.shutdown());
    this.ctx.store.setRetentionHold?.(null);
    await step('close timer store', () => this.timerStore?.close());
    await step('persist timer metrics', () => this.timerMetrics?.shutdown());
    await step('stop transaction service', () => this.transactionService.shutdown());
    await step('close pop state', () => this.popState.close());
    await step('persist consumer offsets', () => this.ctx.consumerOffsetManager.persist());
    await step('persist topics', () => this.ctx.topicConfigManager.persist());
    await step('persist subscription groups', () => this.ctx.subscriptionGroupManager.persist());
    await step('close nameserver client', () => this.client?.close());
    await step('shut down store', () => this.ctx.store.shutdown());
    this.state = 'stopped';
    this.logger.info(`broker ${this.config.brokerName} stopped`);
  }

  /** Topic table for REGISTER_BROKER; perms are replaced by brokerPermission when the broker is not read-write (Apache). */
  private topicsForRegistration(): object {
    const perm = this.config.brokerPermission;
    const rw = PermName.isReadable(perm) && PermName.isWriteable(perm);
    return this.ctx.topicConfigManager.buildSerializeWrapper(rw ? undefined : perm);
  }

  private persistOffsets(): void {
    this.ctx.consumerOffsetManager.persist().catch((e: Error) => this.logger.error(`persist consumer offsets failed: ${e.message}`));
  }

  /** A topic or group write that failed (ENOSPC, EIO) is written again with the latest state. */
  private retryFailedConfigWrites(): void {
    for (const m of [this.ctx.topicConfigManager, this.ctx.subscriptionGroupManager]) {
      m.retryFailedPersist()?.then(
        () => this.logger.info(`${m.filePath} written after an earlier failure`),
        (e: Error) => this.logger.error(`persist ${m.filePath} failed again: ${e.message}`),
      );
    }
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }
}
