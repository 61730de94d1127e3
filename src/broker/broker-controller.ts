/**
 * BrokerController: the broker's lifecycle owner (RocketMQ `BrokerController`); no request logic.
 * It constructs the services, starts them in order and shuts them down in reverse; each area is
 * assembled in its own file (named below).
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
 * create(): open store, timer store, metadata, pop state, context, ACLs (broker-parts.ts) → pull
 *   serving (processors/pull-serving.ts), transactions, pop service, recall → the handler table
 *   (processors/broker-handler-table.ts) → the store's message-arrival fan-out.
 * start(): replication role (controller/replication-role.ts; the pop service follows its role:
 *   pops on the master only, pop/pop-service.ts setMaster) and remoting server
 *   (broker-remoting-server.ts) → server listens → controller mode or classic HA → long-polling
 *   re-check → stats → master services (transaction check, schedule, timer) → periodic tasks
 *   (broker-periodic-tasks.ts) → nameserver registration (namesrv-client/namesrv-registration.ts,
 *   awaited once; failures are logged, not fatal).
 * shutdown(): unregister from nameservers → leave replication → answer held pulls and parked pops
 *   → stop the server → stop the schedule service (persists delay progress) → stop the timer
 *   service (finishes the slot being delivered, checkpoints) → close the timer store → stop
 *   transactions → close the pop state (flush + compaction) → persist offsets, topics, groups →
 *   close the nameserver client → store.shutdown(). Each step's failure is logged, the rest run.
 */
import type { Logger } from '../common/logging/logger.js';
import type { TlsServerSettings } from '../common/tls/tls-server-config.js';
import type { AuthConfig } from '../auth/auth-config.js';
import type { RemotingAuthGateOptions } from '../auth/remoting-auth-gate.js';
import type { RemotingServer } from '../remoting/transport/remoting-server.js';
import type { RequestHandler } from '../remoting/processor/request-processor.js';
import type { TimerStore } from '../store/timer/timer-store.js';
import type { BrokerConfig } from './broker-config.js';
import type { BrokerContext } from './broker-context.js';
import { openBrokerParts, type BrokerParts, type BrokerPartsOptions } from './broker-parts.js';
import { BrokerPeriodicTasks } from './broker-periodic-tasks.js';
import { createBrokerRemotingServer } from './broker-remoting-server.js';
import { MessageArrivalFanout } from './message-arrival-fanout.js';
import { ReplicaTopicLearner } from './ha/replica-topic-learner.js';
import type { AuthMetadataManager } from './auth/auth-metadata-manager.js';
import { warnIfOpenWithoutAuth } from './auth/broker-auth-gate.js';
import type { ControllerMode } from './controller/controller-mode.js';
import { ReplicationRole } from './controller/replication-role.js';
import type { BrokerHA } from './ha/broker-ha.js';
import type { PullRequestHoldService } from './longpolling/pull-request-hold-service.js';
import { NamesrvRegistration } from './namesrv-client/namesrv-registration.js';
import { createStaticTopicForwarding } from './static-topic/static-topic-forwarder.js';
import { createPopService, settleApachePops, takeOverApachePops } from './pop/broker-pop-assembly.js';
import type { PopService } from './pop/pop-service.js';
import type { PopStateStore } from './pop/pop-state-store.js';
import { buildBrokerHandlerTable } from './processors/broker-handler-table.js';
import { createPullServing } from './processors/pull-serving.js';
import type { ScheduleMessageService } from './schedule/schedule-message-service.js';
import type { TimerMessageService } from './timer/timer-message-service.js';
import { RecallMessageService } from './timer/recall-message-service.js';
import { resolveTimerConfig } from './timer/timer-config.js';
import type { TimerMetrics } from './timer/timer-metrics.js';
import { TimerSlaveSync } from './timer/timer-sync.js';
import { buildTimerSyncHandlers } from './timer/timer-sync-handlers.js';
import { buildPopStateSyncHandler, PopSlaveSync } from './pop/pop-state-sync.js';
import { createTransactionService } from './transaction/broker-transaction-assembly.js';
import type { TransactionalMessageService } from './transaction/transactional-message-service.js';

