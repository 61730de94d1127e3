/**
 * Per-event hooks of the broker statistics for an exporter (src/metrics) that needs more than the
 * counters BrokerStatsManager keeps: message types, size and latency distributions. The broker
 * calls them on its hot paths only when one is set (BrokerStatsManager.setListener), so a broker
 * without an exporter pays nothing. Implementations must be cheap and must not throw.
 */

/** Apache's `message_type` label values (TopicMessageType.getMetricsValue: lower case; metrics-labels.ts). */
export type MetricsMessageType = 'normal' | 'fifo' | 'delay' | 'transaction';

export interface BrokerStatsListener {
  /**
   * A producer's send stored `msgNum` messages of `sizeBytes` in total under `topic`: the topic
   * they were stored under (after the put hooks: a delay or timer send is stored, and counted by
   * Apache, under SCHEDULE_TOPIC_XXXX / rmq_sys_wheel_timer, a transactional half under
   * RMQ_SYS_TRANS_HALF_TOPIC). Not called for a send to a `%RETRY%` / `%DLQ%` topic (Apache skips
   * them). Also called, with "delay", for every delivery of the delay-level service — then for any
   * topic, `%RETRY%` included, as Apache's ScheduleMessageService counts it.
   */
  onPut(topic: string, messageType: MetricsMessageType, msgNum: number, sizeBytes: number): void;
  /**
   * A remoting request with `requestCode` was answered with `responseCode` `latencyMs` (ms,
   * fractional) after it arrived; `oneway`: the request wanted no reply; `longPolling`: a held
   * pull answered when woken (Apache's request.isSuspended()).
   */
  onRpc(requestCode: number, responseCode: number, latencyMs: number, oneway: boolean, longPolling: boolean): void;
  /**
   * A topic or subscription group create request (UPDATE_AND_CREATE_TOPIC[_LIST],
   * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP[_LIST]) was answered after `latencyMs`; `success`: SUCCESS;
   * `isSystemTopic`: the topic is a system topic (always false for groups). Optional.
   */
  onCreateExecuted?(kind: 'topic' | 'consumerGroup', success: boolean, latencyMs: number, isSystemTopic: boolean): void;
  /** A transactional message of `topic` was committed `sinceBornMs` ms after its producer created it. Optional. */
  onTransactionCommitted?(topic: string, sinceBornMs: number): void;
  /**
   * `topic` was deleted (DELETE_TOPIC_IN_BROKER, after BrokerStatsManager forgot its counters):
   * forget every series labelled with it, so a broker that creates and deletes topics all day
   * does not export (and keep in memory) one set of series per topic it ever had. Optional.
   */
  onTopicDeleted?(topic: string): void;
}
