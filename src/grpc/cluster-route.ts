/**
 * The other brokers of a topic, for QueryRoute and QueryAssignment, as Apache's proxy in LOCAL
 * mode (`enableProxy=true` in the broker, LocalTopicRouteService.getTopicRouteForProxy) answers:
 * the topic's route comes from the nameservers (GET_ROUTEINFO_BY_TOPIC 105), and every broker of
 * it is reached at the host of its master's address (brokerAddrs["0"], i.e. its brokerIP1) with
 * THIS front's gRPC port: Apache's port convention, every broker's proxy listens on the same
 * grpcServerPort. Sends and receives are then made by the client at that broker's own front;
 * a front only ever serves its own broker's queues (Apache getCurrentMessageQueueView).
 *
 * Routes are cached for `cacheMs` (Apache's proxy caches topic routes and reloads them in the
 * background; tsmq reloads on the first QueryRoute after the cache time). A topic the nameserver
 * does not know (17) gives the other brokers of TBW102 (`autoCreateBrokers`); a nameserver that
 * does not answer, or no TBW102 route, gives no other brokers (the front then answers with its
 * own queues alone): never an error to the client.
 */
import type { RemotingCommand } from '../remoting/protocol/remoting-command.js';
import { createRequestCommand } from '../remoting/protocol/commands.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { ResponseCode } from '../remoting/codes/response-code.js';
import { parseLenientJson } from '../broker/config-file/lenient-json.js';
import type { Logger } from '../common/logging/logger.js';
import { TopicValidator } from '../common/message/topic-validator.js';

/** One other broker's queues of a topic and where its gRPC front is. */
export interface RemoteBrokerQueues {
  brokerName: string;
  /** Host of the broker's master address (its brokerIP1). */
  host: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
}

export interface RouteClient {
  invokeSync(addr: string, request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand>;
}

export interface ClusterRouteOptions {
  client: RouteClient;
  /** Nameserver addresses ("host:port"), asked in order; empty = no cluster routing. */
  namesrvAddrs: () => string[];
  /** This broker's name (its queues come from its own topic config, not from here). */
  localBrokerName: string;
  now: () => number;
  /** Route cache time (ms, default 20000). */
  cacheMs?: number;
  /** Per-nameserver call timeout (ms, default 3000). */
  timeoutMs?: number;
  logger: Logger;
}

interface TopicRouteJson {
  queueDatas?: Array<{ brokerName?: string; readQueueNums?: number; writeQueueNums?: number; perm?: number }>;
  brokerDatas?: Array<{ brokerName?: string; brokerAddrs?: Record<string, string> }>;
}

export class ClusterRoutes {
  private readonly cache = new Map<string, { atMs: number; brokers: RemoteBrokerQueues[] }>();

  constructor(private readonly opts: ClusterRouteOptions) {}

  /** The other brokers holding `topic` (none when no nameserver is configured or none answers). */
  async otherBrokers(topic: string): Promise<RemoteBrokerQueues[]> {
    const hit = this.cache.get(topic);
    if (hit && this.opts.now() - hit.atMs < (this.opts.cacheMs ?? 20_000)) return hit.brokers;
    const brokers = await this.load(topic);
    this.cache.set(topic, { atMs: this.opts.now(), brokers });
    return brokers;
  }

  private async load(topic: string): Promise<RemoteBrokerQueues[]> {
    for (const ns of this.opts.namesrvAddrs()) {
      try {
        const res = await this.opts.client.invokeSync(ns, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), this.opts.timeoutMs ?? 3000);
        if (res.code === ResponseCode.TOPIC_NOT_EXIST) return await this.autoCreateBrokers(ns);
        if (res.code !== ResponseCode.SUCCESS || !res.body) continue;
        return remoteBrokersOf(parseLenientJson(res.body.toString('utf8')) as TopicRouteJson, this.opts.localBrokerName);
      } catch (e) {
        this.opts.logger.warn(`topic route of ${topic} from nameserver ${ns}: ${(e as Error).message}`);
      }
    }
    return [];
  }

  /**
   * For a topic the nameserver does not know (17): the other brokers of the auto-create template
   * TBW102 with min(4, its write queues) queues and its perm without the inherit bit, what a
   * client sending to the new topic uses and those brokers create it with (Apache's clients fall
   * back the same way; the nameserver answers this route itself only to clients below V4_0_0).
   * None when TBW102 has no route (autoCreateTopicEnable off).
   */
  private async autoCreateBrokers(ns: string): Promise<RemoteBrokerQueues[]> {
    const res = await this.opts.client.invokeSync(ns, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC }), this.opts.timeoutMs ?? 3000);
    if (res.code !== ResponseCode.SUCCESS || !res.body) return [];
    return remoteBrokersOf(parseLenientJson(res.body.toString('utf8')) as TopicRouteJson, this.opts.localBrokerName).map((b) => {
      const n = Math.min(AUTO_CREATE_QUEUE_NUMS, b.writeQueueNums);
      return { ...b, readQueueNums: n, writeQueueNums: n, perm: b.perm & ~PERM_INHERIT };
    });
  }
}

/** Queues a client gives a topic it sends to before it exists (DefaultMQProducer defaultTopicQueueNums). */
const AUTO_CREATE_QUEUE_NUMS = 4;
/** PermName.PERM_INHERIT: TBW102's mark, not passed on to the topics created from it. */
const PERM_INHERIT = 1;

/** The brokers of a route other than `localBrokerName` that have a master address. */
export function remoteBrokersOf(route: TopicRouteJson, localBrokerName: string): RemoteBrokerQueues[] {
  const out: RemoteBrokerQueues[] = [];
  for (const q of route.queueDatas ?? []) {
    if (!q.brokerName || q.brokerName === localBrokerName) continue;
    const master = route.brokerDatas?.find((b) => b.brokerName === q.brokerName)?.brokerAddrs?.['0'];
    if (!master) continue;
    const host = master.slice(0, master.lastIndexOf(':')).replace(/^\[|\]$/g, '');
    out.push({ brokerName: q.brokerName, host, readQueueNums: q.readQueueNums ?? 0, writeQueueNums: q.writeQueueNums ?? 0, perm: q.perm ?? 0 });
  }
  return out.sort((a, b) => a.brokerName.localeCompare(b.brokerName));
}
