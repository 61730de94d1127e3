/**
 * The Prometheus endpoint of `tsmq start` (metricsExporterType=PROM) after the real ali-ons client
 * produced and consumed: each Apache metric name carries the values the traffic implies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
    const lagLabels = { topic: TOPIC, consumer_group: GROUP, is_retry: 'false', is_system: 'false' };
    assert.equal(valueOf(text, 'rocketmq_consumer_lag_messages', lagLabels), TOTAL - FIRST);
    assert.equal(valueOf(text, 'rocketmq_consumer_ready_messages', lagLabels), TOTAL - FIRST);
    assert.equal(valueOf(text, 'rocketmq_consumer_inflight_messages', lagLabels), 0);
    const latency = valueOf(text, 'rocketmq_consumer_lag_latency_milliseconds', lagLabels)!;
    assert.ok(latency > 0 && latency < 120_000, `lag latency ${latency} ms`);
    // nothing pulled beyond the commit: the oldest unpulled message is the oldest uncommitted one
    const queueing = valueOf(text, 'rocketmq_consumer_queueing_latency_milliseconds', lagLabels)!;
    assert.ok(queueing >= latency && queueing < latency + 5_000, `queueing latency ${queueing} ms, lag latency ${latency} ms`);
    // the push consumers' own %RETRY% topics are no lag series (Apache skips subscribed retry topics)
    assert.doesNotMatch(text, /rocketmq_consumer_lag_messages\{[^}]*topic="%RETRY%/);
  });

  it('counts the DLQ message and the connections', () => {
    assert.equal(valueOf(text, 'rocketmq_send_to_dlq_messages_total', { topic: DLQ_TOPIC, consumer_group: DLQ_GROUP }), 1);
    // Apache's label values: language and version (MQVersion name; ali-ons sends 121, V3_4_9) in lower case, protocol_type remoting
    assert.ok(valueOf(text, 'rocketmq_producer_connections', { language: 'java', version: 'v3_4_9', protocol_type: 'remoting' })! >= 1, `the producer is connected:\n${text.split('\n').filter((l) => l.startsWith('rocketmq_producer_connections') || l.startsWith('rocketmq_consumer_connections')).join('\n')}`);
    assert.equal(valueOf(text, 'rocketmq_consumer_connections', { consumer_group: LIVE_GROUP, language: 'java', version: 'v3_4_9', consume_mode: 'push', protocol_type: 'remoting', is_system: 'false' }), 1);
    assert.match(text, /# TYPE rocketmq_commit_messages_total counter/);
    assert.match(text, /# TYPE rocketmq_rollback_messages_total counter/);
  });

  it('reports topics, groups, storage and latency figures', () => {
    assert.ok(valueOf(text, 'rocketmq_topic_number')! >= 3);
    assert.ok(valueOf(text, 'rocketmq_consumer_group_number')! >= 2);
    assert.equal(valueOf(text, 'rocketmq_broker_permission'), 6, 'RW (brokerPermission default)');
    const store = { storage_type: 'local', storage_medium: 'disk' };
    // used bytes of the partition holding the store (Apache); the store is under the temp dir, and
    // other processes write there meanwhile, hence the 5 % margin
    const partition = statfsSync(tmpdir());
    const used = (partition.blocks - partition.bfree) * partition.bsize;
    const storageSize = valueOf(text, 'rocketmq_storage_size_bytes', store)!;
    assert.ok(storageSize > 0 && Math.abs(storageSize - used) < partition.blocks * partition.bsize * 0.05, `storage size ${storageSize}, partition used ${used}`);
    assert.equal(valueOf(text, 'rocketmq_storage_flush_behind_bytes', store), 0, 'everything flushed after an ASYNC_FLUSH round');
    assert.equal(valueOf(text, 'rocketmq_storage_dispatch_behind_bytes', store), 0);
    const reserve = valueOf(text, 'rocketmq_storage_message_reserve_time_milliseconds', store)!;
    assert.ok(reserve > 0 && reserve < 300_000, `reserve time ${reserve} ms`);
    const sends = { protocol_type: 'remoting', request_code: 'send_message_v2', response_code: 'success', is_long_polling: 'false', result: 'success' };
    assert.ok(valueOf(text, 'rocketmq_rpc_latency_milliseconds_count', sends)! >= TOTAL, 'SEND_MESSAGE_V2 answered SUCCESS, by their lower-case names');
    assert.equal(valueOf(text, 'rocketmq_rpc_latency_milliseconds_bucket', { ...sends, le: '+Inf' }), valueOf(text, 'rocketmq_rpc_latency_milliseconds_count', sends));
    assert.match(text, /rocketmq_rpc_latency_milliseconds_bucket\{[^}]*le="3000"/, "Apache's 2 s and 3 s buckets");
    // the push consumers' held pulls, woken by the later sends, timed from their suspension
    const held = valueOf(text, 'rocketmq_rpc_latency_milliseconds_count', { request_code: 'pull_message', is_long_polling: 'true', result: 'success' });
    assert.ok(held! >= 1, `held pulls answered: ${held}`);
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
