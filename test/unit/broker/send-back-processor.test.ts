import { describe, it, afterEach } from 'node:test';
import { deflateSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { MessageExt } from '../../../src/common/message/message.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

/** The way ali-ons sends code 36 for a consumed message. */
function sendBack(msg: MessageExt, group: string, delayLevel = 0, maxReconsumeTimes: number | undefined = 16) {
  const ext: Record<string, string | number | boolean> = {
    offset: msg.commitLogOffset,
    group,
    delayLevel,
    originMsgId: msg.msgId,
    originTopic: msg.properties.get('RETRY_TOPIC') ?? msg.topic,
    unitMode: false,
  };
  if (maxReconsumeTimes !== undefined) ext.maxReconsumeTimes = maxReconsumeTimes;
  return h.call(RequestCode.CONSUMER_SEND_MSG_BACK, ext);
}

/** Delivers a due schedule message by hand: what ScheduleMessageService does. */
async function deliverRetry(): Promise<MessageExt> {
  const level = Number(h.fake.puts.at(-1)!.properties.get('DELAY'));
  h.clock.advance(h.ctx.delayLevels.delayMs(level)!);
  await h.broker.scheduleMessageService.deliverDueMessages(level);
  const last = h.fake.puts.at(-1)!;
  assert.equal(last.topic.startsWith('%RETRY%'), true, 'delivered to the retry topic');
  return last;
}

describe('CONSUMER_SEND_MSG_BACK (36)', () => {
  it('copies the message to %RETRY%<group> through the schedule topic, level 3 + reconsumeTimes', async () => {
    h = await BrokerHarness.create();
    await h.send('TopicR', deflateSync('payload'), { tags: 'TagA', props: { KEYS: 'k1', UNIQ_KEY: 'U1' }, sysFlag: MessageSysFlag.COMPRESSED_FLAG });
    const original = h.fake.puts[0]!;
    const r = await sendBack(original, 'GR');
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.brokerStats.getStatsItem('SNDBCK_PUT_NUMS', 'TopicR@GR')?.value, 1, 'counted as Apache SNDBCK_PUT_NUMS <originTopic>@<group>');
    assert.equal(h.ctx.brokerStats.getStatsItem('TOPIC_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX')?.value, 1, 'the retry copy counts under the schedule topic it is stored under (Apache: incTopicPutNums(msgInner.getTopic()) after the delay rewrite)');
    assert.equal(h.ctx.brokerStats.getStatsItem('TOPIC_PUT_NUMS', '%RETRY%GR'), undefined, 'not yet under the retry topic (its delivery will be)');
    assert.equal(h.ctx.brokerStats.getStatsItem('TOPIC_PUT_SIZE', 'SCHEDULE_TOPIC_XXXX')?.value, h.ctx.brokerStats.totals.putMessageSizeTotal - h.ctx.brokerStats.getStatsItem('TOPIC_PUT_SIZE', 'TopicR')!.value, 'and its bytes');
    assert.equal(h.ctx.brokerStats.getStatsItem('BROKER_PUT_NUMS', 'DefaultCluster')?.value, 1, 'Apache: a send-back never adds to BROKER_PUT_NUMS (only the send did)');
    assert.equal(h.ctx.brokerStats.dayTotals().msgPutTotalTodayNow, 1, 'nor to msgPutTotalTodayNow');
    assert.equal(h.ctx.brokerStats.totals.putMessageTimesTotal, 2, 'the store totals count every put');
    const scheduled = h.fake.puts[1]!;
    assert.equal(scheduled.topic, 'SCHEDULE_TOPIC_XXXX');
    assert.equal(scheduled.queueId, 2, 'level 3 = queue 2');
    assert.equal(scheduled.properties.get('DELAY'), '3');
    assert.equal(scheduled.properties.get('REAL_TOPIC'), '%RETRY%GR');
    assert.equal(scheduled.properties.get('REAL_QID'), '0');
    assert.equal(scheduled.properties.get('RETRY_TOPIC'), 'TopicR');
    assert.equal(scheduled.properties.get('ORIGIN_MESSAGE_ID'), original.msgId);
    assert.equal(scheduled.properties.get('WAIT'), 'false');
    assert.equal(scheduled.properties.get('TAGS'), 'TagA');
    assert.equal(scheduled.properties.get('UNIQ_KEY'), 'U1');
    assert.equal(scheduled.reconsumeTimes, 1);
    assert.equal(scheduled.sysFlag & MessageSysFlag.COMPRESSED_FLAG, MessageSysFlag.COMPRESSED_FLAG);
    assert.deepEqual(scheduled.body, original.body);
    assert.equal(scheduled.bornTimestamp, original.bornTimestamp);
    const retryTopic = h.ctx.topicConfigManager.selectTopicConfig('%RETRY%GR')!;
    assert.deepEqual([retryTopic.readQueueNums, retryTopic.writeQueueNums, retryTopic.perm], [1, 1, 6]);

    const retry1 = await deliverRetry();
    assert.equal(retry1.topic, '%RETRY%GR');
    assert.equal(retry1.properties.get('DELAY'), '3', 'the stored copy keeps DELAY, as Apache\'s (schedule-message-service.ts messageTimeUp)');
    assert.equal(retry1.reconsumeTimes, 1);

    // Second failure: level 3 + 1 = 4; RETRY_TOPIC and ORIGIN_MESSAGE_ID are kept from the first.
    assert.equal((await sendBack(retry1, 'GR')).code, ResponseCode.SUCCESS);
    const scheduled2 = h.fake.puts.at(-1)!;
    assert.equal(scheduled2.properties.get('DELAY'), '4');
    assert.equal(scheduled2.properties.get('RETRY_TOPIC'), 'TopicR');
    assert.equal(scheduled2.properties.get('ORIGIN_MESSAGE_ID'), original.msgId);
    assert.equal(scheduled2.reconsumeTimes, 2);
  });

  it('an explicit delayLevel is used as is', async () => {
    h = await BrokerHarness.create();
    await h.send('TopicR', 'x');
    await sendBack(h.fake.puts[0]!, 'GR', 7);
    assert.equal(h.fake.puts[1]!.properties.get('DELAY'), '7');
    assert.equal(h.fake.puts[1]!.queueId, 6);
  });

  it('B36 after maxReconsumeTimes the message goes to %DLQ%<group> at once: no DELAY, never via the schedule topic', async () => {
    h = await BrokerHarness.create();
    await h.send('TopicB36', 'fails always', { tags: 'T', props: { UNIQ_KEY: 'U36' } });
    const original = h.fake.puts[0]!;
    let current = original;
    for (let attempt = 0; attempt < 2; attempt++) {
      assert.equal((await sendBack(current, 'G36', 4, 2)).code, ResponseCode.SUCCESS);
      assert.equal(h.fake.puts.at(-1)!.topic, 'SCHEDULE_TOPIC_XXXX');
      current = await deliverRetry();
    }
    assert.equal(current.reconsumeTimes, 2);
    const putsBefore = h.fake.puts.length;
    const sendBackTime = h.clock.nowMs();
    const stats = h.ctx.brokerStats;
    const brokerPutsBefore = stats.getStatsItem('BROKER_PUT_NUMS', 'DefaultCluster')!.value;
    const schedulePutsBefore = stats.getStatsItem('TOPIC_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX')!.value;
    const storePutsBefore = stats.totals.putMessageTimesTotal;
    assert.equal((await sendBack(current, 'G36', 4, 2)).code, ResponseCode.SUCCESS);
    assert.equal(stats.getStatsItem('TOPIC_PUT_NUMS', '%DLQ%G36'), undefined, 'Apache counts no topic put for a DLQ copy (not via the schedule topic)');
    assert.equal(stats.getStatsItem('TOPIC_PUT_SIZE', '%DLQ%G36'), undefined);
    assert.equal(stats.getStatsItem('TOPIC_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX')!.value, schedulePutsBefore);
    assert.equal(stats.getStatsItem('BROKER_PUT_NUMS', 'DefaultCluster')!.value, brokerPutsBefore, 'nor a BROKER_PUT_NUMS');
    assert.equal(stats.getStatsItem('DLQ_PUT_NUMS', 'TopicB36@G36')?.value, 1);
    assert.equal(stats.totals.putMessageTimesTotal, storePutsBefore + 1, 'the store totals count it');
    assert.equal(h.fake.puts.length, putsBefore + 1, 'exactly one put');
    const dlq = h.fake.puts.at(-1)!;
    assert.equal(dlq.topic, '%DLQ%G36');
    assert.equal(dlq.storeTimestamp, sendBackTime, 'stored at send-back time');
    assert.equal(dlq.properties.has('DELAY'), false);
    assert.equal(dlq.properties.get('RETRY_TOPIC'), 'TopicB36');
    assert.equal(dlq.properties.get('ORIGIN_MESSAGE_ID'), original.msgId);
    assert.equal(dlq.properties.get('UNIQ_KEY'), 'U36');
    assert.equal(dlq.reconsumeTimes, 3);
    const dlqTopic = h.ctx.topicConfigManager.selectTopicConfig('%DLQ%G36')!;
    assert.deepEqual([dlqTopic.readQueueNums, dlqTopic.writeQueueNums, dlqTopic.perm], [1, 1, 6]);
  });

  it('delayLevel < 0 sends straight to the DLQ; without maxReconsumeTimes the group retryMaxTimes (16) applies', async () => {
    h = await BrokerHarness.create();
    await h.send('TopicN', 'x', { props: { DELAY: '2' } });
    await h.broker.scheduleMessageService.deliverDueMessages(2); // not due yet
    h.clock.advance(5000);
    await h.broker.scheduleMessageService.deliverDueMessages(2);
    const delivered = h.fake.puts.at(-1)!;
    assert.equal(delivered.topic, 'TopicN');
    assert.equal((await sendBack(delivered, 'GN', -1)).code, ResponseCode.SUCCESS);
    const dlq = h.fake.puts.at(-1)!;
    assert.equal(dlq.topic, '%DLQ%GN');
    assert.equal(dlq.properties.has('DELAY'), false, 'a leftover DELAY of the original is removed');

    await h.send('TopicN', 'y', { queueId: 1, reconsumeTimes: 15 });
    assert.equal((await sendBack(h.fake.puts.at(-1)!, 'GN', 0, undefined)).code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts.at(-1)!.topic, 'SCHEDULE_TOPIC_XXXX', '15 < 16: retried');
    await h.send('TopicN', 'z', { queueId: 1, reconsumeTimes: 16 });
    assert.equal((await sendBack(h.fake.puts.at(-1)!, 'GN', 0, undefined)).code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts.at(-1)!.topic, '%DLQ%GN', '16 ≥ 16: dead letter');
  });

  it('B23 a body of maxMessageSize - 10 is still stored after retry properties are added', async () => {
    h = await BrokerHarness.create();
    const body = Buffer.alloc(4 * 1024 * 1024 - 10, 7);
    assert.equal((await h.send('TopicBig', body, { tags: 'TagA', props: { KEYS: 'big' } })).code, ResponseCode.SUCCESS);
    const r = await sendBack(h.fake.puts[0]!, 'GBig');
    assert.equal(r.code, ResponseCode.SUCCESS);
    const retry = await deliverRetry();
    assert.equal(retry.body.length, body.length);
    assert.equal(retry.properties.get('RETRY_TOPIC'), 'TopicBig');
  });

  it('errors: unknown offset → 1 with remark; group missing with auto-create off → 26', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.CONSUMER_SEND_MSG_BACK, { offset: 123456, group: 'G', delayLevel: 0, originMsgId: 'x', originTopic: 'T', unitMode: false, maxReconsumeTimes: 16 });
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'look message by offset failed, 123456');
    await h.close();
    h = await BrokerHarness.create({ config: { autoCreateSubscriptionGroup: 'false' } });
    const r2 = await h.call(RequestCode.CONSUMER_SEND_MSG_BACK, { offset: 0, group: 'NoSuchGroup', delayLevel: 0, originMsgId: 'x', originTopic: 'T', unitMode: false });
    assert.equal(r2.code, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
  });
});
