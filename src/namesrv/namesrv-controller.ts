/**
 * Nameserver process role (Apache NamesrvController): a RemotingServer with the nameserver
 * processors, the route tables, and a scan every 5 s that drops brokers silent for 120 s.
 * A broker whose registering connection closes is dropped at once.
 */
import type { Clock } from '../common/time/clock.js';
import { systemClock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import { silentLogger } from '../common/logging/logger.js';
import { RemotingServer } from '../remoting/transport/remoting-server.js';
import type { RemotingServerLimits } from '../remoting/transport/remoting-server-config.js';
import type { RegistrationLimits } from './route/registration-limits.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { KvConfigManager } from './kv/kv-config-manager.js';
import { RouteInfoManager, type RouteInfoManagerOptions } from './route/route-info-manager.js';
import type { NamesrvContext } from './namesrv-context.js';
import { registerBrokerProcessor } from './processors/register-broker.js';
import { unregisterBrokerProcessor } from './processors/unregister-broker.js';
import { getRouteInfoByTopicProcessor } from './processors/get-route-info-by-topic.js';
import { getBrokerClusterInfoProcessor } from './processors/get-broker-cluster-info.js';
import { getAllTopicListProcessor } from './processors/get-all-topic-list.js';
import { deleteTopicInNamesrvProcessor } from './processors/delete-topic-in-namesrv.js';
import { putKvConfigProcessor } from './processors/put-kv-config.js';
import { getKvConfigProcessor } from './processors/get-kv-config.js';
import { deleteKvConfigProcessor } from './processors/delete-kv-config.js';
import { getKvListByNamespaceProcessor } from './processors/get-kvlist-by-namespace.js';
import { queryDataVersionProcessor } from './processors/query-data-version.js';
import { brokerHeartbeatProcessor } from './processors/broker-heartbeat.js';
import type { TlsServerSettings } from '../common/tls/tls-server-config.js';
import type { RequestGate } from '../remoting/transport/request-gate.js';
import { writePermOfBrokerProcessor } from './processors/write-perm-of-broker.js';
import { getTopicsByClusterProcessor } from './processors/get-topics-by-cluster.js';
import { getNamesrvConfigProcessor, updateNamesrvConfigProcessor } from './processors/namesrv-config.js';
import { NamesrvConfigTable } from './config/namesrv-config-table.js';
import { getSystemTopicListProcessor } from './processors/get-system-topic-list.js';

export interface NamesrvControllerOptions {
  /** 9876 by convention; 0 picks a free port. */
  listenPort: number;
  host?: string;
  clock?: Clock;
  logger?: Logger;
  /** Default 5000 (Apache scanNotActiveBrokerInterval). */
  scanNotActiveBrokerIntervalMs?: number;
  /** Route table options (broker expiry, default queue count for auto-created topics...). */
  routes?: Omit<RouteInfoManagerOptions, 'clock' | 'logger'>;
  maxFrameBytes?: number;
  /** Connection limits of the remoting server (remoting-server-config.ts); defaults apply when absent. */
  limits?: RemotingServerLimits;
  /** REGISTER_BROKER bounds; default DEFAULT_REGISTRATION_LIMITS. */
  registrationLimits?: RegistrationLimits;
  /** `tls.server.*` settings (common/tls/tls-server-config.ts); default: TLS disabled. */
  tls?: TlsServerSettings;
  /** Check run before every handler (ACL authentication, `tsmq start`); default none. */
  requestGate?: RequestGate;
}

export class NamesrvController {
  readonly routes: RouteInfoManager;
  readonly kv = new KvConfigManager();
  readonly server: RemotingServer;
  /** What GET_NAMESRV_CONFIG shows (Apache NamesrvConfig + NettyServerConfig names). */
  readonly config: NamesrvConfigTable;
  private readonly logger: Logger;
  private scanTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: NamesrvControllerOptions) {
    this.logger = opts.logger ?? silentLogger;
    const clock = opts.clock ?? systemClock;
    this.routes = new RouteInfoManager({ ...opts.routes, clock, logger: this.logger });
    this.server = new RemotingServer({
      listenPort: opts.listenPort,
      host: opts.host,
      logger: this.logger,
      name: 'namesrv',
      maxFrameBytes: opts.maxFrameBytes,
      ...opts.limits,
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.requestGate ? { requestGate: opts.requestGate } : {}),
    });
    this.config = new NamesrvConfigTable({
      listenPort: String(opts.listenPort),
      bindAddress: opts.host ?? '0.0.0.0',
      scanNotActiveBrokerInterval: String(opts.scanNotActiveBrokerIntervalMs ?? 5000),
      defaultTopicQueueNums: String(opts.routes?.defaultTopicQueueNums ?? 4),
      deleteTopicWithBrokerRegistration: String(opts.routes?.deleteTopicWithBrokerRegistration ?? false),
      orderMessageEnable: 'false',
      clusterTest: 'false',
      productEnvName: 'center',
      serverChannelMaxIdleTimeSeconds: '120',
    });
    this.registerProcessors({ routes: this.routes, kv: this.kv, logger: this.logger, config: this.config });
    this.server.onChannelClose((ch) => {
      this.routes.onChannelDestroy(ch.id);
    });
  }

  get port(): number {
    return this.server.port;
  }

  async start(): Promise<void> {
    await this.server.start();
    const interval = this.opts.scanNotActiveBrokerIntervalMs ?? 5000;
    this.scanTimer = setInterval(() => this.scanNotActiveBroker(), interval);
    this.scanTimer.unref();
  }

  /** One expiry pass (also run by the timer); closes the connections of dropped brokers. */
  scanNotActiveBroker(): void {
    for (const removed of this.routes.scanNotActiveBroker()) {
      if (!removed.channelId) continue;
      this.server.channels.find((ch) => ch.id === removed.channelId)?.close();
    }
  }

  async shutdown(): Promise<void> {
    if (this.scanTimer) clearInterval(this.scanTimer);
    this.scanTimer = null;
    await this.server.shutdown();
  }

  private registerProcessors(ctx: NamesrvContext): void {
    const s = this.server;
    s.registerProcessor(RequestCode.PUT_KV_CONFIG, putKvConfigProcessor(ctx));
    s.registerProcessor(RequestCode.GET_KV_CONFIG, getKvConfigProcessor(ctx));
    s.registerProcessor(RequestCode.DELETE_KV_CONFIG, deleteKvConfigProcessor(ctx));
    s.registerProcessor(RequestCode.GET_KVLIST_BY_NAMESPACE, getKvListByNamespaceProcessor(ctx));
    s.registerProcessor(RequestCode.REGISTER_BROKER, registerBrokerProcessor(ctx, this.opts.registrationLimits));
    s.registerProcessor(RequestCode.UNREGISTER_BROKER, unregisterBrokerProcessor(ctx));
    s.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfoByTopicProcessor(ctx));
    s.registerProcessor(RequestCode.GET_BROKER_CLUSTER_INFO, getBrokerClusterInfoProcessor(ctx));
    s.registerProcessor(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, getAllTopicListProcessor(ctx));
    s.registerProcessor(RequestCode.DELETE_TOPIC_IN_NAMESRV, deleteTopicInNamesrvProcessor(ctx));
    s.registerProcessor(RequestCode.QUERY_DATA_VERSION, queryDataVersionProcessor(ctx));
    s.registerProcessor(RequestCode.BROKER_HEARTBEAT, brokerHeartbeatProcessor(ctx));
    s.registerProcessor(RequestCode.WIPE_WRITE_PERM_OF_BROKER, writePermOfBrokerProcessor(ctx, 'wipe'));
    s.registerProcessor(RequestCode.ADD_WRITE_PERM_OF_BROKER, writePermOfBrokerProcessor(ctx, 'add'));
    s.registerProcessor(RequestCode.GET_TOPICS_BY_CLUSTER, getTopicsByClusterProcessor(ctx));
    s.registerProcessor(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, getSystemTopicListProcessor(ctx));
    s.registerProcessor(RequestCode.GET_NAMESRV_CONFIG, getNamesrvConfigProcessor(ctx));
    s.registerProcessor(RequestCode.UPDATE_NAMESRV_CONFIG, updateNamesrvConfigProcessor(ctx));
  }
}
