/**
 * GrpcFront: the RocketMQ 5 gRPC v2 front (`apache.rocketmq.v2.MessagingService`) served by tsmq
 * itself over the broker's services (BrokerContext). Wiring and lifecycle only.
 *
 * Usage (see docs/grpc.md):
 *   const front = await GrpcFront.create({ ctx: broker.ctx, rawConfig, transactions?, logger? });
 *   await front.start();          // binds grpcListenHost:grpcListenPort (0 = free port)
 *   front.port;                   // port actually bound
 *   front.notifyMessageArriving(topic);   // call from the store's arrival listener
 *   await front.shutdown();       // before the broker's own shutdown
 *
 * create(): resolve config → open the durable pop state (<storePathRootDir>/pop) → build
 * PopService, the transaction service when none is shared by the broker, the handlers. Timer
 * messages (delivery_timestamp) go through the broker's put path and its durable timer wheel
 * (src/broker/timer); RecallMessage uses the broker's RecallMessageService when given.
 * start(): transaction service (when owned), gRPC server, session expiry, push-delivery
 * auto-renewal. shutdown(): stop accepting calls (in-flight long polls are answered
 * MESSAGE_NOT_FOUND), transactions (when owned), pop state close (flush + compaction).
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logging/logger.js';
import { createLogger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import { nodeFileSystem } from '../common/fs/node-file-system.js';
import type { BrokerContext } from '../broker/broker-context.js';
import { popBrokerOf } from '../broker/pop/pop-broker.js';
import { resolvePopConfig } from '../broker/pop/pop-config.js';
import { PopService } from '../broker/pop/pop-service.js';
import { PopStateStore } from '../broker/pop/pop-state-store.js';
import { transactionBrokerOf } from '../broker/transaction/transaction-broker.js';
import { resolveTransactionConfig } from '../broker/transaction/transaction-config.js';
import { TransactionalMessageService } from '../broker/transaction/transactional-message-service.js';
import { RecallMessageService } from '../broker/timer/recall-message-service.js';
import { resolveTimerConfig } from '../broker/timer/timer-config.js';
import { ClientSessions } from './client-sessions.js';
import { consumeHandlers } from './consume-handlers.js';
import { resolveGrpcConfig, type GrpcConfig } from './grpc-config.js';
import type { GrpcServices } from './grpc-services.js';
import { offsetHandlers } from './offset-handlers.js';
import { messagingServiceDefinition } from './proto/messaging-service.js';
import { routeHandlers } from './route-handlers.js';
import { sendHandlers } from './send-handlers.js';
import { grpcTransactionChecker, telemetryHandler } from './telemetry-handler.js';
import { ReceiptRenewer } from './receipt-renewer.js';

export interface GrpcFrontOptions {
  ctx: BrokerContext;
  /** Raw broker.conf keys (gRPC, pop and transaction keys are read from it). */
  rawConfig: Record<string, string>;
  /** The broker's transaction service, shared with END_TRANSACTION (37); created here when absent. */
  transactions?: TransactionalMessageService;
  /** The broker's recall service (BrokerController.recallMessageService); built from ctx and rawConfig when absent. */
  recall?: RecallMessageService;
  fs?: FileSystem;
  logger?: Logger;
}

const SESSION_SCAN_MS = 10_000;

export class GrpcFront {
  readonly config: GrpcConfig;
  readonly pop: PopService;
  readonly recall: RecallMessageService;
  readonly transactions: TransactionalMessageService;
  readonly sessions: ClientSessions;
  readonly renewer: ReceiptRenewer;
  private readonly logger: Logger;
  private server: grpc.Server | null = null;
  private boundPort = 0;
  private scanTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  private constructor(
    private readonly opts: GrpcFrontOptions,
    private readonly state: PopStateStore,
    private readonly ownsTransactions: boolean,
  ) {
    const ctx = opts.ctx;
    this.logger = opts.logger ?? createLogger('grpc');
    this.config = resolveGrpcConfig(opts.rawConfig);
    const popConfig = resolvePopConfig(opts.rawConfig);
    this.pop = new PopService({ broker: popBrokerOf(ctx), state, config: popConfig, clock: ctx.clock, logger: this.logger });
    this.sessions = new ClientSessions(() => ctx.clock.nowMs());
    this.renewer = new ReceiptRenewer({
      pop: this.pop,
      sessions: this.sessions,
      now: () => ctx.clock.nowMs(),
      intervalMs: this.config.grpcRenewIntervalMs,
      invisibleMs: this.config.grpcDefaultInvisibleTimeMs,
      maxRenewMs: this.config.grpcMaxRenewMs,
      logger: this.logger,
    });
    this.recall = opts.recall ?? new RecallMessageService(ctx, resolveTimerConfig(opts.rawConfig));
    this.transactions =
      opts.transactions ??
      new TransactionalMessageService({
        broker: transactionBrokerOf(ctx),
        config: resolveTransactionConfig(opts.rawConfig),
        clock: ctx.clock,
        logger: this.logger,
        onCommitted: (t) => this.pop.notifyMessageArrived(t),
      });
    this.transactions.addChecker(grpcTransactionChecker(this.sessions));
  }

