/**
 * Message rewrites of transactional messages (mirrors Apache `TransactionalMessageBridge`
 * `parseHalfMessageInner`, `EndTransactionProcessor.endMessageTransaction` and
 * `TransactionalMessageUtil`, spec store-format.md §10).
 *
 *   half   TRAN_MSG=true kept, REAL_TOPIC/REAL_QID = original topic/queue, `__transactionId__` =
 *          UNIQ_KEY, sysFlag transaction field reset to NOT_TYPE (so the record is dispatched to the
 *          half topic's consume queue), topic RMQ_SYS_TRANS_HALF_TOPIC, queue 0.
 *   commit the half record back on REAL_TOPIC/REAL_QID, REAL_* and TRAN_MSG removed, WAIT=false,
 *          sysFlag transaction field COMMIT (0x8), preparedTransactionOffset = the half's CommitLog
 *          offset.
 *   op     RMQ_SYS_TRANS_OP_HALF_TOPIC queue 0, TAGS 'd', body = the half's queue offset(s) as ASCII
 *          decimals joined by ','.
 */
import type { MessageExt, MessageInner, SocketAddress } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, resetTransactionValue } from '../../common/message/sysflag.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import { javaParseBoolean } from '../../common/message/java-boolean.js';

export const HALF_TOPIC = TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC;
export const OP_TOPIC = TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC;
export const CHECK_MAX_TIME_TOPIC = TopicValidator.RMQ_SYS_TRANSACTION_CHECK_MAX_TIME_TOPIC;
/** Tag of op records ("remove"). */
export const OP_REMOVE_TAG = 'd';

/**
 * True when a producer marked the message as a transactional half message: TRAN_MSG is "true"
 * in any case ("TRUE", "True"), as Apache's SendMessageProcessor reads it with Boolean.parseBoolean.
 */
export function isTransactionPrepared(msg: { properties: ReadonlyMap<string, string> }): boolean {
  return javaParseBoolean(msg.properties.get(MessageConst.TRAN_MSG));
}

/** Rewrites a producer's transactional message into its half form (in place). */
export function toHalfMessage(msg: MessageInner): MessageInner {
  const uniq = msg.properties.get(MessageConst.UNIQ_KEY);
  if (!isTransactionPrepared(msg)) msg.properties.set(MessageConst.TRAN_MSG, 'true'); // kept as sent (Apache parseHalfMessageInner)
  msg.properties.set(MessageConst.REAL_TOPIC, msg.topic);
  msg.properties.set(MessageConst.REAL_QID, String(msg.queueId));
  if (uniq !== undefined && !msg.properties.has(MessageConst.TRANSACTION_ID)) msg.properties.set(MessageConst.TRANSACTION_ID, uniq);
  msg.sysFlag = resetTransactionValue(msg.sysFlag, MessageSysFlag.TRANSACTION_NOT_TYPE);
  msg.topic = HALF_TOPIC;
  msg.queueId = 0;
  return msg;
}

/** The committed message for a half record. @throws Error when REAL_TOPIC/REAL_QID are missing. */
export function toCommitMessage(half: MessageExt): MessageInner {
  const topic = half.properties.get(MessageConst.REAL_TOPIC);
  const qid = Number(half.properties.get(MessageConst.REAL_QID));
  if (!topic || !Number.isInteger(qid) || qid < 0) throw new Error(`half message ${half.msgId} has no REAL_TOPIC/REAL_QID`);
  const props = new Map(half.properties);
  props.delete(MessageConst.REAL_TOPIC);
  props.delete(MessageConst.REAL_QID);
  props.delete(MessageConst.TRAN_MSG);
  props.set(MessageConst.WAIT, 'false');
  return {
    topic,
    queueId: qid,
    flag: half.flag,
    body: half.body,
    properties: props,
    sysFlag: resetTransactionValue(half.sysFlag, MessageSysFlag.TRANSACTION_COMMIT_TYPE),
    bornTimestamp: half.bornTimestamp,
    bornHost: half.bornHost,
    storeHost: half.storeHost,
    reconsumeTimes: half.reconsumeTimes,
    preparedTransactionOffset: half.commitLogOffset,
  };
}

/** An op ("done") record for half queue offsets. */
export function opMessage(halfQueueOffsets: number[], storeHost: SocketAddress, nowMs: number): MessageInner {
  return {
    topic: OP_TOPIC,
    queueId: 0,
    flag: 0,
    body: Buffer.from(halfQueueOffsets.join(','), 'ascii'),
    properties: new Map([[MessageConst.TAGS, OP_REMOVE_TAG], [MessageConst.WAIT, 'false']]),
    sysFlag: 0,
    bornTimestamp: nowMs,
    bornHost: storeHost,
    storeHost,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** Half queue offsets named by an op record body ("12" or "12,13"); junk pieces are ignored. */
export function parseOpBody(body: Buffer): number[] {
  return body
    .toString('ascii')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => /^\d+$/.test(s))
    .map(Number);
}

/** The view sent to a producer in a check-back: topic/queue restored from REAL_TOPIC/REAL_QID. */
export function checkView(half: MessageExt): MessageExt {
  const topic = half.properties.get(MessageConst.REAL_TOPIC) ?? half.topic;
  const qid = Number(half.properties.get(MessageConst.REAL_QID) ?? half.queueId);
  return { ...half, topic, queueId: Number.isInteger(qid) ? qid : half.queueId, properties: new Map(half.properties) };
}

/** A discarded half message (checked too often) as stored in TRANS_CHECK_MAX_TIME_TOPIC. */
export function toCheckMaxTimeMessage(half: MessageExt): MessageInner {
  return {
    topic: CHECK_MAX_TIME_TOPIC,
    queueId: 0,
    flag: half.flag,
    body: half.body,
    properties: new Map(half.properties),
    sysFlag: half.sysFlag,
    bornTimestamp: half.bornTimestamp,
    bornHost: half.bornHost,
    storeHost: half.storeHost,
    reconsumeTimes: half.reconsumeTimes,
    preparedTransactionOffset: 0,
  };
}
