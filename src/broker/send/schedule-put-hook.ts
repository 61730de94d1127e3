/**
 * The broker's put hook for delayed messages (mirrors 5.x `HookUtils.handleScheduleMessage`
 * and `transformDelayLevelMessage`; in 4.x the same rewrite lived inside the CommitLog).
 *
 * A message whose transaction type is NOT/COMMIT and whose DELAY property is an integer > 0 is
 * stored in SCHEDULE_TOPIC_XXXX queue (level − 1), with the level clamped to the highest level,
 * REAL_TOPIC/REAL_QID keeping the original topic/queue, and DELAY kept (the store derives the
 * consume-queue tags code, i.e. the deliver time, from it). Every broker put except the schedule
 * service's own re-put goes through here.
 */
import type { MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, getTransactionValue } from '../../common/message/sysflag.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import { DelayLevelTable } from '../schedule/delay-level-table.js';

/** DELAY as an integer, 0 when absent or not a number. */
export function delayLevelOf(msg: { properties: Map<string, string> }): number {
  const text = msg.properties.get(MessageConst.DELAY);
  if (text === undefined || !/^\s*-?\d+\s*$/.test(text)) return 0;
  return Number(text);
}

/** Rewrites `msg` in place when it carries a delay level; returns whether it did. */
export function applyScheduleRewrite(msg: MessageInner, delayLevels: DelayLevelTable): boolean {
  const tranType = getTransactionValue(msg.sysFlag);
  if (tranType !== MessageSysFlag.TRANSACTION_NOT_TYPE && tranType !== MessageSysFlag.TRANSACTION_COMMIT_TYPE) return false;
  let level = delayLevelOf(msg);
  if (level <= 0) return false;
  if (level > delayLevels.maxLevel) level = delayLevels.maxLevel;
  msg.encodedProperties = undefined; // the properties change below (no delete: the message object keeps its shape)
  msg.properties.set(MessageConst.DELAY, String(level));
  msg.properties.set(MessageConst.REAL_TOPIC, msg.topic);
  msg.properties.set(MessageConst.REAL_QID, String(msg.queueId));
  msg.topic = TopicValidator.RMQ_SYS_SCHEDULE_TOPIC;
  msg.queueId = DelayLevelTable.queueIdOf(level);
  return true;
}