/** Options of openBrokerParts() (broker-parts.ts: brokerConfig, clock, logger, store, fs...) and: */
export interface BrokerControllerOptions extends BrokerPartsOptions {
  /** Long-polling re-check period; default 5000 ms (shortPollingTimeMills without long polling). */
  pullHoldCheckIntervalMs?: number;
}

export class BrokerController {
  readonly config: BrokerConfig;
  readonly ctx: BrokerContext;
  readonly scheduleMessageService: ScheduleMessageService;
  readonly pullRequestHoldService: PullRequestHoldService;
  /** Half messages, commit/rollback (37) and check-back (39); shared with the gRPC front. */
  readonly transactionService: TransactionalMessageService;
  /** Pop consumption over <storePathRootDir>/pop: the one PopService both fronts use (pop/broker-pop-assembly.ts). */
  readonly popService: PopService;
  /** ACL 2.0 switches (authenticationEnabled, authorizationEnabled...). */
  readonly authConfig: AuthConfig;
  /** ACL 2.0 users and ACLs (config/users.json, acls.json), shared with the gRPC front. */
  readonly authMetadata: AuthMetadataManager;
  private readonly authRefusalHint: RemotingAuthGateOptions['refusalHint'] | null;
  /** Timer messages (src/broker/timer): null when timerWheelEnable=false. */
  readonly timerMessageService: TimerMessageService | null;
  /** The durable timer store (timerwheel, timerlog/, config/timercheck); null when timerWheelEnable=false. */
  readonly timerStore: TimerStore | null;
  /** Apache TimerMetrics (config/timermetrics) and timer counters; null when timerWheelEnable=false. */
  readonly timerMetrics: TimerMetrics | null;
  /** A slave's timer checkpoint/metrics sync (GET_TIMER_CHECK_POINT 60, GET_TIMER_METRICS 61). */
  private readonly timerSlaveSync: TimerSlaveSync | null;
  private readonly popStateSlaveSync: PopSlaveSync;
  /** RECALL_MESSAGE (370) and gRPC RecallMessage. */
  readonly recallMessageService: RecallMessageService;
  /** `tls.server.*` of broker.conf: the remoting port's TLS (also read by the gRPC front and HA). */
  readonly tls: TlsServerSettings;
  private readonly logger: Logger;
  private readonly rawConfig: Record<string, string>;
  private readonly popState: PopStateStore;
  private readonly handlers: Map<number, RequestHandler>;
  /** Broker-to-broker client of static topics (static-topic/static-topic-forwarder.ts). */
  private readonly staticTopicForwarding: ReturnType<typeof createStaticTopicForwarding>;
  private readonly arrivals: MessageArrivalFanout;
  private readonly topicLearner: ReplicaTopicLearner;
  private readonly periodicTasks: BrokerPeriodicTasks;
  private server: RemotingServer | null = null;
  private registration: NamesrvRegistration | null = null;
  /** Classic replication or controller mode (controller/replication-role.ts), set by start(). */
  private role: ReplicationRole | null = null;
  private state: 'created' | 'started' | 'stopping' | 'stopped' = 'created';
  private shutdownPromise: Promise<void> | null = null;

