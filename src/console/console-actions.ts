/**
 * The console's changes, each through the request handler of the code Apache's tools send
 * (run in process, in-process-request.ts), so validation, persistence and nameserver
 * re-registration are the broker's own:
 *   create / update topic, permissions   UPDATE_AND_CREATE_TOPIC (17)
 *   delete topic                         DELETE_TOPIC_IN_BROKER (215)
 *   reset a group's offsets by time      INVOKE_BROKER_TO_RESET_OFFSET (222, isForce=true); when
 *                                        no consumer is online (206) the offsets are committed as
 *                                        UPDATE_CONSUMER_OFFSET (15) would, per queue, like
 *                                        Apache's admin fallback
 *   resend a DLQ message                 SEND_MESSAGE (10)'s put path: a copy of the DLQ message
 *                                        into %RETRY%<group> (RETRY_TOPIC = the original topic),
 *                                        so the group consumes it again
 * Failures are ConsoleActionError with the broker's response code and remark.
 */
import type { BrokerController } from '../broker/broker-controller.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { ResponseCode } from '../remoting/codes/response-code.js';
import { createRequestCommand } from '../remoting/protocol/commands.js';
import { retryTopicOf } from '../common/message/topic-validator.js';
import { MessageConst } from '../common/message/message-const.js';
import type { MessageInner } from '../common/message/message.js';
import { invokeInProcess } from './in-process-request.js';

export class ConsoleActionError extends Error {
  constructor(
    message: string,
    readonly responseCode: number,
  ) {
    super(message);
  }
}

export class ConsoleActions {
  constructor(private readonly broker: BrokerController) {}

  private async call(code: number, ext: Record<string, string>): Promise<Buffer | null> {
    const res = await invokeInProcess(this.broker, createRequestCommand(code, ext));
    if (res.code !== ResponseCode.SUCCESS) throw new ConsoleActionError(res.remark ?? `response code ${res.code}`, res.code);
    return res.body;
  }

  /** Creates or updates a topic (queues, perm: 2 = W, 4 = R, 6 = RW). */
  async upsertTopic(t: { topic: string; readQueueNums: number; writeQueueNums: number; perm: number; order?: boolean }): Promise<void> {
    await this.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic: t.topic,
      defaultTopic: 'TBW102',
      readQueueNums: String(t.readQueueNums),
      writeQueueNums: String(t.writeQueueNums),
      perm: String(t.perm),
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: '0',
      order: String(t.order ?? false),
    });
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.call(RequestCode.DELETE_TOPIC_IN_BROKER, { topic });
  }

  /** Moves `group`'s offsets on `topic` to the first message stored at or after `timestampMs`; returns the new offset per queue. */
  async resetOffsetByTime(group: string, topic: string, timestampMs: number): Promise<Record<number, number>> {
    const ctx = this.broker.ctx;
    const tc = ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) throw new ConsoleActionError(`topic ${topic} does not exist on this broker`, ResponseCode.TOPIC_NOT_EXIST);
    const res = await invokeInProcess(this.broker, createRequestCommand(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic, group, timestamp: String(timestampMs), isForce: 'true' }));
    if (res.code !== ResponseCode.SUCCESS && res.code !== ResponseCode.CONSUMER_NOT_ONLINE) throw new ConsoleActionError(res.remark ?? `response code ${res.code}`, res.code);
    const out: Record<number, number> = {};
    for (let q = 0; q < tc.writeQueueNums; q++) {
      let offset = timestampMs < 0 ? ctx.store.getMaxOffsetInQueue(topic, q) : await ctx.store.getOffsetInQueueByTime(topic, q, timestampMs, 'LOWER');
      offset = Math.max(0, offset);
      if (res.code === ResponseCode.CONSUMER_NOT_ONLINE) ctx.consumerOffsetManager.commitOffset('console', group, topic, q, offset);
      out[q] = ctx.consumerOffsetManager.queryOffset(group, topic, q);
    }
    return out;
  }

  /** Re-sends the DLQ message at CommitLog `commitLogOffset` to `group`'s retry topic; returns the new message's queue offset. */
  async resendDlqMessage(group: string, commitLogOffset: number): Promise<{ topic: string; queueOffset: number }> {
    const ctx = this.broker.ctx;
    const m = await ctx.store.lookMessageByOffset(commitLogOffset);
    if (!m) throw new ConsoleActionError(`no message at CommitLog offset ${commitLogOffset}`, ResponseCode.SYSTEM_ERROR);
    if (!m.topic.startsWith('%DLQ%')) throw new ConsoleActionError(`message at ${commitLogOffset} is in ${m.topic}, not a DLQ`, ResponseCode.SYSTEM_ERROR);
    const retry = retryTopicOf(group);
    ctx.topicConfigManager.createTopicInSendMessageBackMethod(retry, 1, 6, 0);
    const properties = new Map(m.properties);
    properties.delete(MessageConst.DELAY);
    const msg: MessageInner = {
      topic: retry,
      queueId: 0,
      flag: m.flag,
      body: m.body,
      properties,
      sysFlag: m.sysFlag,
      bornTimestamp: m.bornTimestamp,
      bornHost: m.bornHost,
      storeHost: ctx.storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    };
    const r = await ctx.putMessage(msg);
    if (!r.appendResult) throw new ConsoleActionError(`resend failed: ${r.status} ${r.remark ?? ''}`, ResponseCode.SYSTEM_ERROR);
    return { topic: retry, queueOffset: r.appendResult.queueOffset };
  }
}
