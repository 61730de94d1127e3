/**
 * Pop consumption counts as consumption in the broker statistics and the Prometheus metrics, as
 * Apache's PopMessageProcessor counts it (incGroupGetNums/Size, incBrokerGetNums, messagesOutTotal,
 * throughputOutTotal): a remoting POP_MESSAGE (5.x push consumer in pop mode; the gRPC front's
 * ReceiveMessage takes the same pop path, test/integration/grpc/namespace.test.ts) moves
 * rocketmq_messages_out_total / rocketmq_throughput_out_total and GROUP_GET_NUMS / BROKER_GET_NUMS.
 * Before, only PULL_MESSAGE did, so a RocketMQ 5 consumer's dashboard showed nothing consumed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { readRecordTotalSize } from '../../../src/common/message/record-codec.js';
import { rawInvoke } from '../../support/raw-remoting.js';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC = 'POP_OUT_T';
const GROUP = 'POP_OUT_G';

describe('pop consumption in the metrics and broker statistics', { timeout: 30_000 }, () => {
  let b: MetricsBroker;

  before(async () => {
    b = await startMetricsBroker('tsmq-pop-metrics-', {});
    const created = await b.client.invokeSync(b.addr, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: TOPIC, readQueueNums: 2, writeQueueNums: 2, perm: 6 }), 3000);
    assert.equal(created.code, 0, created.remark ?? '');
    for (let i = 0; i < 5; i++) {
      const r = await b.client.invokeSync(
        b.addr,
        createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: TOPIC, c: 'TBW102', d: 2, e: i % 2, f: 0, g: Date.now(), h: 0, i: 'TAGS\u0001T\u0002', j: 0, k: false }, Buffer.from(`pop-body-${i}`)),
        3000,
      );
      assert.equal(r.code, 0, r.remark ?? '');
    }
  });

  after(async () => {
    await b?.stop();
  });

  it('POP_MESSAGE of 5 messages: rocketmq_messages_out_total 5, rocketmq_throughput_out_total = their record bytes, GROUP_GET_NUMS 5', async () => {
    const reply = await rawInvoke(b.addr, {
      code: RequestCode.POP_MESSAGE,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', maxMsgNums: '32', invisibleTime: '60000', pollTime: '0', bornTime: String(Date.now()), initMode: '0', expType: 'TAG', exp: '*', order: 'false' },
    });
    assert.equal(reply.header.code, 0, reply.header.remark ?? '');
    const body = reply.body!;
    let n = 0;
    for (let at = 0; at < body.length; at += readRecordTotalSize(body, at)) n++;
    assert.equal(n, 5);
    const text = await b.scrape();
    const labels = { topic: TOPIC, consumer_group: GROUP };
    assert.equal(sampleSum(text, 'rocketmq_messages_out_total', labels), 5);
    assert.equal(sampleSum(text, 'rocketmq_throughput_out_total', labels), body.length);
    const stats = b.broker.ctx.brokerStats;
    assert.equal(stats.getStatsItem('GROUP_GET_NUMS', `${TOPIC}@${GROUP}`)?.value, 5);
    assert.equal(stats.getStatsItem('GROUP_GET_SIZE', `${TOPIC}@${GROUP}`)?.value, body.length);
  });
});
