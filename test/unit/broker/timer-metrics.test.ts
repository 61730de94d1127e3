/**
 * Timer metrics and the timer sync request codes on a real broker (sockets, real store, durable
 * wheel): N timers sent → TimerMetrics timingCount N, Prometheus rocketmq_timing_messages /
 * rocketmq_timer_dequeue_lag / rocketmq_timer_message_snapshot N, enqueue total N,
 * rocketmq_delay_message_latency_seconds N observations; GET_TIMER_CHECK_POINT (60) answers Apache's
 * 56-byte checkpoint with masterTimerQueueOffset N; GET_TIMER_METRICS (61) the TimerMetrics JSON.
 * After they fire: timing 0, dequeue total N, lag 0, config/timermetrics persisted with count 0.
 * With timerWheelEnable=false both codes answer SYSTEM_ERROR as Apache.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { BrokerMetrics } from '../../../src/metrics/broker-metrics.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import { decodeTimerCheckpoint } from '../../../src/store/timer/timer-checkpoint.js';
import { tempDir, removeDir } from '../../support/store-fixtures.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC = 'TimerMetricsT';
const N = 20;
/** long enough that the checks before delivery finish first on a loaded machine (1500 ms was not: 18 of 20 left at load 25) */
const DELAY_MS = 4000;