  private constructor(opts: BrokerControllerOptions, parts: BrokerParts) {
    const { config, ctx } = parts;
    this.config = config;
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.rawConfig = opts.brokerConfig;
    this.tls = parts.tls;
    this.authConfig = parts.auth.config;
    this.authMetadata = parts.auth.metadata;
    this.authRefusalHint = parts.auth.refusalHint;
    this.scheduleMessageService = parts.schedule;
    this.popState = parts.popState;
    this.timerStore = parts.timer.store;
    this.timerMessageService = parts.timer.service;
    this.timerMetrics = parts.timer.metrics;
    this.timerSlaveSync = parts.timer.service && parts.timer.metrics ? new TimerSlaveSync(parts.timer.service, parts.timer.metrics) : null;
    const { pull, holdService } = createPullServing(ctx, opts.pullHoldCheckIntervalMs);
    this.pullRequestHoldService = holdService;
    this.transactionService = createTransactionService(ctx, opts.brokerConfig);
    this.popService = createPopService(ctx, parts.popState, opts.brokerConfig);
    this.recallMessageService = new RecallMessageService(ctx, parts.timer.config);
    this.staticTopicForwarding = createStaticTopicForwarding({ namesrvAddr: this.config.namesrvAddr, rawConfig: opts.brokerConfig, authConfig: this.authConfig, logger: ctx.logger });
    this.handlers = buildBrokerHandlerTable({
      staticTopicForwarder: this.staticTopicForwarding.forwarder,
      ctx, rawConfig: opts.brokerConfig, pull, transactions: this.transactionService, popService: this.popService, schedule: parts.schedule,
      authMetadata: this.authMetadata, recall: this.recallMessageService, ...(opts.fs ? { fs: opts.fs } : {}),
      haStats: () => this.role?.ha?.stats() ?? null,
      confirmOffset: () => (this.controller ? (ctx.store.getConfirmOffset?.() ?? null) : null),
      stopping: () => this.state !== 'started',
    });
    for (const [code, h] of buildTimerSyncHandlers(parts.timer.store, parts.timer.metrics)) this.handlers.set(code, h);
    this.handlers.set(...buildPopStateSyncHandler(parts.popState));
    this.popStateSlaveSync = new PopSlaveSync(parts.popState, () => this.popService.isMaster, ctx.logger);
    this.periodicTasks = new BrokerPeriodicTasks(ctx, ctx.logger);
    this.arrivals = new MessageArrivalFanout({ timers: this.timerMessageService, holdService, popService: this.popService });
    this.arrivals.attach(ctx.store);
    // a replica learns the config of a topic whose messages it replicated (ha/replica-topic-learner.ts)
    this.topicLearner = new ReplicaTopicLearner({ ctx, syncTopicConfig: () => this.role?.syncTopicConfigNow() ?? Promise.resolve(false), logger: ctx.logger });
    pull.setUnknownTopicResolver((topic) => this.topicLearner.resolve(topic));
    this.arrivals.add((topic) => this.topicLearner.onDispatched(topic));
  }

  /** Another consumer front (gRPC) that wants to hear about dispatched messages. */
  addMessageArrivingListener(listener: (topic: string, queueId: number) => void): void {
    this.arrivals.add(listener);
  }

  /** The handler registered for a request code (in-process tests call processors through it). */
  handlerFor(code: number): RequestHandler | undefined {
    return this.handlers.get(code);
  }

  /** Resolves config, opens the store and loads all metadata. @throws ConfigError, ConfigFileCorruptError, store open errors. */
  static async create(opts: BrokerControllerOptions): Promise<BrokerController> {
    return new BrokerController(opts, await openBrokerParts(opts));
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
    return this.role?.ha ?? null;
  }

