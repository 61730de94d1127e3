/**
 * INVOKE_BROKER_TO_RESET_OFFSET (222): `mqadmin resetOffsetByTime` / DefaultMQAdminExt
 * `resetOffsetByTimestamp` while the group is online (mirrors 4.9 `Broker2Client.resetOffset`).
 *
 * Request header: topic, group, timestamp (ms; -1 = the queue max), isForce (absent = false). Language CPP marks
 * a C++ client (Apache's `isC`): its 220 body is a list instead of a map.
 * For each write queue of the topic the new offset is getOffsetInQueueByTime(timestamp) (LOWER;
 * negative → 0), or the queue max for timestamp -1; without isForce an offset is only moved
 * backwards (min(new, committed)). Then, in this order:
 *   - topic unknown → 1 SYSTEM_ERROR "[reset-offset] reset offset failed, no topic in this broker. topic=<t>";
 *   - a queue without committed offset → 1 SYSTEM_ERROR "THe consumer group <g> not exist" (Apache's text);
 *   - a consumer of the group older than V3_0_7_SNAPSHOT → 1 SYSTEM_ERROR "the client does not support this feature. version=<v>";
 *   - no consumer online → 206 CONSUMER_NOT_ONLINE
 *       "Consumer not online, so can not reset offset, Group: <g> Topic: <t> Timestamp: <ts>"
 *     (the admin tool then falls back to the old method: 208, 29 and 15 per queue);
 *   - otherwise the new offsets are committed here, RESET_CONSUMER_CLIENT_OFFSET (220, oneway,
 *     header topic/group/timestamp/isForce, body ResetOffsetBody {"offsetTable":{<mq>:offset}} or,
 *     for C++, {"offsetTable":[{"brokerName","offset","queueId","topic"}]}) goes to every
 *     connection of the group, and the reply is SUCCESS with body ResetOffsetBody.
 * The Java client, on 220, pauses the group for 10 s, then sets and commits the new offsets.
 * A 222 for a group with pop state on the topic, or naming one queue (5.x `queueId`/`offset`), is
 * answered before this by pop-reset-handlers.ts (Apache 5.3.3's server-side reset).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createRequestCommand, createResponseCommand, markOneway } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getLong, getOptionalBoolean, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import { javaLongJson, messageQueueMapJson, type MessageQueueRef } from './message-queue-json.js';

/** Ordinal of MQVersion.Version.V3_0_7_SNAPSHOT: older clients cannot take 220. */
export const MIN_RESET_CLIENT_VERSION = 28;

/** ResetOffsetBody text: {"offsetTable":{<mq>:<offset>,…}}. */
export function resetOffsetBodyJson(table: Iterable<readonly [MessageQueueRef, number]>): string {
  return `{"offsetTable":${messageQueueMapJson(table, javaLongJson)}}`;
}

/** ResetOffsetBodyForC text: {"offsetTable":[{"brokerName","offset","queueId","topic"},…]}. */
export function resetOffsetBodyForCJson(table: Iterable<readonly [MessageQueueRef, number]>): string {
  const items = [...table].map(
    ([mq, offset]) => `{"brokerName":${JSON.stringify(mq.brokerName)},"offset":${javaLongJson(offset)},"queueId":${mq.queueId},"topic":${JSON.stringify(mq.topic)}}`,
  );
  return `{"offsetTable":[${items.join(',')}]}`;
}

export class ResetOffsetProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const topic = getString(ext, 'topic');
    const group = getString(ext, 'group');
    const timestamp = getLong(ext, 'timestamp');
    const isForce = getOptionalBoolean(ext, 'isForce') ?? false;
    const isC = request.language === 'CPP';
    const fail = (code: number, remark: string): RemotingCommand => {
      this.ctx.logger.warn(`[reset-offset] ${remark}`);
      return createResponseCommand(request, code, remark);
    };

    const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) return fail(ResponseCode.SYSTEM_ERROR, `[reset-offset] reset offset failed, no topic in this broker. topic=${topic}`);
    const table: Array<[MessageQueueRef, number]> = [];
    for (let queueId = 0; queueId < tc.writeQueueNums; queueId++) {
      const committed = this.ctx.consumerOffsetManager.queryOffset(group, topic, queueId);
      if (committed === -1) return fail(ResponseCode.SYSTEM_ERROR, `THe consumer group <${group}> not exist`);
      let target = timestamp === -1 ? this.ctx.store.getMaxOffsetInQueue(topic, queueId) : await this.ctx.store.getOffsetInQueueByTime(topic, queueId, timestamp, 'LOWER');
      if (target < 0) target = 0;
      table.push([{ topic, brokerName: this.ctx.config.brokerName, queueId }, isForce || target < committed ? target : committed]);
    }

    const channels = [...(this.ctx.consumerManager.getConsumerGroupInfo(group)?.channels.values() ?? [])].filter((c) => !c.channel.closed);
    const old = channels.find((c) => c.version < MIN_RESET_CLIENT_VERSION);
    if (old) return fail(ResponseCode.SYSTEM_ERROR, `the client does not support this feature. version=${old.version}`);
    if (channels.length === 0) {
      return fail(ResponseCode.CONSUMER_NOT_ONLINE, `Consumer not online, so can not reset offset, Group: ${group} Topic: ${topic} Timestamp: ${timestamp}`);
    }

    for (const [mq, offset] of table) this.ctx.consumerOffsetManager.commitOffset(channel.remoteAddress, group, topic, mq.queueId, offset);
    const pushBody = Buffer.from(isC ? resetOffsetBodyForCJson(table) : resetOffsetBodyJson(table), 'utf8');
    for (const c of channels) {
      const push = createRequestCommand(
        RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
        { topic, group, timestamp: String(timestamp), isForce: String(isForce) },
        pushBody,
      );
      c.channel.send(markOneway(push));
      this.ctx.logger.info(`[reset-offset] reset offset of ${group} on ${topic} to ${timestamp} sent to ${c.clientId} (${c.channel.remoteAddress})`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(resetOffsetBodyJson(table), 'utf8'));
  }
}