async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('timer metrics and GET_TIMER_CHECK_POINT / GET_TIMER_METRICS', { timeout: 60_000 }, () => {
  let dir: string;
  let broker: BrokerController;
  let metrics: BrokerMetrics;
  let client: RemotingClient;
  let addr: string;

  const config = (extra: Record<string, string> = {}) => ({
    storePathRootDir: dir,
    listenPort: '0',
    namesrvAddr: '',
    brokerName: 'broker-tm',
    mappedFileSizeCommitLog: String(1024 * 1024),
    timerPrecisionMs: '100',
    timerFlushIntervalMs: '100',
    ...extra,
  });

  before(async () => {
    dir = tempDir('tsmq-timer-metrics-');
    client = new RemotingClient({ logger: silentLogger });
    broker = await BrokerController.create({ brokerConfig: config(), logger: silentLogger, timerSlotsTotal: 3600 });
    metrics = new BrokerMetrics();
    metrics.attach(broker);
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
  });

  after(async () => {
    metrics.detach();
    await broker.shutdown();
    await client.close();
    removeDir(dir);
  });

  const send = (i: number) => {
    const properties = encodeProperties(new Map([['UNIQ_KEY', `U${i}`], ['TIMER_DELAY_MS', String(DELAY_MS)]]));
    const req = createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: TOPIC, c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: properties, j: 0, k: false }, Buffer.from(`b${i}`));
    return client.invokeSync(addr, req, 3000);
  };

  it('counts N pending timers, answers the codes, then counts their delivery', async () => {
    for (let i = 0; i < N; i++) assert.equal((await send(i)).code, ResponseCode.SUCCESS);
    await waitUntil('N timers in the wheel', () => broker.timerMetrics!.getTimingCount(TOPIC) === N);

    let text = await metrics.text();
    assert.equal(sampleSum(text, 'rocketmq_timing_messages', { topic: TOPIC, storage_type: 'local', storage_medium: 'disk', node_id: 'broker-tm' }), N);
    assert.equal(sampleSum(text, 'rocketmq_timer_enqueue_total', { topic: TOPIC }), N);
    assert.equal(sampleSum(text, 'rocketmq_timer_dequeue_total', { topic: TOPIC }), undefined, 'nothing delivered yet');
    assert.equal(sampleSum(text, 'rocketmq_timer_dequeue_lag'), N);
    assert.equal(sampleSum(text, 'rocketmq_timer_enqueue_lag'), 0);
    assert.equal(sampleSum(text, 'rocketmq_timer_message_snapshot', { timer_bound_s: '5' }), N, 'all due within 5 s');
    assert.equal(sampleSum(text, 'rocketmq_timer_message_snapshot', { timer_bound_s: '60' }), 0);
    assert.equal(sampleSum(text, 'rocketmq_delay_message_latency_seconds_count', { topic: TOPIC }), N);
    assert.equal(sampleSum(text, 'rocketmq_delay_message_latency_seconds_bucket', { topic: TOPIC, le: '60' }), N, 'delay 4 s is in the 60 s bucket');
    const dequeueLatencyMs = sampleSum(text, 'rocketmq_timer_dequeue_latency_milliseconds')!;
    assert.ok(dequeueLatencyMs >= 0 && dequeueLatencyMs < 1000, `dequeue latency ${dequeueLatencyMs} ms`);

    // GET_TIMER_CHECK_POINT: Apache's 56 bytes; the master committed all N TIMER_TOPIC entries
    let cp = decodeTimerCheckpoint(Buffer.alloc(56));
    await waitUntil('checkpoint counts N entries', async () => {
      const r = await client.invokeSync(addr, createRequestCommand(RequestCode.GET_TIMER_CHECK_POINT), 3000);
      assert.equal(r.code, ResponseCode.SUCCESS);
      assert.equal(r.body?.length, 56);
      cp = decodeTimerCheckpoint(r.body!);
      return cp.masterTimerQueueOffset === N;
    });
    assert.equal(cp.lastTimerQueueOffset, N);
    assert.ok(Math.abs(cp.lastReadTimeMs - Date.now()) < 2000, `read time ${cp.lastReadTimeMs} near now`);
    assert.ok(cp.dataVersionCounter > 0);

    // GET_TIMER_METRICS: TimerMetrics JSON
    const m = await client.invokeSync(addr, createRequestCommand(RequestCode.GET_TIMER_METRICS), 3000);
    assert.equal(m.code, ResponseCode.SUCCESS);
    const doc = JSON.parse(m.body!.toString('utf8')) as { dataVersion: { counter: number; timestamp: number; stateVersion: number }; timingCount: Record<string, { count: number; timeStamp: number }> };
    assert.equal(doc.timingCount[TOPIC]!.count, N);
    assert.ok(doc.dataVersion.counter >= N, `dataVersion counter ${doc.dataVersion.counter}`);
    assert.ok(Math.abs(doc.timingCount[TOPIC]!.timeStamp - Date.now()) < 5000);

    // they fire
    await waitUntil('all delivered', () => broker.timerMetrics!.getTimingCount(TOPIC) === 0, 10_000);
    await waitUntil('delivered into the topic', async () => broker.ctx.store.getMaxOffsetInQueue(TOPIC, 0) === N);
    text = await metrics.text();
    assert.equal(sampleSum(text, 'rocketmq_timing_messages', { topic: TOPIC }), 0);
    assert.equal(sampleSum(text, 'rocketmq_timer_dequeue_total', { topic: TOPIC }), N);
    assert.equal(sampleSum(text, 'rocketmq_timer_dequeue_lag'), 0);
    assert.equal(sampleSum(text, 'rocketmq_timer_message_snapshot', { timer_bound_s: '5' }), 0);

    // persisted like Apache's config/timermetrics
    const file = join(dir, 'config', 'timermetrics');
    await waitUntil('timermetrics written with count 0', () => {
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as typeof doc).timingCount[TOPIC]?.count === 0;
      } catch {
        return false;
      }
    });
    const persisted = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
    assert.equal(persisted.dataVersion.counter, 2 * N, 'N enqueues + N deliveries, each a new data version');
  });

  it('answers SYSTEM_ERROR for both codes when timerWheelEnable=false', async () => {
    const dir2 = tempDir('tsmq-timer-metrics-off-');
    const b = await BrokerController.create({ brokerConfig: { ...config(), storePathRootDir: dir2, timerWheelEnable: 'false' }, logger: silentLogger });
    await b.start();
    try {
      const a = `127.0.0.1:${b.port}`;
      const cp = await client.invokeSync(a, createRequestCommand(RequestCode.GET_TIMER_CHECK_POINT), 3000);
      assert.equal(cp.code, ResponseCode.SYSTEM_ERROR);
      assert.equal(cp.remark, 'The checkpoint is null');
      const m = await client.invokeSync(a, createRequestCommand(RequestCode.GET_TIMER_METRICS), 3000);
      assert.equal(m.code, ResponseCode.SYSTEM_ERROR);
      assert.equal(m.remark, 'The timer message store is null');
    } finally {
      await b.shutdown();
      removeDir(dir2);
    }
  });
});
