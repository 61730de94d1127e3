/**
 * `tsmq admin topic-route -n <host:port[;host:port]> -t <topic>`: the topic's route from the
 * nameserver (mqadmin `topicRoute`, request code GET_ROUTEINFO_BY_TOPIC = 105) as a table, one
 * row per broker: cluster, broker name, addresses (brokerId=host:port), read/write queues, perm,
 * then a Total line. `--json`: the route data as the nameserver sent it (brokerDatas, queueDatas,
 * filterServerTable) plus `autoRoute`. A topic missing from the nameserver's topic list (206)
 * still gets the route the nameserver answers (TBW102's auto-create route, exit 0), with a note
 * under the table and `"autoRoute": true` in --json; `"autoRoute": false` for a listed topic.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import { addressList, adminCommand, invokeAdmin, parseFastjson, printJson, renderTable, successBody, timeoutOf, withCommonOptions, withNamesrvOption, type CommonAdminOptions } from './admin-support.js';
import { topicListOf } from './admin-topic-list.js';

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

/**
 * The note printed under the route of a topic the nameserver does not know: it answers such a
 * topic with the auto-create template TBW102's route on purpose (ali-ons producers send to it
 * and the broker creates the topic), so without the note a typo looks like a real topic.
 */
export function autoRouteNote(topic: string): string {
  return `Note: topic ${topic} does not exist on the nameserver (it is not in the topic list); the route above is the auto-create template ${TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC}'s, which the nameserver answers for unknown topics (a producer's first send creates the topic when the broker has autoCreateTopicEnable=true)`;
}

/**
 * Whether the nameserver at `addr` lists `topic` (GET_ALL_TOPIC_LIST_FROM_NAMESERVER 206); null
 * when it cannot tell (the request failed or was refused), then no note is printed.
 */
async function nameserverKnowsTopic(addr: string, topic: string, timeoutMs: number): Promise<boolean | null> {
  try {
    const { response } = await invokeAdmin([addr], RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, null, timeoutMs);
    if (response.code !== ResponseCode.SUCCESS) return null;
    return topicListOf(response.body ?? Buffer.alloc(0)).includes(topic);
  } catch {
    return null;
  }
}

export async function runTopicRoute(opts: TopicRouteOptions): Promise<void> {
  const topic = opts.topic.trim();
  const timeoutMs = timeoutOf(opts);
  const { addr, response } = await invokeAdmin(addressList(opts.namesrvAddr, 'nameserver'), RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, timeoutMs);
  const route = topicRouteOf(successBody(addr, response));
  // ask the nameserver that answered the route whether the topic exists
  const known = await nameserverKnowsTopic(addr, topic, timeoutMs);
  const autoRoute = known === false;
  if (opts.json) {
    printJson(known === null ? route : { ...route, autoRoute });
    return;
  }
  for (const line of routeTable(route)) console.log(line);
  if (autoRoute) console.log(autoRouteNote(topic));
}

export function registerAdminTopicRoute(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('topic-route').description("show a topic's route from the nameserver (mqadmin topicRoute, request code 105)")).requiredOption(
      '-t, --topic <topic>',
      'topic name',
    ),
  ).action(runTopicRoute);
}
