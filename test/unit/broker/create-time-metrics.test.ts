/**
 * rocketmq_topic_create_execution_time_milliseconds{invocation_status,is_system} and
 * rocketmq_consumer_group_create_execution_time_milliseconds{invocation_status} on a real broker
 * (sockets, real store) scraped from its Prometheus endpoint, as Apache 5.3.3's
 * AdminBrokerProcessor records them: one observation per create request, "failure" when it was
 * refused, is_system from the topic name; the list requests count once each.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { ExtFieldValue } from '../../../src/remoting/protocol/remoting-command.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC_TIME = 'rocketmq_topic_create_execution_time_milliseconds';
const GROUP_TIME = 'rocketmq_consumer_group_create_execution_time_milliseconds';

describe('topic / group create execution time metrics', { timeout: 60_000 }, () => {
  let mb: MetricsBroker;
  let client: RemotingClient;
  let addr: string;

  before(async () => {
    mb = await startMetricsBroker('tsmq-create-metrics-', { brokerName: 'broker-ct' });
    ({ client, addr } = mb);
  });

  after(async () => {
    await mb?.stop();
  });

  const call = async (code: number, header: Record<string, ExtFieldValue> | null, body?: unknown): Promise<number> => {
    const r = await client.invokeSync(addr, createRequestCommand(code, header, body === undefined ? undefined : Buffer.from(JSON.stringify(body))), 3000);
    return r.code;
  };
  const topicHeader = (topic: string): Record<string, ExtFieldValue> => ({ topic, defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });

  it('counts each create request with its outcome and whether the topic is a system topic', async () => {
    assert.equal(await call(RequestCode.UPDATE_AND_CREATE_TOPIC, topicHeader('CtPlain')), ResponseCode.SUCCESS);
    assert.equal(await call(RequestCode.UPDATE_AND_CREATE_TOPIC, topicHeader('CtPlain2')), ResponseCode.SUCCESS);
    // a system topic may not be created by a request (Apache: "conflict with system topic"): a failure, is_system true
    assert.notEqual(await call(RequestCode.UPDATE_AND_CREATE_TOPIC, topicHeader('rmq_sys_ct_topic')), ResponseCode.SUCCESS);
    assert.notEqual(await call(RequestCode.UPDATE_AND_CREATE_TOPIC, topicHeader('bad topic name!')), ResponseCode.SUCCESS);
    const list = { topicConfigList: [{ topicName: 'CtList1', readQueueNums: 1, writeQueueNums: 1, perm: 6 }, { topicName: 'CtList2', readQueueNums: 1, writeQueueNums: 1, perm: 6 }] };
    assert.equal(await call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, {}, list), ResponseCode.SUCCESS);
    assert.equal(await call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, { groupName: 'GID_CT', consumeEnable: true }), ResponseCode.SUCCESS);

    const text = await mb.scrape();
    assert.equal(sampleSum(text, `${TOPIC_TIME}_count`, { invocation_status: 'success', is_system: 'false' }), 3, 'two single creates and one list');
    assert.equal(sampleSum(text, `${TOPIC_TIME}_count`, { invocation_status: 'failure', is_system: 'true' }), 1);
    assert.equal(sampleSum(text, `${TOPIC_TIME}_count`, { invocation_status: 'success', is_system: 'true' }), undefined);
    assert.equal(sampleSum(text, `${TOPIC_TIME}_count`, { invocation_status: 'failure', is_system: 'false' }), 1);
    assert.equal(sampleSum(text, `${TOPIC_TIME}_bucket`, { invocation_status: 'success', is_system: 'false', le: '+Inf' }), 3);
    assert.ok(sampleSum(text, `${TOPIC_TIME}_bucket`, { invocation_status: 'success', is_system: 'false', le: '5000' })! <= 3);
    assert.equal(sampleSum(text, `${GROUP_TIME}_count`, { invocation_status: 'success' }), 1);
    assert.match(text, new RegExp(`${GROUP_TIME}_bucket\\{[^}]*le="10"`), "Apache's buckets 10, 100, 1000, 3000, 5000 ms");
  });
});
