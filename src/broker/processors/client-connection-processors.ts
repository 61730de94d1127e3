/**
 * Who is connected, and calls into a connected consumer (mirror Apache `AdminBrokerProcessor`):
 *
 *   203 GET_CONSUMER_CONNECTION_LIST  header consumerGroup → body ConsumerConnection
 *         {"connectionSet":[{"clientAddr","clientId","language","version"}],
 *          "consumeFromWhere","consumeType","messageModel","subscriptionTable":{<topic>:SubscriptionData}}
 *       A group with no live client → 206 CONSUMER_NOT_ONLINE "the consumer group[<g>] not online".
 *   204 GET_PRODUCER_CONNECTION_LIST  header producerGroup → body ProducerConnection
 *         {"connectionSet":[...]} (empty set when the group has no live producer).
 *   328 GET_ALL_PRODUCER_INFO         no header → body ProducerTableInfo
 *         {"data":{<group>:[{"clientId","remoteIP","language","version","lastUpdateTimestamp"}]}}
 *       every group with a live producer, one entry per connection (Apache
 *       `ProducerManager.getProducerTable`; remoteIP is Java's InetSocketAddress text "/ip:port",
 *       lastUpdateTimestamp the epoch ms of the last heartbeat). `mqadmin producer -b` prints it.
 *   307 GET_CONSUMER_RUNNING_INFO     header consumerGroup, clientId, jstackEnable
 *   309 CONSUME_MESSAGE_DIRECTLY      header consumerGroup, clientId, msgId (offset message id), topic
 *       Both are forwarded to that client's connection with the same header (309 also gets
 *       brokerName, topicSysFlag, groupSysFlag and the stored record as body) and the client's
 *       answer is returned as is (Apache `callConsumer`, 10 s timeout). Client not connected →
 *       1 SYSTEM_ERROR "The Consumer <g> <id> not online"; timeout → 207 CONSUME_MSG_TIMEOUT.
 */
