/**
 * Builds the DispatchRequest of a record this process just appended, from the message itself
 * instead of re-parsing the bytes. Must produce exactly what `checkRecord` returns for the same
 * record (a unit test compares both): tags code = Java hash of TAGS, except SCHEDULE_TOPIC_XXXX
 * records with an integer DELAY > 0, whose tags code is the deliver time
 * storeTimestamp + delay of min(level, levels) (unknown table ⇒ + 1000 ms).
 */
import type { MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { tagsCode as computeTagsCode } from '../../common/message/java-hash.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { AppendResult } from '../message-store.js';

const INTEGER = /^[+-]?\d+$/;

/** Tags code of a record (see module doc). */
export function dispatchTagsCode(topic: string, props: Map<string, string>, storeTimestamp: number, delayLevelTableMs: number[]): number {
  let code = computeTagsCode(props.get(MessageConst.TAGS));
  if (topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC) {
    const delay = props.get(MessageConst.DELAY);
    if (delay !== undefined && INTEGER.test(delay)) {
      let level = Number(delay);
      if (delayLevelTableMs.length > 0) {
        if (level > delayLevelTableMs.length) level = delayLevelTableMs.length;
        if (level > 0) code = storeTimestamp + delayLevelTableMs[level - 1]!;
      } else if (level > 0) {
        code = storeTimestamp + 1000;
      }
    }
  }
  return code;
}

/** `storedSysFlag` is the SYSFLAG as encoded (with the IPv6 host bits set by the encoder). */
export function buildDispatchRequest(
  msg: MessageInner,
  r: AppendResult,
  storedSysFlag: number,
  delayLevelTableMs: number[],
): DispatchRequest {
  const props = msg.properties;
  return {
    topic: msg.topic,
    queueId: msg.queueId,
    commitLogOffset: r.wroteOffset,
    msgSize: r.wroteBytes,
    tagsCode: dispatchTagsCode(msg.topic, props, r.storeTimestamp, delayLevelTableMs),
    storeTimestamp: r.storeTimestamp,
    consumeQueueOffset: r.queueOffset,
    keys: props.get(MessageConst.KEYS) ?? '',
    uniqKey: props.get(MessageConst.UNIQ_KEY) ?? null,
    sysFlag: storedSysFlag,
    preparedTransactionOffset: msg.preparedTransactionOffset,
    properties: props,
    bornTimestamp: msg.bornTimestamp,
  };
}
