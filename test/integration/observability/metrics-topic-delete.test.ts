/**
 * A deleted topic takes its Prometheus series with it (soak finding: a broker creating and
 * deleting topics all day kept rocketmq_messages_in_total, rocketmq_throughput_in_total and 9
 * rocketmq_message_size series per topic it ever had — 3,000 temporary topics left ~33,000
 * series on /metrics). After DELETE_TOPIC_IN_BROKER no series carries the topic: messages and
 * throughput in, message size, half messages, transaction finish latency, the timer series
 * (enqueue/dequeue totals, delay latency, timing messages); a send to the topic created again
 * counts from 0. Apache keeps them until restart (OpenTelemetry keeps every attribute set).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import { decodeMessageId } from '../../../src/common/message/msgid.js';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC = 'SoakDeletedT';
const OTHER = 'SoakKeptT';

describe('a deleted topic loses its metric series', { timeout: 60_000 }, () => {
  let mb: MetricsBroker;
  let client: RemotingClient;
  let addr: string;

  before(async () => {
    mb = await startMetricsBroker('tsmq-topic-delete-metrics-', { brokerName: 'broker-del', transactionCheckInterval: '600000' });
    ({ client, addr } = mb);
  });

  after(async () => {
    await mb?.stop();
  });

  const invoke = async (code: number, header: Parameters<typeof createRequestCommand>[1], body?: Buffer) => {
    const r = await client.invokeSync(addr, createRequestCommand(code, header, body), 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, `${code}: ${r.remark ?? ''}`);
    return r;
  };
  const createTopic = (topic: string) =>
    invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
  const send = async (topic: string, key: string, extra: Record<string, string> = {}, sysFlag = 0) => {
    const props = new Map([['UNIQ_KEY', `U-${key}`], ['KEYS', key], ['WAIT', 'true'], ...Object.entries(extra)]);
    const header = { a: 'PID_DEL', b: topic, c: 'TBW102', d: 2, e: 0, f: 0, g: Date.now(), h: sysFlag, i: encodeProperties(props), j: 0, k: false };
    return invoke(RequestCode.SEND_MESSAGE_V2, header, Buffer.from(`body-${key}`));
  };
  /** Every sample line naming `topic` in a label value. */
  const linesOf = (text: string, topic: string) => text.split('\n').filter((l) => !l.startsWith('#') && l.includes(`topic="${topic}"`));
  const waitFor = async (what: string, ok: (text: string) => boolean): Promise<string> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const text = await mb.scrape();
      if (ok(text)) return text;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('drops every series of the topic on DELETE_TOPIC_IN_BROKER and counts from 0 when it comes back', async () => {
    await createTopic(TOPIC);
    await createTopic(OTHER);
    await send(TOPIC, 'n1');
    await send(OTHER, 'o1');
    // a timer message of the topic (stored under rmq_sys_wheel_timer, counted per real topic by the wheel)
    await send(TOPIC, 't1', { TIMER_DELAY_SEC: '1' });
    // a transactional message of the topic, committed
    const half = await send(TOPIC, 'x1', { TRAN_MSG: 'true', PGROUP: 'PID_DEL' }, 4);
    const before = await waitFor('the timer delivery and the half message', (t) =>
      sampleSum(t, 'rocketmq_timer_dequeue_total', { topic: TOPIC }) === 1 && sampleSum(t, 'rocketmq_half_messages', { topic: TOPIC }) === 1);
    await invoke(RequestCode.END_TRANSACTION, {
      producerGroup: 'PID_DEL',
      tranStateTableOffset: Number(half.extFields!.queueOffset),
      commitLogOffset: decodeMessageId(String(half.extFields!.msgId)).commitLogOffset,
      commitOrRollback: 8,
      fromTransactionCheck: false,
      msgId: 'U-x1',
    });
    const withTopic = await waitFor('the finish latency', (t) => sampleSum(t, 'rocketmq_finish_message_latency_milliseconds_count', { topic: TOPIC }) === 1);

    assert.equal(sampleSum(before, 'rocketmq_messages_in_total', { topic: TOPIC, message_type: 'normal' }), 1);
    assert.equal(sampleSum(withTopic, 'rocketmq_message_size_count', { topic: TOPIC }), 1);
    assert.equal(sampleSum(withTopic, 'rocketmq_timer_enqueue_total', { topic: TOPIC }), 1);
    assert.equal(sampleSum(withTopic, 'rocketmq_timing_messages', { topic: TOPIC }), 0);
    assert.equal(sampleSum(withTopic, 'rocketmq_half_messages', { topic: TOPIC }), 0);
    assert.ok(linesOf(withTopic, TOPIC).length >= 20, `series of ${TOPIC} before the delete: ${linesOf(withTopic, TOPIC).length}`);

    await invoke(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: TOPIC });
    const after = await mb.scrape();
    assert.deepEqual(linesOf(after, TOPIC), [], 'no series names the deleted topic');
    // the other topic keeps its series
    assert.equal(sampleSum(after, 'rocketmq_messages_in_total', { topic: OTHER }), 1);
    assert.equal(sampleSum(after, 'rocketmq_message_size_count', { topic: OTHER }), 1);

    // created again: its counters start from 0
    await createTopic(TOPIC);
    await send(TOPIC, 'n2');
    const again = await mb.scrape();
    assert.equal(sampleSum(again, 'rocketmq_messages_in_total', { topic: TOPIC }), 1);
    assert.equal(sampleSum(again, 'rocketmq_message_size_count', { topic: TOPIC }), 1);
    assert.equal(sampleSum(again, 'rocketmq_timer_enqueue_total', { topic: TOPIC }), undefined);
  });
});
