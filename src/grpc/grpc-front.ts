/**
 * GrpcFront: the RocketMQ 5 gRPC v2 front (`apache.rocketmq.v2.MessagingService`) served by tsmq
 * itself over the broker's services (BrokerContext). Wiring and lifecycle only.
 *
 * Usage (see docs/grpc.md):
 *   const front = await GrpcFront.create({ ctx: broker.ctx, pop: broker.popService, rawConfig, transactions?, logger? });
 *   await front.start();          // binds grpcListenHost:grpcListenPort (0 = free port)
 *   front.port;                   // port actually bound
 *   front.notifyMessageArriving(topic);   // call from the store's arrival listener
 *   await front.shutdown();       // before the broker's own shutdown
 *
 * create(): resolve config → build the transaction service when none is shared by the broker and
 * the handlers. Pop consumption uses the broker's PopService (the same durable state its remoting
 * POP_MESSAGE & co. use; the broker opens and closes it). Timer messages (delivery_timestamp) go
 * through the broker's put path and its durable timer wheel (src/broker/timer); RecallMessage uses
 * the broker's RecallMessageService when given. start(): transaction service (when owned), gRPC
 * server (accepting any grpc-timeout, see grpc-timeout-header.ts), session expiry, push-delivery
 * auto-renewal and release of the deliveries of departed clients. shutdown(): release held push
 * deliveries (visible after invisibleTimeMillisWhenClear), stop accepting calls (in-flight long polls are answered
 * MESSAGE_NOT_FOUND), transactions (when owned).
 */
