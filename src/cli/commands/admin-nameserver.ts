/**
 * Nameserver look-ups the `tsmq admin` commands share, as Apache's DefaultMQAdminExt does them:
 * the cluster info (GET_BROKER_CLUSTER_INFO 106) for "which brokers are in cluster X" and "which
 * address has broker name Y", and a topic's route (GET_ROUTEINFO_BY_TOPIC 105) for "which
 * brokers serve topic T". Broker ids follow RocketMQ: 0 is the master.
 */
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import { addressList, invokeAdmin, parseFastjson, successBody } from './admin-support.js';
export { withNamesrvOption } from './admin-support.js';
import { topicRouteOf, type TopicRouteJson } from './admin-topic-route.js';

/** One broker group of the cluster info: its cluster, name and `brokerId → host:port`. */
export interface BrokerGroup {
  cluster: string;
  brokerName: string;
  brokerAddrs: Record<string, string>;
}

/** ClusterInfo (the body of 106): broker groups by name, broker names by cluster. */
export interface ClusterInfo {
  brokerAddrTable: Record<string, BrokerGroup>;
  clusterAddrTable: Record<string, string[]>;
}

/** The cluster info from the first nameserver of `namesrv` (`host:port;host:port`) that answers. */
export async function fetchClusterInfo(namesrv: string, timeoutMs: number): Promise<ClusterInfo> {
  const { addr, response } = await invokeAdmin(addressList(namesrv, 'nameserver'), RequestCode.GET_BROKER_CLUSTER_INFO, null, timeoutMs);
  const body = parseFastjson(successBody(addr, response).toString('utf8')) as Partial<ClusterInfo> | null;
  if (!body || typeof body !== 'object') throw new Error(`${addr}: the cluster info reply is not an object`);
  return { brokerAddrTable: body.brokerAddrTable ?? {}, clusterAddrTable: body.clusterAddrTable ?? {} };
}

/**
 * Master addresses (broker id 0) of every broker group of `cluster`, ordered by broker name
 * (mqadmin CommandUtil.fetchMasterAddrByClusterName). @throws Error when the nameserver does
 * not know the cluster.
 */
export function masterAddrsOfCluster(info: ClusterInfo, cluster: string): string[] {
  const names = info.clusterAddrTable[cluster];
  if (!names) throw new Error(`cluster ${cluster} is not known to the nameserver (clusters: ${Object.keys(info.clusterAddrTable).sort().join(', ') || 'none'})`);
  return [...names]
    .sort()
    .map((n) => info.brokerAddrTable[n]?.brokerAddrs?.['0'])
    .filter((a): a is string => typeof a === 'string');
}

/**
 * The brokers an admin command writes: `-b` alone, or every master of `-c` via `-n` in broker-name
 * order (mqadmin: `-b` wins when both are given). @throws Error when neither is given, `-c` lacks
 * `-n`, the nameserver does not know the cluster, or the cluster has no master.
 */
export async function brokerOrClusterMasters(opts: { brokerAddr?: string; cluster?: string; namesrvAddr?: string }, timeoutMs: number): Promise<string[]> {
  if (opts.brokerAddr) return addressList(opts.brokerAddr, 'broker').slice(0, 1);
  if (!opts.cluster) throw new Error('give -b <broker address> or -c <cluster> (with -n <nameserver>)');
  if (!opts.namesrvAddr) throw new Error('-c needs -n <nameserver address> (or NAMESRV_ADDR)');
  const masters = masterAddrsOfCluster(await fetchClusterInfo(opts.namesrvAddr, timeoutMs), opts.cluster.trim());
  if (masters.length === 0) throw new Error(`cluster ${opts.cluster} has no master`);
  return masters;
}

/** Every address (masters and slaves) of the groups of `cluster`, by broker name then id. @throws as masterAddrsOfCluster. */
export function allAddrsOfCluster(info: ClusterInfo, cluster: string): string[] {
  const names = info.clusterAddrTable[cluster];
  if (!names) throw new Error(`cluster ${cluster} is not known to the nameserver`);
  return [...names].sort().flatMap((n) =>
    Object.entries(info.brokerAddrTable[n]?.brokerAddrs ?? {})
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, addr]) => addr),
  );
}

/** The route of `topic` from the nameserver(s). @throws Error `<addr> refused: code 17 …` for an unknown topic. */
export async function fetchTopicRoute(namesrv: string, topic: string, timeoutMs: number): Promise<TopicRouteJson> {
  const { addr, response } = await invokeAdmin(addressList(namesrv, 'nameserver'), RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, timeoutMs);
  return topicRouteOf(successBody(addr, response));
}

/**
 * The route a producer sends `topic` by, as Apache's DefaultMQProducer finds it: the topic's own,
 * or for a topic the nameserver does not know yet (17) the auto-create template TBW102's with
 * min(`defaultTopicQueueNums`, its queues) per broker (MQClientInstance
 * updateTopicRouteInfoFromNameServer with isDefault); the broker creates the topic on the first
 * send. @throws Error `<addr> refused: code 17 …` when TBW102 has no route either (auto-creation off).
 */
export async function fetchPublishRoute(namesrv: string, topic: string, timeoutMs: number, defaultTopicQueueNums: number): Promise<TopicRouteJson> {
  const addrs = addressList(namesrv, 'nameserver');
  const { addr, response } = await invokeAdmin(addrs, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, timeoutMs);
  if (response.code !== ResponseCode.TOPIC_NOT_EXIST) return topicRouteOf(successBody(addr, response));
  const template = await fetchTopicRoute(namesrv, TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, timeoutMs).catch(() => {
    throw new Error(`${addr} refused: code ${response.code} (TOPIC_NOT_EXIST)${response.remark ? `, ${response.remark}` : ''}`);
  });
  const queueDatas = template.queueDatas.map((q) => {
    const n = Math.min(defaultTopicQueueNums, q.readQueueNums);
    return { ...q, readQueueNums: n, writeQueueNums: n };
  });
  return { ...template, queueDatas };
}

/** `brokerName → master address` of a route, for groups that have a master. */
export function masterAddrsOfRoute(route: TopicRouteJson): Map<string, string> {
  const out = new Map<string, string>();
  for (const b of [...route.brokerDatas].sort((x, y) => (x.brokerName < y.brokerName ? -1 : x.brokerName > y.brokerName ? 1 : 0))) {
    const master = b.brokerAddrs?.['0'];
    if (master) out.set(b.brokerName, master);
  }
  return out;
}

/** The master address of `brokerName` in the route. @throws Error naming the broker when the route has no master for it. */
export function masterAddrOf(route: TopicRouteJson, brokerName: string, topic: string): string {
  const addr = masterAddrsOfRoute(route).get(brokerName);
  if (!addr) throw new Error(`broker ${brokerName} has no master in the route of topic ${topic}`);
  return addr;
}
