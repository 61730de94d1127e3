/**
 * `tsmq admin topic-route -n <host:port[;host:port]> -t <topic>`: the topic's route from the
 * nameserver (mqadmin `topicRoute`, request code GET_ROUTEINFO_BY_TOPIC = 105) as a table, one
 * row per broker: cluster, broker name, addresses (brokerId=host:port), read/write queues, perm,
 * then a Total line. `--json`: the route data as the nameserver sent it (brokerDatas, queueDatas,
 * filterServerTable). A topic the nameserver does not know: `<addr> refused: code 17
 * (TOPIC_NOT_EXIST), No topic route info in name server for the topic: <topic>`, exit 1, as
 * mqadmin against Apache (tsmq's nameserver answers the TBW102 route only to ali-ons,
 * get-route-info-by-topic.ts).
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { addressList, adminCommand, invokeAdmin, parseFastjson, printJson, renderTable, successBody, timeoutOf, withCommonOptions, withNamesrvOption, type CommonAdminOptions } from './admin-support.js';

export interface TopicRouteOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
}

interface BrokerDataJson {
  cluster?: string;
  brokerName: string;
  brokerAddrs?: Record<string, string>;
}

interface QueueDataJson {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
}

export interface TopicRouteJson {
  brokerDatas: BrokerDataJson[];
  queueDatas: QueueDataJson[];
  [k: string]: unknown;
}

/** Reads a TopicRouteData body. @throws Error for another shape. */
export function topicRouteOf(body: Buffer): TopicRouteJson {
  const r = parseFastjson(body.toString('utf8')) as Partial<TopicRouteJson> | null;
  if (!r || !Array.isArray(r.brokerDatas) || !Array.isArray(r.queueDatas)) throw new Error('the reply body is not route data (brokerDatas, queueDatas)');
  return r as TopicRouteJson;
}

/** Table lines for a route (brokers sorted by name). */
export function routeTable(route: TopicRouteJson): string[] {
  const queues = new Map(route.queueDatas.map((q) => [q.brokerName, q]));
  const brokers = [...route.brokerDatas].sort((a, b) => (a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0));
  let read = 0;
  let write = 0;
  const rows: Array<Array<string | number>> = [];
  for (const b of brokers) {
    const q = queues.get(b.brokerName);
    read += q?.readQueueNums ?? 0;
    write += q?.writeQueueNums ?? 0;
    const addrs = Object.entries(b.brokerAddrs ?? {})
      .sort(([x], [y]) => Number(x) - Number(y))
      .map(([id, a]) => `${id}=${a}`)
      .join(',');
    rows.push([b.cluster ?? '', b.brokerName, addrs, q?.readQueueNums ?? '-', q?.writeQueueNums ?? '-', q?.perm ?? '-']);
  }
  rows.push(['Total:', brokers.length, '', read, write, '']);
  const lines = renderTable(['#ClusterName', '#BrokerName', '#BrokerAddrs', '#ReadQueue', '#WriteQueue', '#Perm'], rows);
  lines.splice(lines.length - 1, 0, '');
  return lines;
}

export async function runTopicRoute(opts: TopicRouteOptions): Promise<void> {
  const topic = opts.topic.trim();
  const timeoutMs = timeoutOf(opts);
  const { addr, response } = await invokeAdmin(addressList(opts.namesrvAddr, 'nameserver'), RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, timeoutMs);
  const route = topicRouteOf(successBody(addr, response));
  if (opts.json) {
    printJson(route);
    return;
  }
  for (const line of routeTable(route)) console.log(line);
}

export function registerAdminTopicRoute(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('topic-route').description("show a topic's route from the nameserver (mqadmin topicRoute, request code 105)")).requiredOption(
      '-t, --topic <topic>',
      'topic name',
    ),
  ).action(runTopicRoute);
}
