/**
 * The label values Apache RocketMQ 5.3.3's broker metrics compute from a message, topic or group
 * (BrokerMetricsManager, TopicValidator, MixAll), for the Prometheus exporter (src/metrics):
 *
 *   message_type  metricsMessageType(): Apache's `getMessageType(SendMessageRequestHeader)` order —
 *                 "transaction" (TRAN_MSG parses as true), else "fifo" (a `__SHARDINGKEY`), else
 *                 "delay" (`__STARTDELIVERTIME`, DELAY, TIMER_DELIVER_MS, TIMER_DELAY_SEC or
 *                 TIMER_DELAY_MS), else "normal". Lower case (TopicMessageType.getMetricsValue);
 *                 an order topic without a sharding key is "normal" (the topic is not looked at).
 *   is_system     isMetricsSystemTopic(): TopicValidator.isSystemTopic over the set a running 5.3.3
 *                 broker holds — the static system topics, every `rmq_sys_` topic, plus what its
 *                 TopicConfigManager registers at start: the cluster name, the broker name and
 *                 `<cluster>_REPLY_TOPIC`. Groups: isSysConsumerGroup() (`CID_RMQ_SYS_` prefix,
 *                 case-sensitive: MixAll, used for messages out) and isSystemGroup() (the same prefix
 *                 ignoring case: BrokerMetricsManager, used for DLQ, lag and connections).
 *   (skipped)     isRetryOrDlqTopic(): `%RETRY%` / `%DLQ%` topics are not counted in messages/
 *                 throughput in and out at all.
 */
import { MessageConst } from '../../common/message/message-const.js';
import { TopicValidator, isSystemTopic } from '../../common/message/topic-validator.js';
import type { MetricsMessageType } from './broker-stats-listener.js';
import { javaParseBoolean } from '../../common/message/java-boolean.js';

/** Apache MixAll.REPLY_TOPIC_POSTFIX: `<cluster>_REPLY_TOPIC` is a system topic of a running broker. */
const REPLY_TOPIC_POSTFIX = 'REPLY_TOPIC';
/** Apache's `__STARTDELIVERTIME` (the 4.x ONS delivery-time property getMessageType also reads). */
const START_DELIVER_TIME = '__STARTDELIVERTIME';

/** The `message_type` of a send, from the properties the client sent (before any put hook rewrote them). */
export function metricsMessageType(properties: ReadonlyMap<string, string>): MetricsMessageType {
  if (javaParseBoolean(properties.get(MessageConst.TRAN_MSG))) return 'transaction';
  if (properties.has(MessageConst.SHARDING_KEY)) return 'fifo';
  if (
    properties.has(START_DELIVER_TIME) ||
    properties.has(MessageConst.DELAY) ||
    properties.has(MessageConst.TIMER_DELIVER_MS) ||
    properties.has(MessageConst.TIMER_DELAY_SEC) ||
    properties.has(MessageConst.TIMER_DELAY_MS)
  ) {
    return 'delay';
  }
  return 'normal';
}

/** The broker identity the runtime system topics derive from. */
export interface SystemTopicScope {
  brokerClusterName: string;
  brokerName: string;
}

/** `is_system` of a topic on a broker of `scope` (see the file comment). */
export function isMetricsSystemTopic(topic: string, scope: SystemTopicScope): boolean {
  return isSystemTopic(topic) || topic === scope.brokerClusterName || topic === scope.brokerName || topic === `${scope.brokerClusterName}_${REPLY_TOPIC_POSTFIX}`;
}

/** Apache MixAll.isSysConsumerGroup (case-sensitive prefix). */
export function isSysConsumerGroup(group: string): boolean {
  return group.startsWith(TopicValidator.SYSTEM_GROUP_PREFIX);
}

/** Apache BrokerMetricsManager.isSystemGroup (prefix ignoring case; blank = false). */
export function isSystemGroup(group: string): boolean {
  return group.trim() !== '' && group.toLowerCase().startsWith(TopicValidator.SYSTEM_GROUP_PREFIX.toLowerCase());
}

/** Apache BrokerMetricsManager.isRetryOrDlqTopic. */
export function isRetryOrDlqTopic(topic: string): boolean {
  return topic.startsWith(TopicValidator.RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(TopicValidator.DLQ_GROUP_TOPIC_PREFIX);
}
