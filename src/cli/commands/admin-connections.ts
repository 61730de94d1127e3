/**
 * Who is connected (mqadmin `consumerConnection` / `producerConnection`):
 *
 * - `consumer-connection -g <group> (-n <namesrv> | -b <host:port>)`: GET_CONSUMER_CONNECTION_LIST
 *   (203) to the broker given, or (with -n, as DefaultMQAdminExt) to the masters of the route of
 *   `%RETRY%<group>`, the first with a live client answering. Prints mqadmin's table
 *   #ClientId, #ClientAddr, #Language, #Version, then "Below is subscription:" with #Topic,
 *   #SubExpression, then ConsumeType, MessageModel, ConsumeFromWhere. A group without a live
 *   client is an error (CONSUMER_NOT_ONLINE 206). `--json`: the ConsumerConnection as sent
 *   (connectionSet with `versionDesc` added, subscriptionTable, consumeType, messageModel,
 *   consumeFromWhere) plus `brokerAddr`.
 * - `producer-connection -g <group> -t <topic> (-n <namesrv> | -b <host:port>)`:
 *   GET_PRODUCER_CONNECTION_LIST (204) to the broker given or every master of the topic's
 *   route; connections merged by client id. Rows `NNNN  clientId  clientAddr  language  version`
 *   (mqadmin's `%04d` numbering). No live producer → error "Not found the producer group
 *   connection" (as DefaultMQAdminExt). `--json`: `{"group","connectionSet":[…]}`.
 *
 * Versions print as MQVersion names (401 → V4_9_4); an ordinal older than V4_0_0 prints as
 * `ordinal <n>`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { addressList, adminCommand, invokeAdmin, parseFastjson, printJson, renderTable, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchTopicRoute, masterAddrsOfRoute } from './admin-nameserver.js';
import { versionDesc } from '../../remoting/protocol/mq-version.js';

export { versionDesc };

export interface ConnectionJson {
  clientId: string;
  clientAddr: string;
  language: string;
  version: number;
}

interface ConsumerConnectionJson {
  connectionSet: ConnectionJson[];
  subscriptionTable: Record<string, { topic: string; subString: string }>;
  consumeType?: string;
  messageModel?: string;
  consumeFromWhere?: string;
}

interface ConnectionTarget extends CommonAdminOptions {
  namesrvAddr?: string;
  brokerAddr?: string;
  group: string;
}

export interface ConsumerConnectionOptions extends ConnectionTarget {}
export interface ProducerConnectionOptions extends ConnectionTarget {
  topic: string;
}

async function brokersFor(opts: ConnectionTarget, topic: string, timeoutMs: number): Promise<string[]> {
  if (opts.brokerAddr) return addressList(opts.brokerAddr, 'broker').slice(0, 1);
  if (!opts.namesrvAddr) throw new Error('give -n <nameserver address> (or NAMESRV_ADDR) or -b <broker address>');
  return [...masterAddrsOfRoute(await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs)).values()];
}

/** ConsumerConnection of `group` from the first broker with a live client. @throws the last refusal (206 when none is online). */
export async function fetchConsumerConnection(brokers: string[], group: string, timeoutMs: number): Promise<{ brokerAddr: string; connection: ConsumerConnectionJson }> {
  let lastError: Error = new Error(`consumer group ${group} is not online: no broker to ask`);
  for (const broker of brokers) {
    const { addr, response } = await invokeAdmin([broker], RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group }, timeoutMs);
    if (response.code !== ResponseCode.SUCCESS) {
      try {
        successBody(addr, response);
      } catch (e) {
        lastError = e as Error;
      }
      continue;
    }
    const c = parseFastjson(successBody(addr, response).toString('utf8')) as ConsumerConnectionJson;
    if (Array.isArray(c.connectionSet) && c.connectionSet.length > 0) return { brokerAddr: addr, connection: { ...c, subscriptionTable: c.subscriptionTable ?? {} } };
  }
  throw lastError;
}