  /** False when `grpcListenPort` is -1 (the gRPC front is switched off). @throws ConfigError on a bad value. */
  static isEnabled(rawConfig: Record<string, string>): boolean {
    return resolveGrpcConfig(rawConfig).grpcListenPort >= 0;
  }

  /** Resolves config and opens the pop state. @throws ConfigError, or Error for a corrupt pop snapshot. */
  static async create(opts: GrpcFrontOptions): Promise<GrpcFront> {
    const ctx = opts.ctx;
    const popConfig = resolvePopConfig(opts.rawConfig);
    resolveGrpcConfig(opts.rawConfig);
    const logger = opts.logger ?? createLogger('grpc');
    const state = PopStateStore.open({
      dir: path.join(ctx.config.storePathRootDir, 'pop'),
      fs: opts.fs ?? nodeFileSystem,
      clock: ctx.clock,
      logger,
      flushIntervalMs: popConfig.popFlushIntervalMs,
      syncFlush: popConfig.popSyncFlush,
      compactLogBytes: popConfig.popCompactLogBytes,
    });
    return new GrpcFront({ ...opts, logger }, state, opts.transactions === undefined);
  }

  /** Port actually bound. @throws before start(). */
  get port(): number {
    if (!this.server) throw new Error('gRPC front is not started');
    return this.boundPort;
  }

  /** A message was dispatched to `topic`: wake receives parked on it. */
  notifyMessageArriving(topic: string): void {
    this.pop.notifyMessageArrived(topic);
  }

  /** @throws Error when the port cannot be bound or the front is switched off (grpcListenPort -1). */
  async start(): Promise<void> {
    if (this.config.grpcListenPort < 0) throw new Error('the gRPC front is switched off (grpcListenPort=-1)');
    if (this.ownsTransactions) await this.transactions.start();
    const services: GrpcServices = {
      ctx: this.opts.ctx,
      config: this.config,
      pop: this.pop,
      recall: this.recall,
      transactions: this.transactions,
      sessions: this.sessions,
      renewer: this.renewer,
      logger: this.logger,
      port: () => this.boundPort,
      stopping: () => this.stopped,
    };
    const server = new grpc.Server({ 'grpc.max_receive_message_length': this.config.grpcMaxBodySizeBytes + 1024 * 1024 });
    server.addService(messagingServiceDefinition(), {
      ...routeHandlers(services),
      ...sendHandlers(services),
      ...consumeHandlers(services),
      ...offsetHandlers(services),
      Telemetry: telemetryHandler(services),
    });
    const addr = `${this.config.grpcListenHost}:${this.config.grpcListenPort}`;
    this.boundPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(addr, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
    this.server = server;
    this.scanTimer = setInterval(() => this.sessions.expire(), SESSION_SCAN_MS);
    this.scanTimer.unref();
    this.renewer.start();
    this.logger.info(`gRPC front listening on ${this.config.grpcListenHost}:${this.boundPort}`);
  }

  /** Idempotent. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.scanTimer) clearInterval(this.scanTimer);
    this.renewer.stop();
    const server = this.server;
    if (server) {
      this.pop.waitQueue.notifyAll();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    }
    if (this.ownsTransactions) await this.transactions.shutdown().catch((e: Error) => this.logger.error(`transactions shutdown: ${e.message}`));
    await this.state.close().catch((e: Error) => this.logger.error(`pop state close: ${e.message}`));
    this.logger.info('gRPC front stopped');
  }
}
