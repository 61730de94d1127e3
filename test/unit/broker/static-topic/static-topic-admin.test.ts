/**
 * 513 UPDATE_AND_CREATE_STATIC_TOPIC, 351 GET_TOPIC_CONFIG with lo and 215 DELETE_TOPIC_IN_BROKER
 * on an in-process broker (BrokerHarness, brokerName broker-a): bad input is refused with nothing
 * changed; a valid mapping creates the topic, is served with lo=true and dropped with the topic.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from '../support/broker-harness.js';
import { RequestCode } from '../../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../../src/remoting/codes/response-code.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const header = (topic: string) => ({ topic, defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, force: false });
// as fastjson writes it: integer map keys bare
const body = (topic: string, epoch: number, queueIdOf1 = 1): Buffer => Buffer.from(
  `{"bname":"broker-a","currIdMap":{},"dirty":false,"epoch":${epoch},"hostedQueues":{0:[{"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":0,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}],1:[{"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":${queueIdOf1},"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}]},"scope":"__global__","topic":"${topic}","totalQueues":2}`,
);

describe('static topic administration (513, 351 lo, 215)', () => {
  it('refuses bad input and changes nothing', async () => {
    h = await BrokerHarness.create();
    const sys = await h.call(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, header('SCHEDULE_TOPIC_XXXX'), body('SCHEDULE_TOPIC_XXXX', 1));
    assert.equal(sys.code, ResponseCode.INVALID_PARAMETER);
    const garbage = await h.call(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, header('S'), Buffer.from('{not json'));
    assert.equal(garbage.code, ResponseCode.SYSTEM_ERROR);
    assert.match(garbage.remark!, /bad static topic mapping/);
    const other = await h.call(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, header('S'), Buffer.from(body('S', 1).toString().replaceAll('broker-a', 'broker-x')));
    assert.equal(other.code, ResponseCode.SYSTEM_ERROR);
    assert.match(other.remark!, /for broker broker-x, this broker is broker-a/);
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('S'), undefined);
    assert.equal(h.ctx.topicQueueMappingManager.get('S'), undefined);
  });

  it('creates the topic, serves the mapping with lo=true, refuses a leader change at an equal epoch, drops it with the topic', async () => {
    h = await BrokerHarness.create();
    const ok = await h.call(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, header('S'), body('S', 5));
    assert.equal(ok.code, ResponseCode.SUCCESS, ok.remark ?? '');
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('S')?.writeQueueNums, 2);
    const withLo = JSON.parse((await h.call(RequestCode.GET_TOPIC_CONFIG, { topic: 'S', lo: true })).body!.toString('utf8'));
    assert.equal(withLo.mappingDetail.epoch, 5);
    assert.equal(withLo.mappingDetail.hostedQueues['1'][0].queueId, 1);
    const without = JSON.parse((await h.call(RequestCode.GET_TOPIC_CONFIG, { topic: 'S' })).body!.toString('utf8'));
    assert.equal(without.mappingDetail, undefined);
    const changed = await h.call(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, header('S'), body('S', 5, 0));
    assert.equal(changed.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(changed.remark, 'The new leader is different but epoch equal');
    assert.equal(h.ctx.topicQueueMappingManager.get('S')!.hostedQueues.get(1)![0]!.queueId, 1, 'nothing changed');
    const del = await h.call(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: 'S' });
    assert.equal(del.code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.topicQueueMappingManager.get('S'), undefined);
  });
});