export function consumerConnectionLines(c: ConsumerConnectionJson): string[] {
  const conns = [...c.connectionSet].sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  const subs = Object.values(c.subscriptionTable).sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  return [
    ...renderTable(['#ClientId', '#ClientAddr', '#Language', '#Version'], conns.map((x) => [x.clientId, x.clientAddr, x.language, versionDesc(x.version)])),
    '',
    'Below is subscription:',
    ...renderTable(['#Topic', '#SubExpression'], subs.map((s) => [s.topic, s.subString])),
    '',
    `ConsumeType: ${c.consumeType ?? ''}`,
    `MessageModel: ${c.messageModel ?? ''}`,
    `ConsumeFromWhere: ${c.consumeFromWhere ?? ''}`,
  ];
}

export async function runConsumerConnection(opts: ConsumerConnectionOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const group = opts.group.trim();
  const { brokerAddr, connection } = await fetchConsumerConnection(await brokersFor(opts, `%RETRY%${group}`, timeoutMs), group, timeoutMs);
  if (opts.json) {
    printJson({ brokerAddr, ...connection, connectionSet: connection.connectionSet.map((x) => ({ ...x, versionDesc: versionDesc(x.version) })) });
    return;
  }
  for (const l of consumerConnectionLines(connection)) console.log(l);
}

/** Producer connections of `group` on the brokers, merged by client id, ordered by client id. */
export async function fetchProducerConnections(brokers: string[], group: string, timeoutMs: number): Promise<ConnectionJson[]> {
  const byId = new Map<string, ConnectionJson>();
  for (const broker of brokers) {
    const { addr, response } = await invokeAdmin([broker], RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: group }, timeoutMs);
    const body = parseFastjson(successBody(addr, response).toString('utf8')) as { connectionSet?: ConnectionJson[] };
    for (const c of body.connectionSet ?? []) if (!byId.has(c.clientId)) byId.set(c.clientId, c);
  }
  return [...byId.values()].sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
}

export function producerConnectionLines(conns: ConnectionJson[]): string[] {
  // mqadmin prints no header; the rows are numbered %04d
  const table = renderTable(['#', '#ClientId', '#ClientAddr', '#Language', '#Version'], conns.map((c, i) => [String(i + 1).padStart(4, '0'), c.clientId, c.clientAddr, c.language, versionDesc(c.version)]));
  return table;
}

export async function runProducerConnection(opts: ProducerConnectionOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const group = opts.group.trim();
  const conns = await fetchProducerConnections(await brokersFor(opts, opts.topic.trim(), timeoutMs), group, timeoutMs);
  if (conns.length === 0) throw new Error(`Not found the producer group connection: no live producer of group ${group}`);
  if (opts.json) {
    printJson({ group, connectionSet: conns.map((x) => ({ ...x, versionDesc: versionDesc(x.version) })) });
    return;
  }
  for (const l of producerConnectionLines(conns)) console.log(l);
}

export function registerAdminConnections(program: Command): void {
  const admin = adminCommand(program);
  withCommonOptions(
    admin
      .command('consumer-connection')
      .description("a consumer group's live clients and subscriptions (mqadmin consumerConnection, request code 203)")
      .requiredOption('-g, --group <group>', 'consumer group')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es): ask the brokers of the route of %RETRY%<group>', process.env.NAMESRV_ADDR)
      .option('-b, --broker-addr <host:port>', 'ask this broker'),
  ).action(runConsumerConnection);
  withCommonOptions(
    admin
      .command('producer-connection')
      .description("a producer group's live clients (mqadmin producerConnection, request code 204)")
      .requiredOption('-g, --group <group>', 'producer group')
      .requiredOption('-t, --topic <topic>', 'a topic the group sends to (its route gives the brokers)')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es)', process.env.NAMESRV_ADDR)
      .option('-b, --broker-addr <host:port>', 'ask this broker'),
  ).action(runProducerConnection);
}