import net from 'node:net';
import { TLS_ON_PLAINTEXT_PORT_LOG_KEY, sniffTls, tlsOnPlaintextPortWarning } from '../common/tls/tls-acceptor.js';
import { TLS_DISABLED, type TlsServerSettings } from '../common/tls/tls-server-config.js';
import * as path from 'node:path';
import type { BrokerController } from '../broker/broker-controller.js';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logging/logger.js';
import { createLogger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import { nodeFileSystem } from '../common/fs/node-file-system.js';
import type { BrokerContext } from '../broker/broker-context.js';
import type { PopService } from '../broker/pop/pop-service.js';
import { transactionBrokerOf } from '../broker/transaction/transaction-broker.js';
import { resolveTransactionConfig } from '../broker/transaction/transaction-config.js';
import { TransactionalMessageService } from '../broker/transaction/transactional-message-service.js';
import { RecallMessageService } from '../broker/timer/recall-message-service.js';
import { resolveTimerConfig } from '../broker/timer/timer-config.js';
import { ClientSessions } from './client-sessions.js';
import { GrpcClientRegistration } from './client-registration.js';
import { consumeHandlers } from './consume-handlers.js';
import { resolveGrpcConfig, type GrpcConfig } from './grpc-config.js';
import type { GrpcServices } from './grpc-services.js';
import { offsetHandlers } from './offset-handlers.js';
import { messagingServiceDefinition } from './proto/messaging-service.js';
import { routeHandlers } from './route-handlers.js';
import { sendHandlers } from './send-handlers.js';
import { grpcTransactionChecker, telemetryHandler } from './telemetry-handler.js';
import { createDeadlineTolerantServer } from './grpc-timeout-header.js';
import { ReceiptRenewer } from './receipt-renewer.js';
import { retryBackoffMs } from './settings-reply.js';
import { ClusterRoutes } from './cluster-route.js';
import { RemotingClient } from '../remoting/transport/remoting-client.js';
import { resolveTlsClientOptions } from '../common/tls/tls-client-config.js';
import { innerRequestSigner } from '../broker/auth/inner-request-signer.js';
import { splitNamesrvAddr } from '../broker/broker-config.js';
import { guardGrpcHandlers } from './grpc-auth.js';
import { namespaceHandlers } from './resource-namespace.js';
import { warnIfOpenWithoutAuth } from '../broker/auth/broker-auth-gate.js';
import type { AuthConfig } from '../auth/auth-config.js';
import type { AuthMetadata } from '../auth/auth-evaluator.js';
import { DEFAULT_BAD_INPUT_LOG_INTERVAL_MS, RateLimitedLog } from '../common/logging/rate-limited-log.js';
import { formatAddress } from '../remoting/transport/remoting-connection.js';

export interface GrpcFrontOptions {
  ctx: BrokerContext;
  /** The broker's pop consumption service (BrokerController.popService), shared with remoting pop. */
  pop: PopService;
  /** Raw broker.conf keys (gRPC and transaction keys are read from it). */
  rawConfig: Record<string, string>;
  /** The broker's transaction service, shared with END_TRANSACTION (37); created here when absent. */
  transactions?: TransactionalMessageService;
  /** The broker's recall service (BrokerController.recallMessageService); built from ctx and rawConfig when absent. */
  recall?: RecallMessageService;
  fs?: FileSystem;
  logger?: Logger;
  /** ACL 2.0 (BrokerController.authConfig / authMetadata); absent or both switches off: no checks. */
  auth?: { config: AuthConfig; metadata: AuthMetadata };
  /**
   * TLS of the gRPC port (the broker's `tls.server.*`, BrokerController.tls): enforcing serves
   * TLS only, permissive both on the same port (first byte 0x16 = TLS). Default: plain only.
   */
  tls?: TlsServerSettings;
  /** At most one warning per this many ms for TLS handshakes on the plain port (default 10000). */
  badInputLogIntervalMs?: number;
}

/** Period of the session expiry scan (ms): bounds how late a departed client is noticed. */
const SESSION_SCAN_MS = 1000;

export class GrpcFront {
  readonly config: GrpcConfig;
  readonly pop: PopService;
  readonly recall: RecallMessageService;
  readonly transactions: TransactionalMessageService;
  readonly sessions: ClientSessions;
  readonly clientRegistration: GrpcClientRegistration;
  readonly renewer: ReceiptRenewer;
  private readonly logger: Logger;
  private server: grpc.Server | null = null;
  /** Permissive or no TLS: our own listener, which hands each connection to one of these injectors. */
  private listener: net.Server | null = null;
  private injectors: Array<ReturnType<grpc.Server['createConnectionInjector']>> = [];
  /** Accepted connections still waiting for their first byte (closed by shutdown). */
  private readonly sniffing = new Set<net.Socket>();
  private boundPort = 0;
  private scanTimer: NodeJS.Timeout | null = null;
  /** Nameserver client of the cluster routes (null without namesrvAddr). */
  private routeClient: RemotingClient | null = null;
  private clusterRoutes: ClusterRoutes | undefined;
  private stopped = false;

  private constructor(
    private readonly opts: GrpcFrontOptions,
    private readonly ownsTransactions: boolean,
  ) {
    const ctx = opts.ctx;
    this.logger = opts.logger ?? createLogger('grpc');
    this.config = resolveGrpcConfig(opts.rawConfig);
    this.pop = opts.pop;
    this.clientRegistration = new GrpcClientRegistration(ctx.consumerManager, ctx.producerManager);
    this.sessions = new ClientSessions(
      () => ctx.clock.nowMs(),
      undefined,
      (session) => {
        this.clientRegistration.unregister(session);
        this.renewer.clearClient(session.clientId).catch((e: Error) => this.logger.error(`clearing deliveries of ${session.clientId}: ${e.message}`));
      },
      this.config.grpcClientStreamLostExpireMs,
    );
    this.renewer = new ReceiptRenewer({
      pop: this.pop,
      sessions: this.sessions,
      now: () => ctx.clock.nowMs(),
      intervalMs: this.config.grpcRenewIntervalMs,
      invisibleMs: this.config.grpcDefaultInvisibleTimeMs,
      maxRenewMs: this.config.grpcMaxRenewMs,
      retryDelayMs: (_group, reconsumeTimes) => retryBackoffMs(this.config, reconsumeTimes),
      invisibleMsWhenClear: this.config.invisibleTimeMillisWhenClear,
      logger: this.logger,
    });
    const namesrvAddrs = splitNamesrvAddr(ctx.config.namesrvAddr);
    if (namesrvAddrs.length > 0) {
      const tls = resolveTlsClientOptions(opts.rawConfig);
      this.routeClient = new RemotingClient({ logger: this.logger, ...(tls ? { tls } : {}), ...(opts.auth ? innerRequestSigner(opts.auth.config) : {}) });
      this.clusterRoutes = new ClusterRoutes({ client: this.routeClient, namesrvAddrs: () => namesrvAddrs, localBrokerName: ctx.config.brokerName, now: () => ctx.clock.nowMs(), logger: this.logger });
    }
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

  /**
   * Creates and starts the front beside a started broker when `grpcListenPort` ≥ 0 (default
   * 8081), sharing the broker's services: pop, transactions, recall and ACL. Null when disabled.
   * Used by `tsmq start`, `tsmq broker` and the library's `startBroker`. @throws ConfigError, listen errors.
   */
  static async startBeside(broker: BrokerController, rawConfig: Record<string, string>, logger?: Logger): Promise<GrpcFront | null> {
    if (!GrpcFront.isEnabled(rawConfig)) return null;
    // The broker's PopService already hears every dispatched message (no extra arrival listener).
    const front = await GrpcFront.create({
      ctx: broker.ctx,
      pop: broker.popService,
      rawConfig,
      transactions: broker.transactionService,
      recall: broker.recallMessageService,
      ...(logger ? { logger } : {}),
      auth: { config: broker.authConfig, metadata: broker.authMetadata },
      tls: broker.tls,
    });
    await front.start();
    return front;
  }

  /** Resolves config. @throws ConfigError. */
  static async create(opts: GrpcFrontOptions): Promise<GrpcFront> {
    resolveGrpcConfig(opts.rawConfig);
    const logger = opts.logger ?? createLogger('grpc');
    return new GrpcFront({ ...opts, logger }, opts.transactions === undefined);
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
      registration: this.clientRegistration,
      renewer: this.renewer,
      ...(this.clusterRoutes ? { clusterRoutes: this.clusterRoutes } : {}),
      logger: this.logger,
      port: () => this.boundPort,
      stopping: () => this.stopped,
    };
    const { server, deadlineClampInstalled } = createDeadlineTolerantServer({ 'grpc.max_receive_message_length': this.config.grpcMaxBodySizeBytes + 1024 * 1024 });
    if (!deadlineClampInstalled) {
      this.logger.warn('the installed @grpc/grpc-js has no createHttp2Server hook: calls with a grpc-timeout over 24.8 days (rocketmq-client-java 5.0.x Telemetry) end at once with DEADLINE_EXCEEDED');
    }
    const handlers: Record<string, grpc.UntypedHandleCall> = {
      ...routeHandlers(services),
      ...sendHandlers(services),
      ...consumeHandlers(services),
      ...offsetHandlers(services),
      Telemetry: telemetryHandler(services),
    };
    const auth = this.opts.auth;
    const guarded = auth && (auth.config.authenticationEnabled || auth.config.authorizationEnabled)
      ? guardGrpcHandlers(handlers, { config: auth.config, metadata: auth.metadata, refusalLog: new RateLimitedLog(this.logger) })
      : handlers;
    server.addService(messagingServiceDefinition(), namespaceHandlers(guarded));
    const tls = this.opts.tls ?? TLS_DISABLED;
    if (tls.mode === 'enforcing') {
      const addr = `${this.config.grpcListenHost}:${this.config.grpcListenPort}`;
      this.boundPort = await new Promise<number>((resolve, reject) =>
        server.bindAsync(addr, grpcSslCredentials(tls), (err, port) => (err ? reject(err) : resolve(port))),
      );
    } else {
      this.boundPort = await this.listenSniffing(server, tls);
    }
    this.server = server;
    this.scanTimer = setInterval(() => this.sessions.expire(), SESSION_SCAN_MS);
    this.scanTimer.unref();
    this.renewer.start();
    this.logger.info(`gRPC front listening on ${this.config.grpcListenHost}:${this.boundPort}${tls.mode === 'disabled' ? '' : ` (TLS ${tls.mode})`}`);
    // as the remoting port: `tsmq broker` keeps Apache's every-interface default, so say when that is open to anyone
    warnIfOpenWithoutAuth(this.config.grpcListenHost, this.boundPort, { authenticationEnabled: auth?.config.authenticationEnabled ?? false }, this.logger, 'grpc');
  }

  /**
   * tls.server.mode permissive or disabled: a net.Server of ours reads each connection's first byte
   * (tls-acceptor.ts sniffTls, 30 s limit) and injects the connection into grpc-js through the TLS
   * or the plain connection injector. Permissive: one port for TLS and plain HTTP/2. Disabled:
   * plain only; a TLS ClientHello (e.g. rocketmq-client-java 5, whose enableSsl defaults to true)
   * is closed with a rate-limited warning naming the peer and the fix (the client itself only
   * sees NotSslRecordException). Returns the bound port.
   */
  private async listenSniffing(server: grpc.Server, tls: TlsServerSettings): Promise<number> {
    const secure = tls.mode === 'permissive' ? server.createConnectionInjector(grpcSslCredentials(tls)) : null;
    const plain = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    this.injectors = secure ? [secure, plain] : [plain];
    const refusals = new RateLimitedLog(this.logger, this.opts.badInputLogIntervalMs ?? DEFAULT_BAD_INPUT_LOG_INTERVAL_MS);
    const listener = net.createServer((socket) => {
      this.sniffing.add(socket);
      socket.once('close', () => this.sniffing.delete(socket));
      sniffTls(socket, 30_000, (isTls) => {
        this.sniffing.delete(socket);
        socket.on('error', () => socket.destroy()); // a reset is the peer's loss only
        if (!isTls) plain.injectConnection(socket);
        else if (secure) secure.injectConnection(socket);
        else {
          refusals.warn(TLS_ON_PLAINTEXT_PORT_LOG_KEY, tlsOnPlaintextPortWarning('gRPC', formatAddress(socket.remoteAddress, socket.remotePort)));
          socket.destroy();
        }
      });
    });
    listener.on('error', (e) => this.logger.error(`gRPC listener error: ${e.message}`));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(this.config.grpcListenPort, this.config.grpcListenHost, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    this.listener = listener;
    return (listener.address() as net.AddressInfo).port;
  }

  /** Idempotent. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.scanTimer) clearInterval(this.scanTimer);
    await this.renewer.stop().catch((e: Error) => this.logger.error(`releasing held deliveries: ${e.message}`));
    // our listener stops accepting at once; its close callback waits for every connection it
    // accepted, i.e. for the injected sessions below to end, so it is awaited last (bounded)
    const listener = this.listener;
    const listenerClosed = listener ? new Promise<void>((resolve) => listener.close(() => resolve())) : Promise.resolve();
    for (const injector of this.injectors) injector.drain(1000);
    for (const socket of this.sniffing) socket.destroy();
    const server = this.server;
    if (server) {
      this.pop.waitQueue.notifyAll();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          for (const injector of this.injectors) injector.destroy();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          for (const injector of this.injectors) injector.destroy();
          clearTimeout(force);
          resolve();
        });
      });
    }
    await Promise.race([listenerClosed, new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())]);
    await this.routeClient?.close().catch(() => {});
    if (this.ownsTransactions) await this.transactions.shutdown().catch((e: Error) => this.logger.error(`transactions shutdown: ${e.message}`));
    this.logger.info('gRPC front stopped');
  }
}

/** grpc-js server credentials from the `tls.server.*` settings (mode permissive or enforcing). */
function grpcSslCredentials(tls: TlsServerSettings): grpc.ServerCredentials {
  return grpc.ServerCredentials.createSsl(tls.trustPem, [{ private_key: tls.keyPem!, cert_chain: tls.certPem! }], tls.clientAuth === 'require');
}