import type { RemotingChannel, RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createRequestCommand, createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { RemotingTimeoutError } from '../../remoting/transport/remoting-errors.js';
import { decodeMessageId } from '../../common/message/msgid.js';
import type { BrokerContext } from '../broker-context.js';
import type { ClientChannelInfo } from '../client/client-channel-table.js';
import type { SubscriptionData } from '../filter/subscription-data.js';

/** Apache Broker2Client.callClient timeout. */
export const CALL_CLIENT_TIMEOUT_MS = 10_000;

/** Apache `Connection` JSON object of a client entry. */
export function connectionJson(info: ClientChannelInfo): object {
  return { clientAddr: info.channel.remoteAddress, clientId: info.clientId, language: info.language, version: info.version };
}

/** Apache `ProducerInfo` JSON of a producer entry (remoteIP as Java prints a socket address: "/ip:port"). */
export function producerInfoJson(info: ClientChannelInfo): object {
  return {
    clientId: info.clientId,
    remoteIP: `/${info.channel.remoteAddress}`,
    language: info.language,
    version: info.version,
    lastUpdateTimestamp: info.lastUpdateTimestamp,
  };
}

/** Apache `SubscriptionData` JSON (fastjson field names; tsmq's compiled filter is left out). */
export function subscriptionDataJson(s: SubscriptionData): object {
  return {
    classFilterMode: s.classFilterMode,
    codeSet: s.codeSet,
    expressionType: s.expressionType,
    subString: s.subString,
    subVersion: s.subVersion,
    tagsSet: s.tagsSet,
    topic: s.topic,
  };
}

export class ClientConnectionProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly getConsumerConnectionList: RequestHandler = ({ request }) => {
    const group = getString(request.extFields, 'consumerGroup');
    const info = this.ctx.consumerManager.getConsumerGroupInfo(group);
    if (!info || info.channels.size === 0) {
      return createResponseCommand(request, ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${group}] not online`);
    }
    const body = {
      connectionSet: [...info.channels.values()].map(connectionJson),
      consumeFromWhere: info.consumeFromWhere,
      consumeType: info.consumeType,
      messageModel: info.messageModel,
      subscriptionTable: Object.fromEntries([...info.subscriptions].map(([t, s]) => [t, subscriptionDataJson(s)])),
    };
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(body), 'utf8'));
  };

  readonly getProducerConnectionList: RequestHandler = ({ request }) => {
    const group = getString(request.extFields, 'producerGroup');
    const body = { connectionSet: this.ctx.producerManager.entriesOf(group).map(connectionJson) };
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(body), 'utf8'));
  };

  readonly getAllProducerInfo: RequestHandler = ({ request }) => {
    const data: Record<string, object[]> = {};
    for (const group of this.ctx.producerManager.groupNames()) {
      const entries = this.ctx.producerManager.entriesOf(group);
      if (entries.length > 0) data[group] = entries.map(producerInfoJson);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify({ data }), 'utf8'));
  };

  readonly getConsumerRunningInfo: RequestHandler = (rc) => this.callConsumer(rc, RequestCode.GET_CONSUMER_RUNNING_INFO, {}, rc.request.body);

  readonly consumeMessageDirectly: RequestHandler = async (rc) => {
    const ext = rc.request.extFields ?? {};
    const extra: Record<string, string> = { brokerName: this.ctx.config.brokerName };
    const topic = getOptionalString(ext, 'topic');
    const tc = topic ? this.ctx.topicConfigManager.selectTopicConfig(topic) : undefined;
    if (tc) extra.topicSysFlag = String(tc.topicSysFlag);
    const group = getOptionalString(ext, 'consumerGroup');
    const gc = group ? this.ctx.subscriptionGroupManager.get(group) : undefined;
    if (gc) extra.groupSysFlag = String(gc.groupSysFlag);
    let body: Buffer | null = rc.request.body;
    const msgId = getOptionalString(ext, 'msgId');
    if (msgId) {
      try {
        body = await this.ctx.store.selectOneMessageByOffset(decodeMessageId(msgId).commitLogOffset);
      } catch {
        /* Apache ignores an undecodable id and forwards without the message */
      }
    }
    return this.callConsumer(rc, RequestCode.CONSUME_MESSAGE_DIRECTLY, extra, body);
  };

  private async callConsumer({ request }: RequestContext, code: number, extra: Record<string, string>, body: Buffer | null): Promise<RemotingCommand> {
    const group = getString(request.extFields, 'consumerGroup');
    const clientId = getString(request.extFields, 'clientId');
    const info = this.findChannel(group, clientId);
    if (!info || !info.channel.invoke) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `The Consumer <${group}> <${clientId}> not online`);
    }
    const ext: Record<string, string> = {};
    for (const [k, v] of Object.entries(request.extFields ?? {})) if (v !== undefined && v !== null) ext[k] = String(v);
    Object.assign(ext, extra);
    const forward = createRequestCommand(code, ext, body);
    try {
      const answer = await (info.channel as Required<RemotingChannel>).invoke(forward, CALL_CLIENT_TIMEOUT_MS);
      return createResponseCommand(request, answer.code, answer.remark ?? null, answer.extFields ?? null, answer.body);
    } catch (e) {
      if (e instanceof RemotingTimeoutError) {
        return createResponseCommand(request, ResponseCode.CONSUME_MSG_TIMEOUT, `consumer <${group}> <${clientId}> Timeout: ${(e as Error).message}`);
      }
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `invoke consumer <${group}> <${clientId}> Exception: ${(e as Error).message}`);
    }
  }

  private findChannel(group: string, clientId: string): ClientChannelInfo | undefined {
    const info = this.ctx.consumerManager.getConsumerGroupInfo(group);
    if (!info) return undefined;
    return [...info.channels.values()].find((c) => c.clientId === clientId && !c.channel.closed);
  }
}
