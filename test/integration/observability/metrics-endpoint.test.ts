/**
 * The Prometheus endpoint of `tsmq start` (metricsExporterType=PROM) after the real ali-ons client
 * produced and consumed: each Apache metric name carries the values the traffic implies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DLQ_GROUP, DLQ_TOPIC, FIRST, GROUP, LIVE_GROUP, TOPIC, TOTAL, startObservedBroker, type ObservedBroker } from './observed-broker.js';

/** Value of the series `name{labels}` (labels given as a subset, order-free); undefined when absent. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let found: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^(\S+?)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) found = (found ?? 0) + Number(m[4]);
  }
  return found;
}

describe('metrics endpoint (Prometheus) of tsmq start', { timeout: 180_000 }, () => {
  let o: ObservedBroker;
  let text: string;

  before(async () => {
    o = await startObservedBroker();
    await new Promise((r) => setTimeout(r, 700)); // one ASYNC_FLUSH round (flushIntervalCommitLog=100) after the last send
    assert.ok(o.broker.metricsUrl, `banner names the metrics URL:\n${o.broker.log}`);
    const res = await fetch(o.broker.metricsUrl!);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    text = await res.text();
  });

  after(async () => {
    await o?.close();
  });

  it('counts messages and bytes in per topic and message type, with the common labels', () => {
    assert.equal(valueOf(text, 'rocketmq_messages_in_total', { topic: TOPIC, message_type: 'normal', is_system: 'false', cluster: 'DefaultCluster', node_type: 'broker' }), TOTAL);
    const bytes = valueOf(text, 'rocketmq_throughput_in_total', { topic: TOPIC })!;
    assert.ok(bytes > TOTAL * 100 && bytes < TOTAL * 1000, `bytes in ${bytes}`);
    assert.equal(valueOf(text, 'rocketmq_message_size_count', { topic: TOPIC }), TOTAL);
    assert.equal(valueOf(text, 'rocketmq_message_size_bucket', { topic: TOPIC, le: '1024' }), TOTAL, 'every record is under 1 KiB');
    assert.equal(valueOf(text, 'rocketmq_message_size_sum', { topic: TOPIC }), bytes);
  });

  it('counts messages out per group, lag 10 after consuming 40 of 50, and lag latency', () => {
    const out = valueOf(text, 'rocketmq_messages_out_total', { topic: TOPIC, consumer_group: GROUP, is_system: 'false' })!;
    assert.ok(out >= FIRST, `messages out ${out}`);
    assert.ok(valueOf(text, 'rocketmq_throughput_out_total', { topic: TOPIC, consumer_group: GROUP })! > 0);
    assert.equal(valueOf(text, 'rocketmq_consumer_lag_messages', { topic: TOPIC, consumer_group: GROUP }), TOTAL - FIRST);
    assert.equal(valueOf(text, 'rocketmq_consumer_ready_messages', { topic: TOPIC, consumer_group: GROUP }), TOTAL - FIRST);
    assert.equal(valueOf(text, 'rocketmq_consumer_inflight_messages', { topic: TOPIC, consumer_group: GROUP }), 0);
    const latency = valueOf(text, 'rocketmq_consumer_lag_latency', { topic: TOPIC, consumer_group: GROUP })!;
    assert.ok(latency > 0 && latency < 120_000, `lag latency ${latency} ms`);
  });

  it('counts the DLQ message and the connections', () => {
    assert.equal(valueOf(text, 'rocketmq_send_to_dlq_messages_total', { topic: DLQ_TOPIC, consumer_group: DLQ_GROUP }), 1);
    assert.ok(valueOf(text, 'rocketmq_producer_connections', { language: 'JAVA' })! >= 1, 'the producer is connected');
    assert.equal(valueOf(text, 'rocketmq_consumer_connections', { consumer_group: LIVE_GROUP }), 1);
    assert.match(text, /# TYPE rocketmq_commit_messages_total counter/);
    assert.match(text, /# TYPE rocketmq_rollback_messages_total counter/);
  });

  it('reports topics, groups, storage and latency figures', () => {
    assert.ok(valueOf(text, 'rocketmq_topic_number')! >= 3);
    assert.ok(valueOf(text, 'rocketmq_consumer_group_number')! >= 2);
    assert.ok(valueOf(text, 'rocketmq_storage_size')! > 0);
    assert.equal(valueOf(text, 'rocketmq_storage_flush_behind_bytes'), 0, 'everything flushed after an ASYNC_FLUSH round');
    assert.equal(valueOf(text, 'rocketmq_storage_dispatch_behind_bytes'), 0);
    const reserve = valueOf(text, 'rocketmq_storage_message_reserve_time')!;
    assert.ok(reserve > 0 && reserve < 300_000, `reserve time ${reserve} ms`);
    assert.ok(valueOf(text, 'rocketmq_rpc_latency_count', { protocol_type: 'remoting', request_code: '310', response_code: '0' })! >= TOTAL, 'SEND_MESSAGE_V2 (310) answered SUCCESS');
    assert.ok(valueOf(text, 'tsmq_commitlog_flush_latency_seconds_count')! > 0);
    assert.ok(valueOf(text, 'tsmq_commitlog_flush_batch_bytes_sum')! > 0);
    assert.ok(valueOf(text, 'tsmq_store_recovery_duration_seconds')! >= 0);
    assert.ok(valueOf(text, 'nodejs_eventloop_lag_p99_seconds')! >= 0);
  });

  it('answers 404 off /metrics', async () => {
    const res = await fetch(o.broker.metricsUrl!.replace('/metrics', '/nope'));
    assert.equal(res.status, 404);
  });
});
