/**
 * Per-event hooks of the broker statistics for an exporter (src/metrics) that needs more than the
 * counters BrokerStatsManager keeps: message types, size and latency distributions. The broker
 * calls them on its hot paths only when one is set (BrokerStatsManager.setListener), so a broker
 * without an exporter pays nothing. Implementations must be cheap and must not throw.
 */

/** Apache's `message_type` label values (TopicMessageType as the metrics print it). */
export type MetricsMessageType = 'Normal' | 'FIFO' | 'Delay' | 'Transaction';

export interface BrokerStatsListener {
  /** A send stored `msgNum` messages of `sizeBytes` in total to `topic` (the topic the client sent to). */
  onPut(topic: string, messageType: MetricsMessageType, msgNum: number, sizeBytes: number): void;
  /** A remoting request with `requestCode` was answered with `responseCode` after `latencyMs` (ms, fractional). */
  onRpc(requestCode: number, responseCode: number, latencyMs: number): void;
}
