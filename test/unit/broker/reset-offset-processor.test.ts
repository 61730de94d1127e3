import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { isOneway } from '../../../src/remoting/protocol/commands.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';
import { resetOffsetBodyForCJson } from '../../../src/broker/processors/reset-offset-processor.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const T0 = 1_700_000_000_000;
const key = (queueId: number) => `{"brokerName":"broker-a","queueId":${queueId},"topic":"TR"}`;

/** Topic TR, 2 queues; q0: 4 messages stored at T0, T0+1000, …; q1: 2 messages at T0+4000, T0+5000. Group G committed 4 and 2. */
async function setup(): Promise<void> {
  h = await BrokerHarness.create({ clockStartMs: T0 });
  h.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('TR', { readQueueNums: 2, writeQueueNums: 2 }));
  for (const queueId of [0, 0, 0, 0, 1, 1]) {
    await h.send('TR', 'x', { queueId });
    h.clock.advance(1000);
  }
  h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TR', 0, 4);
  h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TR', 1, 2);
}

const reset = (timestamp: number, isForce = true, group = 'G', topic = 'TR') =>
  h.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic, group, timestamp: String(timestamp), isForce: String(isForce) });

describe('INVOKE_BROKER_TO_RESET_OFFSET (222)', () => {
  it('group offline → 206 CONSUMER_NOT_ONLINE with Apache\'s remark; offsets untouched', async () => {
    await setup();
    const r = await reset(0);
    assert.equal(r.code, ResponseCode.CONSUMER_NOT_ONLINE);
    assert.equal(r.remark, 'Consumer not online, so can not reset offset, Group: G Topic: TR Timestamp: 0');
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'TR', 0), 4);
  });

  it('group online → SUCCESS with ResetOffsetBody, 220 pushed oneway to every consumer connection, offsets stored', async () => {
    await setup();
    const c1 = new FakeChannel('10.0.0.1:1');
    const c2 = new FakeChannel('10.0.0.2:2');
    await h.heartbeat('c1', 'G', 'TR', '*', c1);
    await h.heartbeat('c2', 'G', 'TR', '*', c2);
    c1.sent.length = 0;
    c2.sent.length = 0;
    const r = await reset(T0 + 1500);
    assert.equal(r.code, ResponseCode.SUCCESS);
    const body = `{"offsetTable":{${key(0)}:2,${key(1)}:0}}`;
    assert.equal(r.body!.toString(), body);
    for (const c of [c1, c2]) {
      assert.equal(c.sent.length, 1);
      const push = c.sent[0]!;
      assert.equal(push.code, RequestCode.RESET_CONSUMER_CLIENT_OFFSET);
      assert.ok(isOneway(push));
      assert.deepEqual(push.extFields, { topic: 'TR', group: 'G', timestamp: String(T0 + 1500), isForce: 'true' });
      assert.equal(push.body!.toString(), body);
    }
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'TR', 0), 2);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'TR', 1), 0);
  });

  it('without isForce an offset only moves back; timestamp -1 means the queue max', async () => {
    await setup();
    await h.heartbeat('c1', 'G', 'TR');
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TR', 0, 1);
    const r = await reset(T0 + 2500, false);
    assert.equal(r.body!.toString(), `{"offsetTable":{${key(0)}:1,${key(1)}:0}}`);
    const max = await reset(-1, true);
    assert.equal(max.body!.toString(), `{"offsetTable":{${key(0)}:4,${key(1)}:2}}`);
    const later = await reset(T0 + 99_000, true);
    assert.equal(later.body!.toString(), `{"offsetTable":{${key(0)}:4,${key(1)}:2}}`);
  });

  it('unknown topic, or a queue without committed offset → SYSTEM_ERROR with Apache\'s remarks', async () => {
    await setup();
    await h.heartbeat('c1', 'G', 'TR');
    const noTopic = await reset(0, true, 'G', 'NOPE');
    assert.equal(noTopic.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(noTopic.remark, '[reset-offset] reset offset failed, no topic in this broker. topic=NOPE');
    const noGroup = await reset(0, true, 'G2');
    assert.equal(noGroup.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(noGroup.remark, 'THe consumer group <G2> not exist');
  });

  it('C++ requesters get the list form in the 220 body; the reply keeps the map form', async () => {
    await setup();
    const c = new FakeChannel('10.0.0.3:3');
    await h.heartbeat('c1', 'G', 'TR', '*', c);
    c.sent.length = 0;
    const handler = h.broker.handlerFor(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)!;
    const { createRequestCommand } = await import('../../../src/remoting/protocol/commands.js');
    const req = createRequestCommand(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic: 'TR', group: 'G', timestamp: '0', isForce: 'true' });
    req.language = 'CPP';
    const r = (await handler({ channel: h.channel, request: req }))!;
    assert.equal(r.body!.toString(), `{"offsetTable":{${key(0)}:0,${key(1)}:0}}`);
    assert.equal(
      c.sent[0]!.body!.toString(),
      '{"offsetTable":[{"brokerName":"broker-a","offset":0,"queueId":0,"topic":"TR"},{"brokerName":"broker-a","offset":0,"queueId":1,"topic":"TR"}]}',
    );
    assert.equal(resetOffsetBodyForCJson([]), '{"offsetTable":[]}');
  });
});
