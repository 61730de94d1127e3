import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';
import { consumeStatsJson, topicStatsTableJson } from '../../../src/broker/processors/admin-stats-processors.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const T0 = 1_700_000_000_000;
const key = (topic: string, queueId: number) => `{"brokerName":"broker-a","queueId":${queueId},"topic":"${topic}"}`;

/** Topic TS with 3 write / 2 read queues: q0 gets 3 messages (1 s apart), q1 1, q2 none. */
async function setup(): Promise<void> {
  h = await BrokerHarness.create({ clockStartMs: T0 });
  h.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('TS', { readQueueNums: 2, writeQueueNums: 3 }));
  for (const queueId of [0, 0, 1, 0]) {
    await h.send('TS', 'x', { queueId });
    h.clock.advance(1000);
  }
}

describe('GET_TOPIC_STATS_INFO (202)', () => {
  it('TopicStatsTable with MessageQueue object keys, one entry per write queue (exact fastjson text)', async () => {
    await setup();
    h.fake.setMinOffset('TS', 0, 1);
    const r = await h.call(RequestCode.GET_TOPIC_STATS_INFO, { topic: 'TS' });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(
      r.body!.toString(),
      `{"offsetTable":{${key('TS', 0)}:{"lastUpdateTimestamp":${T0 + 3000},"maxOffset":3,"minOffset":1},` +
        `${key('TS', 1)}:{"lastUpdateTimestamp":${T0 + 2000},"maxOffset":1,"minOffset":0},` +
        `${key('TS', 2)}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}},"topicPutTps":1.0}`, // 4 puts in 4 s

    );
  });

  it('unknown topic → 17 TOPIC_NOT_EXIST "topic[X] not exist"; missing header → SYSTEM_ERROR', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.GET_TOPIC_STATS_INFO, { topic: 'NOPE' });
    assert.equal(r.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.equal(r.remark, 'topic[NOPE] not exist');
    await assert.rejects(async () => h.call(RequestCode.GET_TOPIC_STATS_INFO, {}), /the custom field <topic> is null/);
  });
});

describe('GET_CONSUME_STATS (208)', () => {
  it('ConsumeStats per read queue: brokerOffset = max, consumerOffset = committed (none → 0), lastTimestamp of entry consumerOffset-1', async () => {
    await setup();
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TS', 0, 2);
    const r = await h.call(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'G', topic: 'TS' });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(
      r.body!.toString(),
      `{"consumeTps":0.0,"offsetTable":{${key('TS', 0)}:{"brokerOffset":3,"consumerOffset":2,"lastTimestamp":${T0 + 1000},"pullOffset":2},` +
        `${key('TS', 1)}:{"brokerOffset":1,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}`,
    );
  });

  it('without topic: every topic the group committed offsets for; unknown topics skipped; unknown group → empty table', async () => {
    await setup();
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TS', 1, 1);
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'GONE', 0, 5);
    h.ctx.consumerOffsetManager.commitOffset('test', 'OTHER', 'TS', 0, 3);
    const r = await h.call(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'G' });
    assert.equal(
      r.body!.toString(),
      `{"consumeTps":0.0,"offsetTable":{${key('TS', 0)}:{"brokerOffset":3,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0},` +
        `${key('TS', 1)}:{"brokerOffset":1,"consumerOffset":1,"lastTimestamp":${T0 + 2000},"pullOffset":1}}}`,
    );
    const none = await h.call(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'NOBODY' });
    assert.equal(none.code, ResponseCode.SUCCESS);
    assert.equal(none.body!.toString(), '{"consumeTps":0.0,"offsetTable":{}}');
  });

  it('topics the online group does not subscribe to are left out (Apache findSubscriptionData check)', async () => {
    await setup();
    h.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('TX', { readQueueNums: 1, writeQueueNums: 1 }));
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TS', 0, 1);
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TX', 0, 0);
    await h.heartbeat('c1', 'G', 'TS');
    const r = await h.call(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'G' });
    const text = r.body!.toString();
    assert.ok(text.includes(key('TS', 0)));
    assert.ok(!text.includes('"topic":"TX"'), text);
  });
});

describe('TopicStatsTable / ConsumeStats text', () => {
  it('entries are ordered by topic then queue id; doubles are written like fastjson', () => {
    const mq = (topic: string, queueId: number) => ({ topic, brokerName: 'b', queueId });
    assert.equal(
      topicStatsTableJson([
        [mq('B', 1), { minOffset: 0, maxOffset: 2, lastUpdateTimestamp: 5 }],
        [mq('A', 0), { minOffset: 1, maxOffset: 1, lastUpdateTimestamp: 0 }],
      ]),
      '{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"A"}:{"lastUpdateTimestamp":0,"maxOffset":1,"minOffset":1},{"brokerName":"b","queueId":1,"topic":"B"}:{"lastUpdateTimestamp":5,"maxOffset":2,"minOffset":0}},"topicPutTps":0.0}',
    );
    assert.equal(consumeStatsJson([], 1.5), '{"consumeTps":1.5,"offsetTable":{}}');
    assert.equal(consumeStatsJson([], 3), '{"consumeTps":3.0,"offsetTable":{}}');
  });
});

describe('real rates: consumeTps (208), topicPutTps (202), VIEW_BROKER_STATS_DATA (315)', () => {
  it('pulls and puts counted by BrokerStatsManager show up as rates; the pull end is pullOffset; unknown stats → SYSTEM_ERROR', async () => {
    await setup();
    const stats = h.ctx.brokerStats;
    h.ctx.consumerOffsetManager.commitOffset('test', 'G', 'TS', 0, 1);
    h.ctx.consumerOffsetManager.commitPullOffset('G', 'TS', 0, 3);
    stats.recordGet('G', 'TS', 3, 600);
    stats.recordPut('TS', 4, 800);
    h.clock.advance(2000);
    const text = (await h.call(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'G', topic: 'TS' })).body!.toString();
    assert.match(text, /^\{"consumeTps":1\.5,/, '3 messages pulled 2 s ago');
    assert.match(text, /"consumerOffset":1,"lastTimestamp":\d+,"pullOffset":3/);
    const ts = (await h.call(RequestCode.GET_TOPIC_STATS_INFO, { topic: 'TS' })).body!.toString();
    // setup() put 4 messages from T0 on, then 4 more: 8 messages in 6 s
    assert.match(ts, /"topicPutTps":1\.3333333333333333\}$/);
    const view = await h.call(RequestCode.VIEW_BROKER_STATS_DATA, { statsName: 'GROUP_GET_NUMS', statsKey: 'TS@G' });
    assert.equal(view.code, ResponseCode.SUCCESS);
    assert.deepEqual(JSON.parse(view.body!.toString()), {
      statsDay: { avgpt: 3, sum: 3, tps: 1.5 },
      statsHour: { avgpt: 3, sum: 3, tps: 1.5 },
      statsMinute: { avgpt: 3, sum: 3, tps: 1.5 },
    });
    const missing = await h.call(RequestCode.VIEW_BROKER_STATS_DATA, { statsName: 'GROUP_GET_NUMS', statsKey: 'TS@NOBODY' });
    assert.equal(missing.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(missing.remark, 'The stats <GROUP_GET_NUMS> <TS@NOBODY> not exist');
  });
});
