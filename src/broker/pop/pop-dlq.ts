/**
 * The dead-letter copy of a message that ran out of delivery attempts (mirrors what Apache's
 * send-back path stores in `%DLQ%<group>`): same body, flag, tags, keys and UNIQ_KEY; properties
 * RETRY_TOPIC and ORIGIN_MESSAGE_ID kept or set from the original, DLQ_ORIGIN_TOPIC /
 * DLQ_ORIGIN_MESSAGE_ID set, DELAY and timer properties removed, reconsumeTimes = attempts made.
 */
import type { MessageExt, MessageInner, SocketAddress } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, resetTransactionValue } from '../../common/message/sysflag.js';

const DROPPED = [
  MessageConst.DELAY,
  MessageConst.TIMER_DELIVER_MS,
  MessageConst.TIMER_DELAY_MS,
  MessageConst.TIMER_DELAY_SEC,
  MessageConst.REAL_TOPIC,
  MessageConst.REAL_QID,
  MessageConst.TRAN_MSG,
];

export function buildDlqMessage(msg: MessageExt, dlqTopic: string, attempts: number, storeHost: SocketAddress): MessageInner {
  const props = new Map(msg.properties);
  for (const k of DROPPED) props.delete(k);
  const originTopic = props.get(MessageConst.RETRY_TOPIC) ?? msg.topic;
  const uniq = msg.properties.get(MessageConst.UNIQ_KEY) ?? msg.msgId;
  if (!props.has(MessageConst.RETRY_TOPIC)) props.set(MessageConst.RETRY_TOPIC, originTopic);
  if (!props.has(MessageConst.ORIGIN_MESSAGE_ID)) props.set(MessageConst.ORIGIN_MESSAGE_ID, uniq);
  props.set(MessageConst.DLQ_ORIGIN_TOPIC, originTopic);
  props.set(MessageConst.DLQ_ORIGIN_MESSAGE_ID, uniq);
  return {
    topic: dlqTopic,
    queueId: 0,
    flag: msg.flag,
    body: msg.body,
    properties: props,
    sysFlag: resetTransactionValue(msg.sysFlag, MessageSysFlag.TRANSACTION_NOT_TYPE),
    bornTimestamp: msg.bornTimestamp,
    bornHost: msg.bornHost,
    storeHost,
    reconsumeTimes: attempts,
    preparedTransactionOffset: 0,
  };
}
