import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../../src/common/time/clock.js';
import { BrokerStatsManager, Stats, javaDoubleText } from '../../../../src/broker/stats/broker-stats-manager.js';
import { StatsItem } from '../../../../src/broker/stats/stats-item.js';

test('StatsItem: minute window = oldest of the last 7 ten-second samples to now; hour and day keep older history', () => {
  const clock = new ManualClock(1_000_000);
  const item = new StatsItem('TOPIC_PUT_NUMS', 'T', clock.nowMs());
  item.add(10, 2);
  clock.advance(5_000);
  assert.deepEqual(item.stats('minute', clock.nowMs()), { sum: 10, tps: 2, avgpt: 5, times: 2 });
  // 12 samples 10 s apart, 1 message each: the minute window forgets the first ones
  for (let i = 0; i < 12; i++) {
    clock.advance(10_000);
    item.add(1, 1);
    item.sample(clock.nowMs());
  }
  const minute = item.stats('minute', clock.nowMs());
  assert.equal(minute.sum, 6, 'the 7 kept samples span the last 6 additions');
  assert.equal(minute.tps, 0.1);
  assert.equal(item.stats('hour', clock.nowMs()).sum, 22, 'no 10-min sample yet: hour counts from creation');
  assert.equal(item.stats('day', clock.nowMs()).sum, 22);
});

test('BrokerStatsManager: put/get counters per topic and topic@group, TPS text over 10/60/600 s, unknown stats undefined', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const m = new BrokerStatsManager(clock, 'DefaultCluster');
  for (let s = 0; s < 20; s++) {
    clock.advance(1000);
    m.recordPut('T', 1, 200);
    m.sample();
  }
  m.recordGet('G', 'T', 5, 1000);
  m.recordGet('G', 'T', 0, 0);
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_NUMS, 'T')!.value, 20);
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_SIZE, 'T')!.value, 4000);
  assert.equal(m.getStatsItem(Stats.GROUP_GET_NUMS, 'T@G')!.value, 5);
  assert.equal(m.getStatsItem(Stats.BROKER_PUT_NUMS, 'DefaultCluster')!.value, 20);
  assert.equal(m.getStatsItem(Stats.BROKER_PUT_NUMS, 'DefaultCluster')!.times, 0, 'Apache incBrokerPutNums adds the value only');
  assert.deepEqual(m.stats(Stats.BROKER_PUT_NUMS, 'DefaultCluster', 'minute').avgpt, 0, 'so 315 shows avgpt 0');
  assert.equal(m.getStatsItem(Stats.BROKER_GET_NUMS, 'DefaultCluster')!.value, 5);
  assert.equal(m.getStatsItem(Stats.BROKER_GET_NUMS, 'DefaultCluster')!.times, 0, 'Apache incBrokerGetNums adds the value only');
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_NUMS, 'T')!.times, 20, 'topic items count calls');
  assert.equal(m.getStatsItem(Stats.GROUP_GET_NUMS, 'T@other'), undefined);
  assert.equal(m.tpsTopicPutNums('T'), 20 / 19, 'the counter exists since the first put, 19 s ago');
  assert.equal(m.tpsText('putMessageTimesTotal'), '1.0 1.0 1.0');
  assert.deepEqual([m.totals.getFoundTimes, m.totals.getMissTimes, m.totals.getTransferredMsgCount], [1, 1, 5]);
  assert.equal(m.dayTotals().msgPutTotalTodayNow, 20);
  assert.equal(m.dayTotals().msgPutTotalTodayMorning, 0);
  clock.advance(24 * 3600_000);
  m.sample();
  assert.equal(m.dayTotals().msgPutTotalTodayMorning, 20, 'midnight passed: today-morning total recorded');
  assert.equal(m.dayTotals().msgGetTotalTodayMorning, 5);
  m.onTopicDeleted('T');
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_NUMS, 'T'), undefined);
  assert.equal(m.getStatsItem(Stats.GROUP_GET_NUMS, 'T@G'), undefined);
  assert.equal(javaDoubleText(3), '3.0');
});

test('BrokerStatsManager: msgPutTotal*/msgGetTotal* are BROKER_*_NUMS_WITHOUT_SYSTEM_TOPIC (Apache BrokerStats), a send-back counts only through the schedule topic', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const m = new BrokerStatsManager(clock, 'C1');
  m.recordPut('T', 3, 300);
  m.recordPut('RMQ_SYS_TRANS_HALF_TOPIC', 1, 100);
  m.recordPut('rmq_sys_wheel_timer', 2, 200);
  m.recordGet('G', 'T', 2, 200);
  m.recordGet('G', 'SCHEDULE_TOPIC_XXXX', 4, 400);
  assert.equal(m.getStatsItem(Stats.BROKER_PUT_NUMS, 'C1')!.value, 6);
  assert.equal(m.getStatsItem(Stats.BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC, 'C1')!.value, 3);
  assert.equal(m.getStatsItem(Stats.BROKER_GET_NUMS, 'C1')!.value, 6);
  assert.equal(m.getStatsItem(Stats.BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC, 'C1')!.value, 2);
  assert.equal(m.dayTotals().msgPutTotalTodayNow, 3, 'system-topic puts excluded');
  assert.equal(m.dayTotals().msgGetTotalTodayNow, 2);
  assert.equal(m.totals.putMessageTimesTotal, 6, 'the store totals keep every put');

  m.recordSendBackPut('%DLQ%G', 120);
  m.recordSendBackPut('SCHEDULE_TOPIC_XXXX', 150);
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_NUMS, '%DLQ%G'), undefined, 'a DLQ copy is not a topic put');
  assert.deepEqual([m.getStatsItem(Stats.TOPIC_PUT_NUMS, 'SCHEDULE_TOPIC_XXXX')!.value, m.getStatsItem(Stats.TOPIC_PUT_NUMS, 'SCHEDULE_TOPIC_XXXX')!.times], [1, 1]);
  assert.equal(m.getStatsItem(Stats.TOPIC_PUT_SIZE, 'SCHEDULE_TOPIC_XXXX')!.value, 150);
  assert.equal(m.getStatsItem(Stats.BROKER_PUT_NUMS, 'C1')!.value, 6, 'never BROKER_PUT_NUMS');
  assert.deepEqual([m.totals.putMessageTimesTotal, m.totals.putMessageSizeTotal], [8, 870]);
});