  /** Controller mode (elections on etcd, live role changes); null in classic mode or before start(). */
  get controller(): ControllerMode | null {
    return this.role?.controllerMode ?? null;
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
    const wiring = { config: this.config, rawConfig: this.rawConfig, ctx, logger: this.logger, tls: this.tls, authConfig: this.authConfig };
    const role = new ReplicationRole({ ...wiring, schedule: this.scheduleMessageService, transactions: this.transactionService, timers: this.timerMessageService, timerSync: this.timerSlaveSync, popStateSync: this.popStateSlaveSync });
    this.popService.setMaster(role.isMaster()); // before the first request: a slave pops nothing (Apache: revive on the master only)
    // Apache's pops in flight on this store (a migration): into the pop state before pops are served
    if (role.isMaster()) await takeOverApachePops(ctx, this.popState, this.rawConfig).catch((e: Error) => this.logger.error(`pop: taking over Apache's pops in flight failed: ${e.message}`));
    const server = createBrokerRemotingServer({ ...wiring, authMetadata: this.authMetadata, ...(this.authRefusalHint ? { authRefusalHint: this.authRefusalHint } : {}), handlerTables: [this.handlers, role.adminHandlers()] });
    await server.start();
    this.server = server;
    ctx.setListenPort(server.port);
    this.role = role;
    await role.start(server.port);
    this.popService.setMaster(role.isMaster());
    role.onRoleChange((r) => {
      this.popService.setMaster(r === 'MASTER'); // Apache changeSpecialServiceStatus → setPopReviveServiceStatus
      // a promoted replica serves every topic it holds messages of, also one whose config it never got
      if (r === 'MASTER' && ctx.topicConfigManager.recoverFromConsumeQueues(ctx.store.getTopicQueueTable()).length > 0) ctx.topicConfigManager.touch();
      this.registration?.registerNow();
    });

    this.pullRequestHoldService.start();
    ctx.brokerStats.start();
    await role.startWriterServices();
    this.timerMetrics?.startPersisting(resolveTimerConfig(this.rawConfig).timerFlushIntervalMs, (m) => this.logger.error(m));
    this.periodicTasks.start(this.config.flushConsumerOffsetInterval);
    this.registration = NamesrvRegistration.create({
      ...wiring,
      haServerAddr: () => role.haServerAddr(server.port),
      onRegistered: (outcomes) => role.onRegistered(outcomes),
    });
    await this.registration?.start();
    warnIfOpenWithoutAuth(server.host, server.port, this.authConfig, this.logger);
    this.logger.info(`broker ${this.config.brokerName} started at ${ctx.brokerAddr}`);
  }

  /** Idempotent; see the file comment for the order. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.state = 'stopping';
    this.periodicTasks.stop();
    const step = async (what: string, fn: () => Promise<unknown> | unknown): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        this.logger.error(`shutdown: ${what} failed: ${(e as Error).message}`);
      }
    };
    await step('unregister from nameservers', () => this.registration?.unregister());
    await step('stop slave synchronize', () => this.role?.ha?.shutdown());
    await step('leave the controller group', () => this.role?.controllerMode?.shutdown());
    await step('answer held pulls', () => this.pullRequestHoldService.shutdown());
    this.ctx.brokerStats.shutdown();
    this.popService.waitQueue.notifyAll();
    this.arrivals.detach(this.ctx.store);
    await step('stop remoting server', () => this.server?.shutdown());
    await step('stop schedule service', () => this.scheduleMessageService.shutdown());
    await step('stop timer service', () => this.timerMessageService?.shutdown());
    this.ctx.store.setRetentionHold?.(null);
    await step('close timer store', () => this.timerStore?.close());
    await step('persist timer metrics', () => this.timerMetrics?.shutdown());
    await step('stop transaction service', () => this.transactionService.shutdown());
    if (this.popService.isMaster) await step('commit Apache revive offsets', () => void settleApachePops(this.ctx, this.rawConfig));
    await step('close pop state', () => this.popState.close());
    await step('persist consumer offsets', () => this.ctx.consumerOffsetManager.persist());
    await step('persist topics', () => this.ctx.topicConfigManager.persist());
    await step('persist subscription groups', () => this.ctx.subscriptionGroupManager.persist());
    await step('close nameserver client', () => this.registration?.closeClient());
    await step('close static topic forwarding client', () => this.staticTopicForwarding.close());
    await step('shut down store', () => this.ctx.store.shutdown());
    this.state = 'stopped';
    this.logger.info(`broker ${this.config.brokerName} stopped`);
  }
}
