/**
 * The label keys of each rocketmq_* sample name a real Apache RocketMQ 5.3.3 broker printed on its
 * PROM endpoint (metricsExporterType=PROM; OpenTelemetry exporter 1.29.0-alpha), besides the
 * common labels (otel_scope_name, cluster, node_id, node_type). Recorded from one run on
 * 2026-12-01: rocketmq-broker 5.3.3 from Maven Central with a nameserver, a Java 5.3.3 producer
 * (5 sends, one DELAY=1), a push consumer (two RECONSUME_LATER) and a lite-pull consumer.
 * Facts about Apache's output, used to check tsmq's scrape; metrics a workload did not touch
 * (DLQ, transactions, timers with traffic) are not in the record.
 */
export const APACHE_533_METRIC_LABELS: Readonly<Record<string, readonly string[]>> = {
  rocketmq_broker_permission: [],
  rocketmq_consumer_connections: ['consume_mode', 'consumer_group', 'is_system', 'language', 'protocol_type', 'version'],
  rocketmq_consumer_group_number: [],
  rocketmq_consumer_inflight_messages: ['consumer_group', 'is_retry', 'is_system', 'topic'],
  rocketmq_consumer_lag_latency_milliseconds: ['consumer_group', 'is_retry', 'is_system', 'topic'],
  rocketmq_consumer_lag_messages: ['consumer_group', 'is_retry', 'is_system', 'topic'],
  rocketmq_consumer_queueing_latency_milliseconds: ['consumer_group', 'is_retry', 'is_system', 'topic'],
  rocketmq_consumer_ready_messages: ['consumer_group', 'is_retry', 'is_system', 'topic'],
  rocketmq_message_size_bucket: ['is_system', 'le', 'message_type', 'topic'],
  rocketmq_message_size_count: ['is_system', 'message_type', 'topic'],
  rocketmq_message_size_sum: ['is_system', 'message_type', 'topic'],
  rocketmq_messages_in_total: ['is_system', 'message_type', 'topic'],
  rocketmq_messages_out_total: ['consumer_group', 'is_system', 'topic'],
  rocketmq_pop_buffer_scan_time_consume_milliseconds_bucket: ['le'],
  rocketmq_pop_buffer_scan_time_consume_milliseconds_count: [],
  rocketmq_pop_buffer_scan_time_consume_milliseconds_sum: [],
  rocketmq_pop_checkpoint_buffer_size: [],
  rocketmq_pop_offset_buffer_size: [],
  rocketmq_pop_revive_lag_milliseconds: ['queue_id'],
  rocketmq_pop_revive_latency_milliseconds: ['queue_id'],
  rocketmq_processor_watermark: ['processor'],
  rocketmq_producer_connections: ['language', 'protocol_type', 'version'],
  rocketmq_rpc_latency_milliseconds_bucket: ['is_long_polling', 'le', 'protocol_type', 'request_code', 'response_code', 'result'],
  rocketmq_rpc_latency_milliseconds_count: ['is_long_polling', 'protocol_type', 'request_code', 'response_code', 'result'],
  rocketmq_rpc_latency_milliseconds_sum: ['is_long_polling', 'protocol_type', 'request_code', 'response_code', 'result'],
  rocketmq_storage_dispatch_behind_bytes: ['storage_medium', 'storage_type'],
  rocketmq_storage_flush_behind_bytes: ['storage_medium', 'storage_type'],
  rocketmq_storage_message_reserve_time_milliseconds: ['storage_medium', 'storage_type'],
  rocketmq_storage_size_bytes: ['storage_medium', 'storage_type'],
  rocketmq_throughput_in_total: ['is_system', 'message_type', 'topic'],
  rocketmq_throughput_out_total: ['consumer_group', 'is_system', 'topic'],
  rocketmq_timer_dequeue_lag: ['storage_medium', 'storage_type'],
  rocketmq_timer_dequeue_latency_milliseconds: ['storage_medium', 'storage_type'],
  rocketmq_timer_enqueue_lag: ['storage_medium', 'storage_type'],
  rocketmq_timer_enqueue_latency_milliseconds: ['storage_medium', 'storage_type'],
  rocketmq_timer_message_snapshot: ['storage_medium', 'storage_type', 'timer_bound_s'],
  rocketmq_topic_number: [],
};

/** Apache metrics tsmq does not export (docs/metrics.md, "Differences from Apache"). */
export const NOT_EXPORTED_BY_TSMQ = /^rocketmq_(pop_|processor_watermark)/;

/** Label keys of every rocketmq_* sample name in a Prometheus text, without the common labels; a name whose samples differ in keys appears once per key set, joined by " | ". */
export function metricLabelKeys(text: string): Map<string, string> {
  const seen = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const m = /^(rocketmq_[a-z_]+)(?:\{(.*)\})? \S+/.exec(line);
    if (!m) continue;
    const keys = [...(m[2] ?? '').matchAll(/(\w+)="(?:[^"\\]|\\.)*"/g)]
      .map((x) => x[1]!)
      .filter((k) => !['otel_scope_name', 'cluster', 'node_id', 'node_type'].includes(k))
      .sort()
      .join(',');
    const set = seen.get(m[1]!) ?? new Set<string>();
    set.add(keys);
    seen.set(m[1]!, set);
  }
  return new Map([...seen].map(([name, sets]) => [name, [...sets].sort().join(' | ')]));
}
