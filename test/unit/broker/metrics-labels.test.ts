/**
 * The `message_type` and `is_system` labels of the broker metrics as Apache 5.3.3 computes them
 * (BrokerMetricsManager.getMessageType / isSystem / isSystemGroup, MixAll.isSysConsumerGroup,
 * TopicValidator.isSystemTopic), on a real broker fed by raw SEND_MESSAGE_V2 requests and scraped
 * from the Prometheus endpoint; plus the label functions on their own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerController } from '../../../src/broker/broker-controller.js';
import { isMetricsSystemTopic, isSysConsumerGroup, isSystemGroup, metricsMessageType } from '../../../src/broker/stats/metrics-labels.js';
import type { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import { decodeMessageId } from '../../../src/common/message/msgid.js';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC = 'LabelsT';
const ORDER_TOPIC = 'LabelsOrderT';

describe('metrics labels message_type and is_system (Apache 5.3.3)', { timeout: 60_000 }, () => {
  let mb: MetricsBroker;
  let broker: BrokerController;
  let client: RemotingClient;
  let addr: string;

  before(async () => {
    mb = await startMetricsBroker('tsmq-metrics-labels-', { brokerName: 'broker-labels', brokerClusterName: 'LabelsCluster', transactionCheckInterval: '600000' });
    ({ broker, client, addr } = mb);
    const create = await client.invokeSync(addr, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: ORDER_TOPIC, defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: true }), 3000);
    assert.equal(create.code, ResponseCode.SUCCESS, create.remark ?? '');
    assert.equal(broker.ctx.topicConfigManager.isOrderTopic(ORDER_TOPIC), true);
  });

  after(async () => {
    await mb?.stop();
  });

  /** Sends one message; returns the topic it was stored under. */
  const send = async (topic: string, key: string, extra: Record<string, string>, sysFlag = 0): Promise<string> => {
    const props = new Map([['UNIQ_KEY', `U-${key}`], ['KEYS', key], ['WAIT', 'true'], ['PGROUP', 'PID_LABELS'], ...Object.entries(extra)]);
    const header = { a: 'PID_LABELS', b: topic, c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: sysFlag, i: encodeProperties(props), j: 0, k: false };
    const r = await client.invokeSync(addr, createRequestCommand(RequestCode.SEND_MESSAGE_V2, header, Buffer.from(`body-${key}`)), 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, `${key}: ${r.remark ?? ''}`);
    return (await broker.ctx.store.lookMessageByOffset(decodeMessageId(String(r.extFields!.msgId)).commitLogOffset))!.topic;
  };

  it('classifies sends in Apache order, lower case, under the stored topic; is_system by topic; retry topics not counted', async () => {
    assert.equal(await send(TOPIC, 'plain', {}), TOPIC);
    assert.equal(await send(TOPIC, 'fifo', { __SHARDINGKEY: 'g1' }), TOPIC);
    // a sharding key wins over a delay level (Apache checks FIFO before DELAY); stored under the schedule topic
    assert.equal(await send(TOPIC, 'fifo-delayed', { __SHARDINGKEY: 'g2', DELAY: '2' }), 'SCHEDULE_TOPIC_XXXX');
    assert.equal(await send(TOPIC, 'timer', { TIMER_DELIVER_MS: String(Date.now() + 3_600_000) }), 'rmq_sys_wheel_timer');
    // transaction wins over a sharding key
    assert.equal(await send(TOPIC, 'tx', { TRAN_MSG: 'true', __SHARDINGKEY: 'g3' }, 4), 'RMQ_SYS_TRANS_HALF_TOPIC');
    // an order topic without a sharding key is Normal (the topic's config is not looked at)
    assert.equal(await send(ORDER_TOPIC, 'ordered', {}), ORDER_TOPIC);
    assert.equal(await send('%RETRY%GID_LABELS', 'retry', {}), '%RETRY%GID_LABELS');

    const text = await mb.scrape();
    const inOf = (labels: Record<string, string>): number | undefined => sampleSum(text, 'rocketmq_messages_in_total', labels);
    assert.equal(inOf({ topic: TOPIC, message_type: 'normal', is_system: 'false' }), 1);
    assert.equal(inOf({ topic: TOPIC, message_type: 'fifo', is_system: 'false' }), 1);
    assert.equal(inOf({ topic: TOPIC }), 2, 'the delayed, timer and transactional sends count under their stored topics');
    assert.equal(inOf({ topic: 'SCHEDULE_TOPIC_XXXX', message_type: 'fifo', is_system: 'true' }), 1);
    assert.equal(inOf({ topic: 'rmq_sys_wheel_timer', message_type: 'delay', is_system: 'true' }), 1);
    assert.equal(inOf({ topic: 'RMQ_SYS_TRANS_HALF_TOPIC', message_type: 'transaction', is_system: 'true' }), 1);
    assert.equal(inOf({ topic: ORDER_TOPIC, message_type: 'normal', is_system: 'false' }), 1);
    assert.equal(inOf({ topic: '%RETRY%GID_LABELS' }), undefined, 'retry topics are not counted in');
    assert.equal(inOf({}), 6);
    for (const t of ['Normal', 'FIFO', 'Delay', 'Transaction']) assert.equal(inOf({ message_type: t }), undefined, `no capitalised ${t}`);
    assert.equal(sampleSum(text, 'rocketmq_message_size_count', { topic: TOPIC, message_type: 'normal', is_system: 'false' }), 1);
    assert.ok(sampleSum(text, 'rocketmq_throughput_in_total', { topic: 'rmq_sys_wheel_timer', message_type: 'delay', is_system: 'true' })! > 0);
  });

  it('messages out and DLQ carry is_system by topic and group; retry topics are not counted out', async () => {
    const stats = broker.ctx.brokerStats;
    stats.recordGet('GID_LABELS', TOPIC, 3, 300);
    stats.recordGet('CID_RMQ_SYS_LABELS', TOPIC, 2, 200);
    stats.recordGet('cid_rmq_sys_lower', TOPIC, 1, 100);
    stats.recordGet('GID_LABELS', 'LabelsCluster', 4, 400);
    stats.recordGet('GID_LABELS', '%RETRY%GID_LABELS', 5, 500);
    stats.recordDlq('cid_rmq_sys_lower', TOPIC);
    stats.recordDlq('GID_LABELS', TOPIC);
    const text = await mb.scrape();
    const outOf = (labels: Record<string, string>): number | undefined => sampleSum(text, 'rocketmq_messages_out_total', labels);
    assert.equal(outOf({ topic: TOPIC, consumer_group: 'GID_LABELS', is_system: 'false' }), 3);
    assert.equal(outOf({ topic: TOPIC, consumer_group: 'CID_RMQ_SYS_LABELS', is_system: 'true' }), 2);
    assert.equal(outOf({ topic: TOPIC, consumer_group: 'cid_rmq_sys_lower', is_system: 'false' }), 1, 'MixAll.isSysConsumerGroup is case-sensitive');
    assert.equal(outOf({ topic: 'LabelsCluster', consumer_group: 'GID_LABELS', is_system: 'true' }), 4, 'the cluster-name topic is a system topic');
    assert.equal(outOf({ topic: '%RETRY%GID_LABELS' }), undefined);
    assert.equal(sampleSum(text, 'rocketmq_throughput_out_total', { topic: TOPIC, consumer_group: 'CID_RMQ_SYS_LABELS', is_system: 'true' }), 200);
    assert.equal(sampleSum(text, 'rocketmq_send_to_dlq_messages_total', { topic: TOPIC, consumer_group: 'cid_rmq_sys_lower', is_system: 'true' }), 1, 'isSystemGroup ignores case');
    assert.equal(sampleSum(text, 'rocketmq_send_to_dlq_messages_total', { topic: TOPIC, consumer_group: 'GID_LABELS', is_system: 'false' }), 1);
  });

  it('label functions: type order, system topics of a running broker, the two group rules', () => {
    assert.equal(metricsMessageType(new Map()), 'normal');
    assert.equal(metricsMessageType(new Map([['__STARTDELIVERTIME', '1']])), 'delay');
    assert.equal(metricsMessageType(new Map([['TIMER_DELAY_SEC', '5'], ['__SHARDINGKEY', 'g']])), 'fifo');
    assert.equal(metricsMessageType(new Map([['TRAN_MSG', 'false'], ['DELAY', '3']])), 'delay');
    assert.equal(metricsMessageType(new Map([['TRAN_MSG', 'TRUE'], ['TIMER_DELAY_MS', '5']])), 'transaction', 'Boolean.parseBoolean ignores case');
    const scope = { brokerClusterName: 'C1', brokerName: 'b1' };
    for (const t of ['C1', 'b1', 'C1_REPLY_TOPIC', 'TBW102', 'SCHEDULE_TOPIC_XXXX', 'rmq_sys_anything', 'RMQ_SYS_TRACE_TOPIC', 'OFFSET_MOVED_EVENT']) assert.equal(isMetricsSystemTopic(t, scope), true, t);
    for (const t of ['C2', 'b1x', 'Orders', '%RETRY%G', 'RMQ_SYS_anything']) assert.equal(isMetricsSystemTopic(t, scope), false, t);
    assert.equal(isSysConsumerGroup('CID_RMQ_SYS_TRANS'), true);
    assert.equal(isSysConsumerGroup('cid_rmq_sys_trans'), false);
    assert.equal(isSystemGroup('cid_rmq_sys_trans'), true);
    assert.equal(isSystemGroup(''), false);
  });
});
