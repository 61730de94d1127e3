/**
 * CONSUMER_SEND_MSG_BACK (36) (mirrors 4.9 `SendMessageProcessor.consumerSendMsgBack`, spec A10).
 *
 * Request extFields: offset (CommitLog physical offset), group, delayLevel, originMsgId,
 * originTopic, unitMode, maxReconsumeTimes (optional).
 * The record at `offset` is copied with: RETRY_TOPIC = its topic (if not set), ORIGIN_MESSAGE_ID
 * = its msgId (if not set), WAIT=false, reconsumeTimes = old + 1, born fields kept, storeHost =
 * this broker, sysFlag kept (a compressed body stays compressed).
 *   - old reconsumeTimes ≥ max (request maxReconsumeTimes, else the group's retryMaxTimes) or
 *     delayLevel < 0 → `%DLQ%<group>` (1 queue, perm 6), stored at once: no DELAY property, never
 *     through SCHEDULE_TOPIC_XXXX (case B36);
 *   - else → `%RETRY%<group>` (queue random among retryQueueNums) with DELAY = delayLevel, or
 *     3 + old reconsumeTimes when delayLevel is 0, so it waits in the schedule topic.
 * Only the body counts against maxMessageSize (the store's rule), so a body just under the
 * limit is still stored after the retry properties are added (case B23).
 * Stats (Apache 5.3.3 AbstractSendMessageProcessor): SNDBCK_PUT_NUMS `<originTopic>@<group>`,
 * DLQ_PUT_NUMS for a DLQ copy, TOPIC_PUT_NUMS/SIZE of SCHEDULE_TOPIC_XXXX for a retry copy (the
 * topic it is stored under); never BROKER_PUT_NUMS nor the `%DLQ%` / `%RETRY%` topic's put stats.
 * Errors: group missing → 26; broker not writable → 16; retryQueueNums ≤ 0 → 0 (dropped, as
 * Apache); unknown offset → 1 "look message by offset failed, <offset>"; store failure → 1.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getLong, getOptionalInt, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { dlqTopicOf, retryTopicOf } from '../../common/message/topic-validator.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import { mapPutResult } from '../send/put-result-mapping.js';
import { DLQ_NUMS_PER_GROUP } from './send-message-processor.js';

const RW = PermName.PERM_READ | PermName.PERM_WRITE;

export class SendBackProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ request }: RequestContext): Promise<RemotingCommand> {
    const ctx = this.ctx;
    const ext = request.extFields;
    const offset = getLong(ext, 'offset');
    const group = getString(ext, 'group');
    const delayLevel = getOptionalInt(ext, 'delayLevel') ?? 0;
    const requestMax = getOptionalInt(ext, 'maxReconsumeTimes');
    const fail = (code: number, remark: string | null): RemotingCommand => createResponseCommand(request, code, remark);

    const sgc = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
    if (!sgc) return fail(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group not exist, ${group}`);
    if (!PermName.isWriteable(ctx.config.brokerPermission)) {
      return fail(ResponseCode.NO_PERMISSION, `the broker[${ctx.config.brokerIP1}] sending message is forbidden`);
    }
    if (sgc.retryQueueNums <= 0) return fail(ResponseCode.SUCCESS, null);

    let topic = retryTopicOf(group);
    let queueId = ctx.randomInt(sgc.retryQueueNums);
    const retryConfig = ctx.topicConfigManager.createTopicInSendMessageBackMethod(topic, sgc.retryQueueNums, RW, 0);
    if (!PermName.isWriteable(retryConfig.perm)) return fail(ResponseCode.NO_PERMISSION, `the topic[${topic}] sending message is forbidden`);

    const original = await ctx.store.lookMessageByOffset(offset);
    if (!original) return fail(ResponseCode.SYSTEM_ERROR, `look message by offset failed, ${offset}`);

    const properties = new Map(original.properties);
    if (!properties.has(MessageConst.RETRY_TOPIC)) properties.set(MessageConst.RETRY_TOPIC, original.topic);
    properties.set(MessageConst.WAIT, 'false');
    const maxReconsumeTimes = requestMax ?? sgc.retryMaxTimes;
    const toDlq = original.reconsumeTimes >= maxReconsumeTimes || delayLevel < 0;
    if (toDlq) {
      topic = dlqTopicOf(group);
      queueId = ctx.randomInt(DLQ_NUMS_PER_GROUP);
      ctx.topicConfigManager.createTopicInSendMessageBackMethod(topic, DLQ_NUMS_PER_GROUP, RW, 0);
      properties.delete(MessageConst.DELAY);
      ctx.logger.info(`message ${original.msgId} of group ${group} goes to ${topic} after ${original.reconsumeTimes} reconsumes (max ${maxReconsumeTimes}, delayLevel ${delayLevel})`);
    } else {
      properties.set(MessageConst.DELAY, String(delayLevel === 0 ? 3 + original.reconsumeTimes : delayLevel));
    }
    const origin = properties.get(MessageConst.ORIGIN_MESSAGE_ID);
    if (origin === undefined || origin.trim() === '') properties.set(MessageConst.ORIGIN_MESSAGE_ID, original.msgId);

    const msg: MessageInner = {
      topic,
      queueId,
      flag: original.flag,
      body: original.body,
      properties,
      sysFlag: original.sysFlag,
      bornTimestamp: original.bornTimestamp,
      bornHost: original.bornHost,
      storeHost: ctx.storeHost,
      reconsumeTimes: original.reconsumeTimes + 1,
      preparedTransactionOffset: 0,
    };
    const result = await ctx.putMessage(msg, 'sendBack'); // a DLQ copy has no DELAY, so the schedule hook leaves it alone
    const mapped = mapPutResult(result);
    if (mapped.stored) {
      const originTopic = getOptionalString(ext, 'originTopic') ?? original.topic;
      ctx.brokerStats.recordSendBack(group, originTopic);
      if (toDlq) ctx.brokerStats.recordDlq(group, properties.get(MessageConst.RETRY_TOPIC) ?? originTopic);
      return fail(ResponseCode.SUCCESS, null);
    }
    return fail(ResponseCode.SYSTEM_ERROR, mapped.remark ?? result.status);
  }
}
